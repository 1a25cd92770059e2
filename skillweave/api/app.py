"""The control-plane REST API: ``create_api`` and what every route shares.

``GET /healthz`` says whether the API serves yet: while it waits for its engine's dependencies
at start-up (``create_api``'s `opening`), it answers 503 with what it waits for, and so does
every route (with Retry-After).

Every path but ``GET /healthz`` requires ``Authorization: Bearer <API__TOKEN>`` (or one of
``API__EXTRA_TOKENS``, for rotation), compared in constant time; the OpenAPI document
(``/openapi.json``, rendered at ``/docs`` and ``/redoc``) too, unless ``API__DOCS_OPEN=true``
opens it (:func:`skillweave.gate.open_paths`). The token and the body cap
(``API__MAX_JSON_BYTES``, uploads ``API__MAX_UPLOAD_BYTES``) are checked by
:class:`skillweave.gate.RequestGate` before any byte of the body is read; the routes check the
token again, as a second line. Errors are problem+json (:mod:`skillweave.api.problems`).
Resources are routers of their own under ``/v1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from skillweave.api.metrics import install_metrics
from skillweave.api.problems import ApiProblem, install_problem_handlers, problem_response
from skillweave.config import Settings
from skillweave.engines.metrics import WorkerMetrics
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, open_paths, token_accepted
from skillweave.readiness import Readiness
from skillweave.skills import SkillRegistry
from skillweave.skills.stored import StoredSkills
from skillweave.storage import open_store
from skillweave.storage.audit import AuditLog
from skillweave.storage.base import ArtifactStore
from skillweave.telemetry.tracing import TraceMiddleware

if TYPE_CHECKING:
    from skillweave.api.agents import AgentStore
    from skillweave.api.runs import RunService

__all__ = ["ApiState", "create_api", "provided", "state_of"]

_T = TypeVar("_T")

_bearer = HTTPBearer(auto_error=False, description="API__TOKEN")

UPLOAD_PATHS: tuple[str, ...] = ("/v1/skills/upload", "/v1/runs")
"""Routes (exact paths) that take uploads, and so the larger body limit."""

PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: problem_response("Missing or wrong bearer token"),
    # The RequestGate answers before any route, so every route may say it.
    413: problem_response("The body is over the size limit"),
    422: problem_response("Invalid input"),
    # Every refusal is problem+json: this documents those a route does not name itself (the
    # 404s and 409s of agents and runs, a 400 for a key the store refuses, a 405, ...).
    "4XX": problem_response("Refused"),
    503: problem_response(
        "Unavailable: the API is starting (Retry-After), its store is down, or the audit log"
        " cannot record the change (type urn:skillweave:problem:audit_unavailable, Retry-After:"
        " nothing was changed)"
    ),
}


@dataclass
class ApiState:
    """What the routes share (``request.app.state.api``). The startup hooks of the resources
    an app is composed of fill their fields; a field a composition leaves empty is None.

    Attributes:
        settings: the configuration.
        store: the artifact store.
        stored_skills: uploaded skills (``open_skills``).
        directory_skills: the directory libraries, which the skill listing shows
            (``open_skills``; rescanned every ``SKILLS__RELOAD_SECONDS``).
        registry: the whole library runs are pinned against: directory skills and the enabled
            uploaded ones; rebuilt after every upload, switch or deletion, and when a rescan
            finds the folders changed (``open_skills``).
        skills_changed: rebuilds :attr:`registry` and tells :attr:`registry_listeners`.
        registry_listeners: told every new :attr:`registry` (in-process engines' services).
        environment_builds: registration builds in flight (kept so none is collected early).
        agents: the agent store (``open_agents``).
        runs: runs on the configured engine (``open_runs``).
        worker_metrics: the in-process worker's metrics, for ``/metrics``.
        resources: what startup hooks opened for the app's lifetime (background tasks),
            closed when it stops.
        audit: the skill audit log every lifecycle change is recorded in.
        readiness: whether the app serves yet, and what it waits for (``/healthz``).
    """

    settings: Settings
    store: ArtifactStore
    stored_skills: StoredSkills | None = None
    directory_skills: SkillRegistry | None = None
    registry: SkillRegistry | None = None
    skills_changed: Callable[[], Awaitable[None]] | None = None
    registry_listeners: list[Callable[[SkillRegistry], None]] = field(default_factory=list)
    environment_builds: set[asyncio.Task[None]] = field(default_factory=set)
    agents: AgentStore | None = None
    runs: RunService | None = None
    worker_metrics: WorkerMetrics | None = None
    resources: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    readiness: Readiness = field(default_factory=Readiness)
    _audit: AuditLog | None = None

    @property
    def audit(self) -> AuditLog:
        """The skill audit log (``AUDIT__``), as the API writes it."""
        if self._audit is None:
            actor = f"api@{socket.gethostname()}"
            self._audit = AuditLog.from_settings(self.settings.audit, self.store, actor=actor)
        return self._audit


def provided(value: _T | None, hook: str) -> _T:
    """`value`, a field of :class:`ApiState` a route needs; None means the app was composed
    without the startup hook that fills it, a programming error named here.

    Raises:
        RuntimeError: the field is empty.
    """
    if value is None:
        raise RuntimeError(f"the API was composed without {hook}")
    return value


async def state_of(request: Request) -> ApiState:
    """The app's shared state (a dependency; a coroutine, so it runs on the event loop)."""
    return request.app.state.api


def _tokens(settings: Settings) -> list[bytes]:
    api = settings.api
    if api.token is None:
        raise ConfigError("the API needs a token: set API__TOKEN")
    if not all(s.get_secret_value() for s in (api.token, *api.extra_tokens)):
        raise ConfigError("API__TOKEN and API__EXTRA_TOKENS cannot hold an empty token")
    return [s.get_secret_value().encode() for s in (api.token, *api.extra_tokens)]


def create_api(
    settings: Settings,
    *,
    store: ArtifactStore | None = None,
    routers: Sequence[APIRouter] = (),
    on_startup: Sequence[Callable[[ApiState], Any]] = (),
    opening: Callable[[ApiState], contextlib.AbstractAsyncContextManager[object]] | None = None,
) -> FastAPI:
    """Build the API app.

    Args:
        settings: configuration; ``api.token`` is required.
        store: the artifact store (default: from ``settings.storage``).
        routers: resource routers to mount (each declares its own ``/v1/...`` prefix).
        on_startup: coroutines given the state once it exists (resources open their stores).
        opening: what the app stands on, entered before `on_startup` and left after the app
            stops (the engine: ``skillweave.cli.api``); it may wait for what is not up yet
            (``skillweave.readiness``), the routes answering 503 + Retry-After meanwhile.
    """
    tokens = _tokens(settings)

    async def authorized(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> None:
        # A second line: the RequestGate has checked the same header before the body.
        given = credentials.credentials.encode() if credentials is not None else b""
        if not token_accepted(given, tokens):
            raise ApiProblem(401, UNAUTHORIZED_DETAIL, headers={"WWW-Authenticate": "Bearer"})

    async def ready(request: Request) -> None:
        readiness: Readiness = request.app.state.readiness
        if not readiness.ready:
            waits = "; ".join(wait.detail for wait in readiness.waiting_for()) or "starting"
            raise ApiProblem(
                503,
                f"the API is not ready: waiting for {waits}",
                title="Not ready",
                headers={"Retry-After": str(readiness.retry_after())},
            )

    @asynccontextmanager
    async def set_up(state: ApiState) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if opening is not None:  # may wait for the engine's dependencies
                await stack.enter_async_context(opening(state))
            async with state.resources:
                for hook in on_startup:
                    await hook(state)
                yield

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_store = store if store is not None else open_store(settings.storage)
        state = ApiState(settings, the_store, readiness=app.state.readiness)
        app.state.api = state
        # The routes answer 503 (and /healthz says why) while the set-up waits.
        async with state.readiness.serving(set_up(state)):
            try:
                yield
            finally:  # the last records anchored in a checkpoint
                if state._audit is not None:
                    await state._audit.aclose()

    app = FastAPI(
        title="skillweave control-plane API",
        version="1",
        lifespan=lifespan,
        responses={},
    )
    app.state.readiness = Readiness()  # whoever serves the app may hear of its failure
    install_problem_handlers(app)
    app.add_middleware(
        RequestGate,
        tokens=tokens,
        open_paths=open_paths(app, docs_open=settings.api.docs_open),
        max_body_bytes=settings.api.max_json_bytes,
        path_limits=dict.fromkeys(UPLOAD_PATHS, settings.api.max_upload_bytes),
    )
    # Metrics: requests by route and status (outside the gate: its refusals count too) and
    # GET /metrics behind the token.
    install_metrics(app, dependencies=[Depends(authorized)], responses=PROBLEM_RESPONSES)
    app.add_middleware(TraceMiddleware)  # outermost: a refused request is traced too

    @app.get(
        "/healthz",
        tags=["health"],
        responses={503: {"description": "Not ready: what the API waits for, since when"}},
    )
    async def healthz(request: Request) -> JSONResponse:
        """Readiness; needs no token. 200 ``{"status": "ok", "ready": true}`` once the API
        serves; 503 ``{"ready": false, "waiting_for": [{"on", "since", "detail"}]}`` while it
        waits for its engine's dependencies (Temporal, the store) at start-up."""
        readiness: Readiness = request.app.state.readiness
        if readiness.ready:
            return JSONResponse({"status": "ok", "ready": True})
        return JSONResponse({"status": "starting", **readiness.health()}, status_code=503)

    for router in routers:
        app.include_router(
            router,
            dependencies=[Depends(authorized), Depends(ready)],
            responses=PROBLEM_RESPONSES,
        )
    return app
