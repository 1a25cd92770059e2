"""The MCP manager's HTTP API: ``create_app`` and its routes (DESIGN §6).

``POST /sandbox/execute`` runs a script exactly once per ``execution_id``;
``GET``/``DELETE /sandbox/executions/{id}`` read or cancel one; ``GET /sandbox/pool`` shows the
warm pool; ``GET /metrics`` is Prometheus text; ``/mcp`` is the MCP front door
(``mcp_server``, streamable HTTP); ``GET /healthz`` (200 once serving; 503
``{"ready": false, "waiting_for": [...]}`` while the manager waits for its store at start-up,
when every other route answers 503 ``not_ready`` + Retry-After) needs no token, and neither does the
OpenAPI document (``/openapi.json``, ``/docs``, ``/redoc``) when
``SANDBOX__MANAGER_DOCS_OPEN=true`` opens it (:func:`skillweave.gate.open_paths`).
Everything else requires ``Authorization: Bearer <SANDBOX__MANAGER_TOKEN>``, compared in
constant time by :class:`skillweave.gate.RequestGate` before a byte of the body is read; the
gate also caps every body at ``SANDBOX__MANAGER_MAX_BODY_BYTES`` and answers 401 and 413
unread.
At start-up the manager publishes the packages of its configured skill directories to the
store, so any skill it can see can be run by name and version. The front door offers the whole
library (``skillweave.skills.library``: the directories and the store's installed, uploaded
and agent-published skills), reloaded every ``SKILLS__RELOAD_SECONDS`` like every other door.

This module composes the app: its start-up and shutdown (the parts built by
``composition``), its state (``deps``), its routers (``routes``) and its error answers
(``problem_answers``). ``mcp_manager.server`` serves it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Route

from mcp_manager.backends import SandboxBackend
from mcp_manager.composition import (
    announced,
    announced_store,
    check_backend,
    execution_service,
    front_door,
    offered_library,
    opened_egress,
    opened_library,
    reloading_directories,
    sandbox_pool,
    settle_isolation,
)
from mcp_manager.deps import ManagerState
from mcp_manager.egress import Resolver
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.problem_answers import install_error_handlers
from mcp_manager.routes import ROUTERS, McpEndpoint
from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.gate import RequestGate, open_paths
from skillweave.readiness import Readiness
from skillweave.sandbox import check_bound_settings
from skillweave.skills import reloading
from skillweave.storage import ArtifactStore, open_store, store_ready
from skillweave.telemetry import TraceMiddleware

__all__ = ["create_app"]


def _checked_token(settings: Settings) -> bytes:
    """The manager's token, which it cannot start without.

    Raises:
        ConfigError: one line saying to set it.
    """
    if (
        settings.sandbox.manager_token is None
        or not settings.sandbox.manager_token.get_secret_value()
    ):
        raise ConfigError("the manager needs a token: set SANDBOX__MANAGER_TOKEN")
    return settings.sandbox.manager_token.get_secret_value().encode()


@asynccontextmanager
async def _set_up(
    app: FastAPI,
    settings: Settings,
    the_store: ArtifactStore,
    readiness: Readiness,
    *,
    backend: SandboxBackend | None,
    publish: bool,
    egress_resolver: Resolver | None,
) -> AsyncIterator[None]:
    """The manager's start-up, once the store answers (waited for: `readiness` says so), and
    its shutdown: the library published, the pool started, the front door open; the routes
    are served (``app.state.manager`` set) from then until the context ends."""
    await store_ready(the_store, settings.storage, readiness=readiness)
    library, registry = await opened_library(settings, the_store, publish=publish)
    metrics = ManagerMetrics()
    containment = announced(settings, metrics)
    pool = sandbox_pool(settings, backend, metrics, containment)
    egress = await opened_egress(settings, the_store, metrics, egress_resolver)
    service = execution_service(
        settings,
        the_store,
        pool,
        metrics,
        egress=egress,
        registry=registry,
        containment=containment,
    )
    try:
        async with offered_library(settings, the_store) as offered:
            door, sessions = front_door(settings, await offered.reload(), the_store, service)
            store_id = await announced_store(settings, the_store)
            await pool.start()
            await settle_isolation(pool, containment)
            async with (
                contextlib.aclosing(door),  # last out: its audit records anchored
                sessions.run(),
                reloading_directories(
                    settings, library, the_store, publish=publish, service=service
                ),
                reloading(offered, door.use_registry, every=settings.skills.reload_seconds),
            ):
                app.state.mcp = sessions
                app.state.manager = ManagerState(
                    pool, service, metrics, the_store, store_id, containment
                )
                try:
                    yield
                finally:
                    app.state.manager = None
    finally:
        await service.close()
        await pool.close()
        await egress.aclose()


def create_app(
    settings: Settings,
    *,
    store: ArtifactStore | None = None,
    backend: SandboxBackend | None = None,
    publish: bool = True,
    egress_resolver: Resolver | None = None,
) -> FastAPI:
    """Build the manager app.

    Args:
        settings: configuration; ``sandbox.manager_token`` is required.
        store: the artifact store (default: from ``settings.storage``).
        backend: where sandboxes come from (default: from ``settings.sandbox.backend``).
        publish: publish the configured skill library's packages at start-up.
        egress_resolver: the egress proxy's DNS lookup (default: the system's); tests give
            one that logs every name it is asked.
    """
    token = _checked_token(settings)
    check_bound_settings(settings.sandbox)  # every skill-keyed table names canonical skills
    if backend is None:
        check_backend(settings)

    readiness = Readiness()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The store may not be up yet: the manager answers (503, /healthz says why) while
        # its set-up waits for it.
        the_store = store if store is not None else open_store(settings.storage)
        setup = _set_up(
            app,
            settings,
            the_store,
            readiness,
            backend=backend,
            publish=publish,
            egress_resolver=egress_resolver,
        )
        async with readiness.serving(setup):
            yield

    app = FastAPI(title="skillweave MCP manager", lifespan=lifespan)
    app.state.settings = settings
    app.state.token = token
    app.state.readiness = readiness
    app.state.manager = None
    app.add_middleware(
        RequestGate,
        tokens=[token],
        open_paths=open_paths(app, docs_open=settings.sandbox.manager_docs_open),
        max_body_bytes=settings.sandbox.manager_max_body_bytes,
    )
    app.add_middleware(TraceMiddleware)  # outermost: a refused request is traced too
    install_error_handlers(app)
    app.router.routes.append(Route("/mcp", McpEndpoint(app)))
    for router in ROUTERS:
        app.include_router(router)
    return app
