"""The manager's parts, built from its settings: the sandbox pool and its backend, the
execution service, the egress proxy, the skill libraries (the directories it publishes, and
the whole library its front door offers) and the MCP front door.

``mcp_manager.app`` calls these from ``create_app`` (the checks that must fail at once) and
from its start-up, in order; nothing here serves a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mcp_manager.backends import LocalBackend, SandboxBackend, StaticBackend
from mcp_manager.containment import Containment
from mcp_manager.egress import EgressService, Resolver
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.executions import ExecutionService
from mcp_manager.mcp_server import SkillMcp
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool, WarmPool
from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.sandbox import SkillOwnership, publish_library
from skillweave.skills import SkillLibrary, SkillRegistry, process_folder, reloading
from skillweave.storage import ArtifactStore, store_identity
from skillweave.storage.audit import AuditLog

__all__ = [
    "announced",
    "announced_store",
    "check_backend",
    "execution_service",
    "front_door",
    "offered_library",
    "opened_egress",
    "opened_library",
    "reloading_directories",
    "sandbox_pool",
    "settle_isolation",
]

logger = logging.getLogger("skillweave.manager")


def _script_python() -> str:
    """The python3 local sandboxes run scripts with (the executor prefers the system's), so
    environments are built for the interpreter that will import them."""
    if os.path.exists("/usr/bin/python3"):
        return "/usr/bin/python3"
    return shutil.which("python3") or sys.executable


def check_backend(settings: Settings) -> None:
    """What the configured backend needs, checked when the app is made: a missing setting is
    one clear line then, not a start-up that fails inside the server."""
    sandbox = settings.sandbox
    if sandbox.backend == "kubernetes":
        from mcp_manager.kubernetes import KubernetesPool

        KubernetesPool.check(sandbox.kubernetes, isolation=sandbox.isolation)
    elif sandbox.backend == "static":
        _static_executor(settings)


def _static_executor(settings: Settings) -> tuple[str, str]:
    """The static backend's executor: its URL and token, both required (settings read from
    the environment were checked already; these may have been built in code)."""
    sandbox = settings.sandbox
    problem = sandbox.static_backend_problem()
    if problem is not None or not sandbox.executor_url or sandbox.executor_token is None:
        raise ConfigError(f"invalid setting: {problem}")
    return sandbox.executor_url, sandbox.executor_token.get_secret_value()


def _backend(settings: Settings) -> SandboxBackend:
    """The process backend of a local or static pool."""
    sandbox = settings.sandbox
    if sandbox.backend != "static":
        return LocalBackend(
            start_timeout=sandbox.start_timeout_seconds,
            isolation=sandbox.isolation,
            executions=sandbox.executions_per_executor,
        )
    url, token = _static_executor(settings)
    return StaticBackend(
        url=url,
        token=token,
        start_timeout=sandbox.start_timeout_seconds,
        isolation=sandbox.isolation,
    )


def sandbox_pool(
    settings: Settings,
    backend: SandboxBackend | None,
    metrics: ManagerMetrics,
    containment: Containment | None = None,
) -> SandboxPool:
    """The pool of the configured backend (`backend`, when given, for a local-style pool)."""
    sandbox = settings.sandbox
    if backend is None and sandbox.backend == "kubernetes":
        from mcp_manager.kubernetes import KubernetesPool  # the client loads only when used

        return KubernetesPool(
            sandbox.kubernetes,
            target=sandbox.pool_target,
            maximum=sandbox.pool_max,
            claim_timeout=sandbox.claim_timeout_seconds,
            start_timeout=sandbox.start_timeout_seconds,
            metrics=metrics,
            manager_id=sandbox.manager_identity,  # the one id of its claims, logs and metrics
        )
    return WarmPool(
        backend if backend is not None else _backend(settings),
        target=sandbox.pool_target,
        maximum=sandbox.pool_max,
        claim_timeout=sandbox.claim_timeout_seconds,
        metrics=metrics,
        containment=containment,
    )


async def settle_isolation(pool: SandboxPool, containment: Containment) -> None:
    """Learn the mode in force before serving, where it can be known before the first sandbox:
    a local pool's zygote settles it (it would start now anyway, to fill the pool), and a pod
    template may name one. Otherwise sandboxes report it as they come (`Containment`)."""
    backend = getattr(pool, "backend", None)
    if isinstance(backend, LocalBackend):
        containment.observe(await backend.settled_isolation())
    template = getattr(pool, "template", None)
    if template is not None:
        containment.observe(template.isolation)


def execution_service(
    settings: Settings,
    store: ArtifactStore,
    pool: SandboxPool,
    metrics: ManagerMetrics,
    *,
    egress: EgressService | None = None,
    registry: SkillRegistry | None = None,
    containment: Containment | None = None,
) -> ExecutionService:
    """The execution service over `pool`, with the settings' secrets, limits, claims,
    environments, trust policy and audit log."""
    return ExecutionService(
        containment=containment,
        egress=egress,
        ownership=SkillOwnership(store, registry or ()),
        store=store,
        pool=pool,
        metrics=metrics,
        skill_secrets={
            skill: {name: value.get_secret_value() for name, value in values.items()}
            for skill, values in settings.sandbox.skill_secrets.items()
        },
        default_timeout=settings.sandbox.timeout_seconds,
        claim_lease=settings.sandbox.claim_lease_seconds,
        clock_skew=settings.sandbox.clock_skew_seconds,
        manager_id=settings.sandbox.manager_identity,
        environments=EnvironmentBuilder(
            settings.sandbox.environments,
            store,
            python=_script_python(),
            claim_lease=settings.sandbox.claim_lease_seconds,
        ),
        trust=settings.skills.trust,
        audit=AuditLog.from_settings(
            settings.audit, store, actor=f"manager@{socket.gethostname()}"
        ),
    )


def announced(settings: Settings, metrics: ManagerMetrics) -> Containment:
    """Say at start-up which manager this is (the log, ``skillweave_manager_info``); returns
    its :class:`~mcp_manager.containment.Containment`, which says how scripts are contained
    once that is known (at once when the setting names a mode)."""
    manager_id = settings.sandbox.manager_identity
    metrics.manager.labels(manager_id=manager_id).set(1)
    logger.info("manager %s", manager_id)
    return Containment(settings.sandbox.isolation, metrics)


async def announced_store(settings: Settings, store: ArtifactStore) -> str:
    """The store's id, logged beside this manager's: every process of a deployment must show
    the same one (``/healthz`` says it, for workers to compare)."""
    store_id = await store_identity(store)
    logger.info("manager %s on store %s", settings.sandbox.manager_identity, store_id)
    return store_id


async def opened_egress(
    settings: Settings,
    store: ArtifactStore,
    metrics: ManagerMetrics,
    resolver: Resolver | None = None,
) -> EgressService:
    """The egress proxy, listening (approvals are read per run: in the settings, and those
    made over the API in the store)."""
    egress = EgressService(settings.sandbox.egress, store=store, metrics=metrics, resolver=resolver)
    await egress.start()
    address = settings.sandbox.egress.gateway_address
    if settings.sandbox.backend == "kubernetes" and address in ("localhost", "127.0.0.1", "::1"):
        logger.warning(
            "sandbox pods cannot reach the egress gateway at %s: skills approved for the "
            "network will get 502 from it; set SANDBOX__EGRESS__GATEWAY_HOST=0.0.0.0, "
            "SANDBOX__EGRESS__GATEWAY_PORT and SANDBOX__EGRESS__ADVERTISE_HOST (the pod's IP)",
            address,
        )
    return egress


async def opened_library(
    settings: Settings, store: ArtifactStore, *, publish: bool
) -> tuple[SkillLibrary, SkillRegistry]:
    """The configured library, scanned, its packages published with `publish`."""
    library = SkillLibrary(settings.skills)
    registry = await asyncio.to_thread(library.refresh)
    if publish:
        published = await publish_library(store, registry)
        logger.info("published %d skill packages", published)
    return library, registry


def reloading_directories(
    settings: Settings,
    library: SkillLibrary,
    store: ArtifactStore,
    *,
    publish: bool,
    service: ExecutionService,
) -> contextlib.AbstractAsyncContextManager[None]:
    """The directory library's changes reaching the execution service (the versions its
    skills' secrets bind to) and, with `publish`, the store, every ``SKILLS__RELOAD_SECONDS``."""

    async def reloaded(registry: SkillRegistry) -> None:
        service.use_registry(registry)  # the versions its directory skills' secrets bind to
        if publish:
            await publish_library(store, registry)

    return reloading(library, reloaded, every=settings.skills.reload_seconds)


@asynccontextmanager
async def offered_library(settings: Settings, store: ArtifactStore) -> AsyncIterator[SkillLibrary]:
    """What the MCP front door offers: the whole library, the directories and the store's
    skills (installed, uploaded, published by agents), as every other door sees it. The
    store's skills are unpacked into a folder of this process's own, removed at the end.
    (Script runs bind secrets and approvals by the directory library above, and by the
    store's records for the rest: ``skillweave.sandbox.bindings``.)"""
    folder = process_folder(settings.skills.uploaded_dir, "manager")
    try:
        yield SkillLibrary(settings.skills, store=store, folder=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def front_door(
    settings: Settings, registry: SkillRegistry, store: ArtifactStore, service: ExecutionService
) -> tuple[SkillMcp, StreamableHTTPSessionManager]:
    """The MCP front door over `registry`, its scripts run by `service`, and its sessions."""
    door = SkillMcp(settings, registry=registry, store=store, run_script=service.execute)
    return door, StreamableHTTPSessionManager(app=door.server)
