"""The one composition of what agent runs run on: an engine opened from settings.

- :func:`open_engine` opens the engine of ``WORKFLOW__EXECUTION_ENGINE``:
  :func:`open_direct_engine` (the loop in this process, on :func:`open_services`) or
  :func:`open_temporal_engine` (a client of the configured Temporal server, whose workers run
  the runs with their own model and store). :func:`open_embedded_engine` is a Temporal engine
  on a stack of this process's own: a dev server (:mod:`skillweave.cli.temporal_server`), the
  services and a worker. Each yields an :class:`OpenedEngine`: the engine and what a run on
  it uses (store, model, how to follow it, where its UI is).
- :func:`open_services` composes the side effects of runs: the model provider, the settings'
  artifact store (:func:`open_store`), a manager (:func:`open_manager`: the configured one,
  or one started here with a local warm pool) and ``AgentServices`` over them.
- ``workflows.worker.running_worker`` runs the workflow and activities on those services:
  the embedded stack's worker (here) and ``skillweave worker``'s.

Everything is closed when its context ends, in the reverse order (a worker before the
services, the manager before the store, the dev server last). Callers: ``run`` and ``api``
(:func:`open_engine`), ``demo`` (direct or embedded), ``dev`` (embedded), ``worker``
(:func:`open_services`), ``runs`` (:func:`open_temporal_engine`),
``mcp``, ``sandbox run`` and ``skills build`` (:func:`open_store`, :func:`open_manager`).
temporalio and an in-process manager's web stack are imported only by what uses them.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Generic, TypeVar, assert_never

from pydantic import SecretStr

from skillweave.config import ModelSettings, Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.errors import ConfigError
from skillweave.llm import ModelProviders, describe_default, open_default_provider
from skillweave.sandbox import SandboxClient
from skillweave.skills import SkillLibrary, SkillRegistry
from skillweave.storage import ArtifactStore
from skillweave.storage import open_store as store_of_settings

if TYPE_CHECKING:
    from skillweave.agent import AgentEvent
    from skillweave.engines import Engine, WorkerMetrics
    from skillweave.engines.temporal import FollowNote, TemporalEngine

__all__ = [
    "POOL_TARGET",
    "LocalServices",
    "OpenedEngine",
    "SandboxManager",
    "open_direct_engine",
    "open_embedded_engine",
    "open_engine",
    "open_manager",
    "open_services",
    "open_store",
    "open_temporal_engine",
]

POOL_TARGET: Final = 2
"""Warm sandboxes of an in-process manager for runs: a skill's ``--help-json`` run and its
first script run come back to back, so a second ready sandbox saves a cold start."""

EngineT_co = TypeVar("EngineT_co", bound="Engine", covariant=True)


# --- the side effects of runs ----------------------------------------------------------------


@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[ArtifactStore]:
    """The settings' artifact store, closed when the context ends."""
    store = store_of_settings(settings.storage)
    try:
        yield store
    finally:
        if (close_store := getattr(store, "aclose", None)) is not None:
            await close_store()


@dataclass(frozen=True)
class SandboxManager:
    """A manager to run scripts on: where it is and a client of it."""

    url: str
    client: SandboxClient


@contextlib.asynccontextmanager
async def open_manager(
    settings: Settings, *, pool_target: int = 1
) -> AsyncIterator[SandboxManager]:
    """The configured manager (``SANDBOX__MANAGER_URL``), or one started here on loopback with
    a local warm pool of `pool_target` sandboxes, stopped (its sandboxes destroyed) when the
    context ends; with a client of it.

    Raises:
        ConfigError: a manager URL is configured without its token.
    """
    sandbox = settings.sandbox
    if sandbox.manager_url:
        if sandbox.manager_token is None:
            raise ConfigError("SANDBOX__MANAGER_URL is set but SANDBOX__MANAGER_TOKEN is not")
        token = sandbox.manager_token.get_secret_value()
        async with SandboxClient(sandbox.manager_url, token=token) as client:
            yield SandboxManager(url=sandbox.manager_url, client=client)
        return
    # The web stack is loaded only for a manager of this process's own.
    from mcp_manager.server import loopback_manager

    token = secrets.token_urlsafe(32)
    local = settings.model_copy(deep=True)
    local.sandbox = local.sandbox.model_copy(
        update={"manager_token": SecretStr(token), "pool_target": pool_target}
    )
    async with (
        loopback_manager(local, publish=False) as server,
        SandboxClient(server.url, token=token) as client,
    ):
        yield SandboxManager(url=server.url, client=client)


@dataclass(frozen=True)
class LocalServices:
    """What :func:`open_services` composed: the services, and the manager they talk to."""

    services: AgentServices
    manager_url: str


@contextlib.asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    registry: SkillRegistry,
    model: ModelSettings | None,
    pool_target: int = POOL_TARGET,
    store: ArtifactStore | None = None,
    metrics: WorkerMetrics | None = None,
) -> AsyncIterator[LocalServices]:
    """The side effects of runs, for every engine (the direct engine's, a worker's activities):
    the `model`'s provider (None: the settings' default, which a server may lack), the settings'
    artifact store (`store`, the caller's to close, if given) and a manager
    (:func:`open_manager`) with its client; their counts in `metrics` (default: their own).

    Raises:
        ConfigError: `model` cannot be opened, or a manager URL comes without its token.
    """
    async with contextlib.AsyncExitStack() as stack:
        provider = open_default_provider(model or settings.model, required=model is not None)
        models = ModelProviders(model or settings.model, default=provider)
        stack.push_async_callback(models.aclose)
        if store is None:
            store = await stack.enter_async_context(open_store(settings))
        manager = await stack.enter_async_context(open_manager(settings, pool_target=pool_target))
        services = AgentServices(
            settings=settings,
            registry=registry,
            store=store,
            provider=provider,
            model=None if provider is None else provider.name.partition(":")[2] or provider.name,
            sandbox=manager.client,
            models=models,
            metrics=metrics,
        )
        stack.push_async_callback(services.aclose)  # before the store closes: LIFO
        from skillweave.evals import summary  # not at `import skillweave.cli`

        services.authoring.evals = summary.draft_line(
            lambda: services.registry, store, settings=settings.skills
        )
        yield LocalServices(services=services, manager_url=manager.url)


# --- engines ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenedEngine(Generic[EngineT_co]):
    """An engine opened from settings, with what a run on it uses.

    Attributes:
        engine: the engine.
        store: where a run's inputs go and its outputs are read from (a worker's store too).
        settings: the settings it runs with (an embedded stack's point at its own server).
        model: the model its runs run with, as a result names it.
        follow: a run's events, with a follower's notes between them (waiting for a worker…).
        services: the services of this process its runs run on (None: a worker's).
        manager_url: the manager its runs' scripts run on (None: a worker's).
        ui_url: the Temporal UI its runs are shown in (None: the direct engine).
        workers: how many workers poll its task queue, when its runs run on workers of
            other processes (None: this process runs them).
    """

    engine: EngineT_co
    store: ArtifactStore
    settings: Settings
    model: str
    follow: Callable[[str], AsyncIterator[AgentEvent | FollowNote]]
    services: AgentServices | None = None
    manager_url: str | None = None
    ui_url: str | None = None
    workers: Callable[[], Awaitable[int]] | None = None

    @property
    def runs_elsewhere(self) -> bool:
        """Whether its runs run on other processes' workers, and so go on when this one ends."""
        return self.workers is not None

    def ui_link(self, run_id: str) -> str | None:
        """The run's page in the Temporal UI (None: the engine has no UI)."""
        if self.ui_url is None:
            return None
        from skillweave.engines.temporal import ui_link

        return ui_link(self.ui_url, self.settings.workflow.namespace, run_id)


@contextlib.asynccontextmanager
async def open_engine(
    settings: Settings,
    *,
    registry: SkillRegistry | None = None,
    model: ModelSettings | None = None,
) -> AsyncIterator[OpenedEngine[Engine]]:
    """The engine of ``settings.workflow.execution_engine``.

    Args:
        settings: every section; the workflow section picks the engine.
        registry: the skill library of a direct engine's runs (default: the whole library,
            ``SKILLS__DIRS`` and the store's skills unpacked into ``SKILLS__UPLOADED_DIR``,
            which must be this process's own: ``skills.library.owned_folder``); a Temporal
            engine's workers have their own.
        model: the model of a direct engine's runs (None: ``settings.model``, may be absent).

    Raises:
        ConfigError: see :func:`open_direct_engine` and :func:`open_temporal_engine`.
    """
    opening: contextlib.AbstractAsyncContextManager[OpenedEngine[Engine]]
    engine = settings.workflow.execution_engine
    match engine:
        case "direct":
            if registry is None:  # the whole library: directories and the store's skills
                async with open_store(settings) as store:
                    registry = await SkillLibrary(settings.skills, store=store).reload()
            opening = open_direct_engine(settings, registry=registry, model=model)
        case "temporal":
            opening = open_temporal_engine(settings)
        case _:
            assert_never(engine)
    async with opening as opened:
        yield opened


@contextlib.asynccontextmanager
async def open_direct_engine(
    settings: Settings,
    *,
    registry: SkillRegistry,
    model: ModelSettings | None,
    pool_target: int = POOL_TARGET,
) -> AsyncIterator[OpenedEngine[DirectEngine]]:
    """The loop in this process, on :func:`open_services` (a manager of its own unless
    ``SANDBOX__MANAGER_URL`` is set); the runs still running when the context ends are lost
    with it, so a caller cancels its runs first.

    Raises:
        ConfigError: see :func:`open_services`.
    """
    async with open_services(
        settings, registry=registry, model=model, pool_target=pool_target
    ) as local:
        services = local.services
        engine = DirectEngine(
            services,
            catalog_mode=settings.skills.catalog_mode,
            catalog_top_k=settings.skills.catalog_top_k,
        )
        yield OpenedEngine(
            engine=engine,
            store=services.store,
            settings=settings,
            model=describe_default(services.provider),
            follow=engine.follow,
            services=services,
            manager_url=local.manager_url,
        )


@contextlib.asynccontextmanager
async def open_temporal_engine(settings: Settings) -> AsyncIterator[OpenedEngine[TemporalEngine]]:
    """A client of ``settings.workflow``'s server, namespace and task queue, over the
    settings' store (which must be its workers' store): its runs run on those workers, with
    their model, and go on when this process ends.

    Raises:
        ConfigError: the server cannot be reached.
    """
    from skillweave.engines.temporal import connect_engine

    async with open_store(settings) as store:
        engine = await connect_engine(settings, store)
        yield OpenedEngine(
            engine=engine,
            store=store,
            settings=settings,
            model="set by the worker",
            follow=engine.follow,
            ui_url=settings.workflow.ui_url,
            workers=engine.workers,
        )


@contextlib.asynccontextmanager
async def open_embedded_engine(
    settings: Settings,
    *,
    registry: SkillRegistry,
    model: ModelSettings,
    port: int = 7233,
    ui_port: int | None = 8233,
    db_file: Path | None = None,
    log_file: Path | None = None,
    dynamic_config: Mapping[str, object] | None = None,
    pool_target: int = POOL_TARGET,
) -> AsyncIterator[OpenedEngine[TemporalEngine]]:
    """A Temporal engine on a stack of this process's own: a dev server, the services (a
    manager with a local warm pool unless ``SANDBOX__MANAGER_URL`` is set) and a worker (its
    metrics at ``/metrics`` when ``OBSERVABILITY__WORKER_METRICS_PORT`` is set); stopped in
    the reverse order (the worker first, cancelling the activities in flight; the server
    last). The settings it yields point at this server and its UI.

    Args:
        settings: the task queue and namespace (``workflow``), store, sandbox and skills.
        registry: the skill library the worker's runs use.
        model: the worker's model.
        port, ui_port, db_file, log_file, dynamic_config: see
            :func:`~skillweave.cli.temporal_server.dev_server`.
        pool_target: warm sandboxes of the in-process manager.

    Raises:
        ConfigError: see :func:`~skillweave.cli.temporal_server.dev_server` and
            :func:`open_services`.
    """
    from skillweave.cli.temporal_server import dev_server
    from skillweave.engines.temporal import connect_engine
    from workflows.worker import running_worker

    workflow = settings.workflow
    async with contextlib.AsyncExitStack() as stack:
        server = await stack.enter_async_context(
            dev_server(
                port=port,
                ui_port=ui_port,
                db_file=db_file,
                namespace=workflow.namespace,
                log_file=log_file,
                dynamic_config=dynamic_config,
            )
        )
        on_server = workflow.model_copy(
            update={"temporal_address": server.address, "ui_url": server.ui_url or workflow.ui_url}
        )
        here = settings.model_copy(update={"workflow": on_server})
        local = await stack.enter_async_context(
            open_services(here, registry=registry, model=model, pool_target=pool_target)
        )
        engine = await connect_engine(here, local.services.store)
        await stack.enter_async_context(running_worker(engine.client, local.services, here))
        yield OpenedEngine(
            engine=engine,
            store=local.services.store,
            settings=here,
            model=describe_default(local.services.provider),
            follow=engine.follow,
            services=local.services,
            manager_url=local.manager_url,
            ui_url=on_server.ui_url,
        )
