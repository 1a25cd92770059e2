"""``skillweave api``: the control-plane REST API on the engine of the settings.

:func:`api_app` opens the engine with :func:`~skillweave.cli.compose.open_engine`: on the
direct engine the API executes runs in its own process, with the model of ``MODEL__*``, the
configured store and a manager (``SANDBOX__MANAGER_URL`` or one started here), and serves its
services' uploaded skills and worker metrics; on the temporal engine (the default) it starts
workflows that ``skillweave worker`` processes run (the store must be the workers' store).
It serves at once: the engine is opened as the app starts, once Temporal and the store answer
(waited for with back-off, :mod:`skillweave.cli.startup`; ``/healthz`` and the routes answer
503 meanwhile). Either way it starts without a default model (``MODEL__*`` unset or
unusable): a run whose agent names no model is then refused when it is submitted
(``skillweave.api.runs``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Final

import uvicorn
from fastapi import FastAPI

from skillweave.api import (
    ApiComposition,
    agents_router,
    create_api,
    include_worker_metrics,
    open_agents,
    open_runs,
    runs_router,
)
from skillweave.cli.compose import open_engine, open_store
from skillweave.cli.startup import dependencies_ready
from skillweave.config import Settings
from skillweave.readiness import Readiness
from skillweave.skills import owned_folder
from skillweave.storage import store_ready

_READY_POLL_SECONDS: Final = 0.05

__all__ = ["api_app", "serve_api"]


@contextlib.asynccontextmanager
async def api_app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The API app over the settings' engine, with what the engine needs open. It serves at
    once: its engine is opened as the app starts, once Temporal and the store answer (waited
    for, :mod:`skillweave.cli.startup`; ``/healthz`` and the routes answer 503 meanwhile)."""
    from skillweave.api import (
        network_router,
        open_evals,
        open_skills,
        registry_router,
        serve_uploaded_skills,
        skill_evals_router,
        skill_versions_router,
        skills_router,
    )

    # The store's skills are unpacked into a folder of this process's own, removed at the end.
    with owned_folder(settings, "api") as own:

        @contextlib.asynccontextmanager
        async def opening(parts: ApiComposition) -> AsyncIterator[None]:
            if own.workflow.execution_engine == "temporal":
                async with open_store(own) as store:
                    await dependencies_ready(own, store, readiness=parts.readiness)
            else:  # the direct engine: its runs need the store alone
                async with open_store(own) as store:
                    await store_ready(store, own.storage, readiness=parts.readiness)
            # A server may have no default model: each run's agent then names its own.
            async with open_engine(own) as opened:
                parts.store = opened.store
                await open_skills(parts)
                if opened.services is not None:  # runs run here: their skills and metrics too
                    await serve_uploaded_skills(opened.services)(parts)
                    await include_worker_metrics(opened.services.metrics)(parts)
                await open_agents(parts)
                await open_runs(opened.engine)(parts)
                await open_evals(opened.engine)(parts)
                yield

        yield create_api(
            own,
            routers=[
                skills_router,
                skill_versions_router,
                skill_evals_router,
                network_router,
                registry_router,
                agents_router,
                runs_router,
            ],
            opening=opening,
        )


async def serve_api(settings: Settings, *, on_ready: Callable[[str], None]) -> None:
    """Serve the API on ``API__HOST:API__PORT`` until cancelled.

    Raises:
        SkillweaveError: what stopped its start-up for good after it had begun to wait for
            Temporal or the store (a namespace that does not exist, a store that refuses it).
    """
    async with api_app(settings) as app:
        # log_config=None: uvicorn's records go to the process's handler (its format, its
        # redaction) instead of handlers of uvicorn's own.
        config = uvicorn.Config(
            app, host=settings.api.host, port=settings.api.port, log_level="info", log_config=None
        )
        server = uvicorn.Server(config)
        readiness: Readiness = app.state.readiness

        def stop(_: BaseException) -> None:
            server.should_exit = True

        readiness.on_failure(stop)
        serving = asyncio.ensure_future(server.serve())
        try:
            # The ready line comes once the socket listens: a request right after it is served.
            while not server.started and not serving.done():
                await asyncio.sleep(_READY_POLL_SECONDS)
            if server.started:
                on_ready(f"http://{settings.api.host}:{settings.api.port}")
            await serving
            if readiness.failure is not None:
                raise readiness.failure
        finally:
            if not serving.done():
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await serving
