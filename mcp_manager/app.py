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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import shutil
import socket
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Final

from fastapi import Depends, FastAPI, HTTPException, Request, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcp_manager.backends import LocalBackend, SandboxBackend, StaticBackend
from mcp_manager.containment import Containment
from mcp_manager.egress import EgressService, Resolver
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.executions import ExecutionService, PreparedEnvironment
from mcp_manager.mcp_server import SkillMcp
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool, WarmPool, after_answer
from mcp_manager.records import ExecutionState
from skillweave.config import Settings
from skillweave.errors import (
    AuditUnavailableError,
    ConfigError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    ManagerRefusedError,
    PoolExhaustedError,
    SandboxLostError,
    SandboxStartError,
)
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, open_paths, token_accepted
from skillweave.readiness import Readiness
from skillweave.sandbox.bindings import SkillOwnership, check_bound_settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.packages import publish_library
from skillweave.sandbox.problems import (
    PROBLEM_JSON,
    FieldProblem,
    Problem,
    ProblemCode,
    media_type_refusal,
)
from skillweave.skills import SkillLibrary, SkillRegistry
from skillweave.skills.library import process_folder
from skillweave.skills.reload import reloading
from skillweave.storage import open_store
from skillweave.storage.audit import AuditLog
from skillweave.storage.base import ArtifactStore
from skillweave.storage.identity import store_identity
from skillweave.storage.reachable import store_ready
from skillweave.telemetry.tracing import TraceMiddleware

__all__ = ["ManagerState", "create_app"]

logger = logging.getLogger("skillweave.manager")


@dataclass
class ManagerState:
    """What the routes share: the pool, the execution service, the metrics and the isolation
    in force."""

    pool: SandboxPool
    service: ExecutionService
    metrics: ManagerMetrics
    store: ArtifactStore
    store_id: str
    containment: Containment


_bearer = HTTPBearer(auto_error=False)


# Dependencies are coroutines: FastAPI runs plain functions in a worker thread, a hop that
# costs more than the check itself (and, in a fresh process, starts the thread pool).
async def _state(request: Request) -> ManagerState:
    state: ManagerState | None = request.app.state.manager
    if state is None:  # still waiting for the store: come back (the client waits)
        raise _NotReadyError(request.app.state.readiness)
    return state


class _NotReadyError(Exception):
    """A route asked before the manager serves: answered by :func:`_not_ready`."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        super().__init__("the manager is not ready")


def _not_ready(readiness: Readiness) -> JSONResponse:
    """503 ``not_ready`` + Retry-After while the manager waits for what it needs (its
    ``/healthz`` says what, and since when): the sandbox client waits for it as for a manager
    that is down, and says what it waits for."""
    waits = "; ".join(wait.detail for wait in readiness.waiting_for()) or "its start-up"
    return _coded(
        ProblemCode.NOT_READY,
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "Manager not ready",
        f"waiting for {waits}",
        retry_after=readiness.retry_after(),
    )


# A second line: the RequestGate has checked the same header before the body was read.
async def _authorized(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    given = credentials.credentials.encode() if credentials is not None else b""
    if not token_accepted(given, [request.app.state.token]):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail=UNAUTHORIZED_DETAIL,
            headers={"WWW-Authenticate": "Bearer"},
        )


State = Annotated[ManagerState, Depends(_state)]
_SECURED = [Depends(_authorized)]


class EnvironmentRequest(BaseModel):
    """``POST /sandbox/environments``: which skill version to prepare."""

    skill: str = Field(min_length=1, max_length=64)
    version: str = Field(pattern=r"^[0-9a-f]{64}$")


class _McpEndpoint:
    """``/mcp``: the MCP front door (streamable HTTP). The app's RequestGate has checked the
    bearer token and caps the body, before this is called."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app.state.manager is None:  # still waiting for the store
            await _not_ready(self.app.state.readiness)(scope, receive, send)
            return
        await self.app.state.mcp.handle_request(scope, receive, send)


def _script_python() -> str:
    """The python3 local sandboxes run scripts with (the executor prefers the system's), so
    environments are built for the interpreter that will import them."""
    if os.path.exists("/usr/bin/python3"):
        return "/usr/bin/python3"
    return shutil.which("python3") or sys.executable


def _check_backend(settings: Settings) -> None:
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
            start_timeout=sandbox.start_timeout_seconds, isolation=sandbox.isolation
        )
    url, token = _static_executor(settings)
    return StaticBackend(
        url=url,
        token=token,
        start_timeout=sandbox.start_timeout_seconds,
        isolation=sandbox.isolation,
    )


def _pool(
    settings: Settings,
    backend: SandboxBackend | None,
    metrics: ManagerMetrics,
    containment: Containment | None = None,
) -> SandboxPool:
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


async def _settle_isolation(pool: SandboxPool, containment: Containment) -> None:
    """Learn the mode in force before serving, where it can be known before the first sandbox:
    a local pool's zygote settles it (it would start now anyway, to fill the pool), and a pod
    template may name one. Otherwise sandboxes report it as they come (`Containment`)."""
    backend = getattr(pool, "backend", None)
    if isinstance(backend, LocalBackend):
        containment.observe(await backend.settled_isolation())
    template = getattr(pool, "template", None)
    if template is not None:
        containment.observe(template.isolation)


def _service(
    settings: Settings,
    store: ArtifactStore,
    pool: SandboxPool,
    metrics: ManagerMetrics,
    *,
    egress: EgressService | None = None,
    registry: SkillRegistry | None = None,
    containment: Containment | None = None,
) -> ExecutionService:
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


class _Json(JSONResponse):
    """JSON in ASCII: an answer about a refused request may quote text that UTF-8 cannot
    carry (a lone surrogate), which must come back as a clear 4xx, not a 500."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _problem(problem: Problem, *, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return _Json(
        problem.body(), status_code=problem.status, media_type=PROBLEM_JSON, headers=headers
    )


def _coded(
    code: ProblemCode,
    status_code: int,
    title: str,
    detail: str,
    *,
    retry_after: int | None = None,
    errors: list[FieldProblem] | None = None,
) -> JSONResponse:
    """A problem of `code`; `retry_after` goes in the body and in the Retry-After header."""
    problem = Problem.coded(
        code,
        status=status_code,
        title=title,
        detail=detail,
        retry_after=retry_after,
        errors=errors,
    )
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return _problem(problem, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    """The manager's errors as problem+json answers typed by a ``ProblemCode``, which the
    sandbox client turns back into them."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        refusal = media_type_refusal(request.headers.get("content-type"), exc.body)
        if refusal is not None:
            return _coded(ProblemCode.INVALID_REQUEST, 415, "Unsupported media type", refusal)
        errors = [
            FieldProblem(
                loc=[str(part) for part in error.get("loc", ())], msg=str(error.get("msg"))
            )
            for error in exc.errors()
        ]
        where = "; ".join(f"{'.'.join(e.loc)}: {e.msg}" for e in errors[:5])
        detail = f"the request is not valid: {where}"
        return _coded(ProblemCode.INVALID_REQUEST, 422, "Invalid request", detail, errors=errors)

    @app.exception_handler(_NotReadyError)
    async def _not_ready_yet(_: Request, exc: _NotReadyError) -> JSONResponse:
        return _not_ready(exc.readiness)

    @app.exception_handler(ExecutionRejectedError)
    async def _rejected(_: Request, exc: ExecutionRejectedError) -> JSONResponse:
        return _coded(ProblemCode.REJECTED, exc.status_code, "Request rejected", exc.reason)

    @app.exception_handler(ManagerRefusedError)
    async def _refused(_: Request, exc: ManagerRefusedError) -> JSONResponse:
        return _coded(ProblemCode.STORE_MISMATCH, exc.status, "Store mismatch", exc.reason)

    @app.exception_handler(ExecutionConflictError)
    async def _conflict(_: Request, exc: ExecutionConflictError) -> JSONResponse:
        return _coded(ProblemCode.CONFLICT, status.HTTP_409_CONFLICT, "Conflict", str(exc))

    @app.exception_handler(ExecutionInProgressError)
    async def _in_progress(_: Request, exc: ExecutionInProgressError) -> JSONResponse:
        return _coded(
            ProblemCode.IN_PROGRESS,
            status.HTTP_409_CONFLICT,
            "Execution in progress",
            str(exc),
            retry_after=math.ceil(exc.retry_after),
        )

    @app.exception_handler(SandboxLostError)
    async def _lost(_: Request, exc: SandboxLostError) -> JSONResponse:
        return _coded(
            ProblemCode.SANDBOX_LOST, status.HTTP_502_BAD_GATEWAY, "Sandbox lost", str(exc)
        )

    @app.exception_handler(SandboxStartError)
    async def _refused(_: Request, exc: SandboxStartError) -> JSONResponse:
        return _coded(
            ProblemCode.SANDBOX_REFUSED,
            status.HTTP_500_INTERNAL_SERVER_ERROR,
            "Sandboxes refuse to start",
            str(exc),
        )

    @app.exception_handler(AuditUnavailableError)
    async def _unrecorded(_: Request, exc: AuditUnavailableError) -> JSONResponse:
        # Refused before anything ran (executions' rule): the caller waits and asks again.
        return _coded(
            ProblemCode.AUDIT_UNAVAILABLE,
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "Audit log unavailable",
            str(exc),
            retry_after=math.ceil(exc.retry_after),
        )

    @app.exception_handler(PoolExhaustedError)
    async def _exhausted(_: Request, exc: PoolExhaustedError) -> JSONResponse:
        return _coded(
            ProblemCode.POOL_EXHAUSTED,
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "No sandbox free",
            str(exc),
            retry_after=exc.retry_after,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The routes' own refusals (401, 404 no such execution, 409 finished): no code.
        problem = Problem(
            title=_HTTP_TITLES.get(exc.status_code, "Error"),
            status=exc.status_code,
            detail=str(exc.detail),
        )
        return _problem(problem, headers=exc.headers)


_HTTP_TITLES: Final = {
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
}


def _announced(settings: Settings, metrics: ManagerMetrics) -> Containment:
    """Say at start-up which manager this is (the log, ``skillweave_manager_info``); returns
    its :class:`~mcp_manager.containment.Containment`, which says how scripts are contained
    once that is known (at once when the setting names a mode)."""
    manager_id = settings.sandbox.manager_identity
    metrics.manager.labels(manager_id=manager_id).set(1)
    logger.info("manager %s", manager_id)
    return Containment(settings.sandbox.isolation, metrics)


async def _announced_store(settings: Settings, store: ArtifactStore) -> str:
    """The store's id, logged beside this manager's: every process of a deployment must show
    the same one (``/healthz`` says it, for workers to compare)."""
    store_id = await store_identity(store)
    logger.info("manager %s on store %s", settings.sandbox.manager_identity, store_id)
    return store_id


def _result_answer(result: ExecutionResult, *, then: Callable[[], None]) -> Response:
    """`result` as the answer, serialized once (FastAPI would validate it again on the way
    out); `then` runs on the event loop once it is sent."""

    async def on_the_loop() -> None:  # a plain function would run in a worker thread
        then()

    return Response(
        result.model_dump_json(),
        media_type="application/json",
        background=BackgroundTask(on_the_loop),
    )


async def _opened_egress(
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


async def _opened_library(
    settings: Settings, store: ArtifactStore, *, publish: bool
) -> tuple[SkillLibrary, SkillRegistry]:
    """The configured library, scanned, its packages published with `publish`."""
    library = SkillLibrary(settings.skills)
    registry = await asyncio.to_thread(library.refresh)
    if publish:
        published = await publish_library(store, registry)
        logger.info("published %d skill packages", published)
    return library, registry


def _reloading(
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
async def _offered_library(settings: Settings, store: ArtifactStore) -> AsyncIterator[SkillLibrary]:
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


def _front_door(
    settings: Settings, registry: SkillRegistry, store: ArtifactStore, service: ExecutionService
) -> tuple[SkillMcp, StreamableHTTPSessionManager]:
    """The MCP front door over `registry`, its scripts run by `service`, and its sessions."""
    front_door = SkillMcp(settings, registry=registry, store=store, run_script=service.execute)
    return front_door, StreamableHTTPSessionManager(app=front_door.server)


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
    library, registry = await _opened_library(settings, the_store, publish=publish)
    metrics = ManagerMetrics()
    containment = _announced(settings, metrics)
    pool = _pool(settings, backend, metrics, containment)
    egress = await _opened_egress(settings, the_store, metrics, egress_resolver)
    service = _service(
        settings,
        the_store,
        pool,
        metrics,
        egress=egress,
        registry=registry,
        containment=containment,
    )
    try:
        async with _offered_library(settings, the_store) as offered:
            front_door, sessions = _front_door(settings, await offered.reload(), the_store, service)
            store_id = await _announced_store(settings, the_store)
            await pool.start()
            await _settle_isolation(pool, containment)
            async with (
                contextlib.aclosing(front_door),  # last out: its audit records anchored
                sessions.run(),
                _reloading(settings, library, the_store, publish=publish, service=service),
                reloading(offered, front_door.use_registry, every=settings.skills.reload_seconds),
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
        _check_backend(settings)

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
    _install_error_handlers(app)
    app.router.routes.append(Route("/mcp", _McpEndpoint(app)))

    @app.get("/healthz")
    async def healthz(request: Request) -> Response:
        state: ManagerState | None = request.app.state.manager
        if state is None:  # 503 until the store answers and the pool is started
            body = {
                "status": "starting",
                "manager_id": settings.sandbox.manager_identity,
                **readiness.health(),
            }
            return _Json(body, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)
        return _Json(
            {
                "status": "ok",
                "ready": True,
                "manager_id": settings.sandbox.manager_identity,
                # What a worker must agree with (its checks compare): the store, the limit.
                "store_id": state.store_id,
                "script_timeout_seconds": settings.sandbox.timeout_seconds,
                "pool": state.pool.status(),
                **state.containment.health(),
            }
        )

    @app.post("/sandbox/execute", dependencies=_SECURED, response_model=ExecutionResult)
    async def execute(body: ExecuteRequest, state: State) -> Response:
        # The used sandbox is destroyed and replaced once the answer is sent, not while it is.
        with after_answer() as release:
            return _result_answer(await state.service.execute(body), then=release)

    @app.get("/sandbox/executions/{execution_id:path}", dependencies=_SECURED)
    async def get_execution(execution_id: str, state: State) -> ExecutionState:
        found = await state.service.state(execution_id)
        if found is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such execution")
        return found

    @app.delete(
        "/sandbox/executions/{execution_id:path}",
        dependencies=_SECURED,
        status_code=status.HTTP_202_ACCEPTED,
    )
    async def cancel_execution(execution_id: str, state: State) -> dict[str, bool]:
        if await state.service.cancel(execution_id):
            return {"cancelled": True}
        if await state.service.state(execution_id) is not None:
            raise HTTPException(status.HTTP_409_CONFLICT, detail="the execution has finished")
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such execution")

    @app.get("/sandbox/pool", dependencies=_SECURED)
    async def pool_status(state: State) -> dict[str, object]:
        return dict(state.pool.status())

    @app.post("/sandbox/environments", dependencies=_SECURED)
    async def prepare_environment(body: EnvironmentRequest, state: State) -> PreparedEnvironment:
        """Build (once) a published skill version's environment, ahead of its first run."""
        return await state.service.prepare_environment(body.skill, body.version)

    @app.get("/metrics", dependencies=_SECURED)
    async def metrics(state: State) -> Response:
        return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
