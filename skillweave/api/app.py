"""The control-plane REST API: ``create_api``, and the checks every route shares.

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
Resources are routers of their own under ``/v1``; what their routes share is the app's
:class:`~skillweave.api.state.ApiState`, made when the app starts from what the start-up hooks
opened (:mod:`skillweave.api.state`) and read through :mod:`skillweave.api.deps`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from skillweave.api.deps import needs_of
from skillweave.api.problems import ApiProblem, install_problem_handlers, problem_response
from skillweave.api.request_metrics import install_metrics
from skillweave.api.state import ApiComposition, ApiState, StartupHook
from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, open_paths, token_accepted
from skillweave.readiness import Readiness
from skillweave.storage import ArtifactStore, open_store
from skillweave.telemetry import TraceMiddleware

__all__ = ["create_api"]

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
    on_startup: Sequence[StartupHook] = (),
    opening: Callable[[ApiComposition], contextlib.AbstractAsyncContextManager[object]]
    | None = None,
) -> FastAPI:
    """Build the API app.

    Args:
        settings: configuration; ``api.token`` is required.
        store: the artifact store (default: from ``settings.storage``).
        routers: resource routers to mount (each declares its own ``/v1/...`` prefix).
        on_startup: the resources' start-up hooks, given the composition in turn (each
            opens its service: ``open_skills``, ``open_agents``, ``open_runs(engine)``...).
        opening: what the app stands on, entered before `on_startup` and left after the app
            stops (the engine: ``skillweave.cli.api``); it may wait for what is not up yet
            (``skillweave.readiness``), the routes answering 503 + Retry-After meanwhile.

    Once the hooks have run, the app's :class:`~skillweave.api.state.ApiState` is made; a
    service a mounted route needs that no hook opened stops the start-up
    (:meth:`~skillweave.api.state.ApiComposition.complete`).
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
    async def set_up(
        app: FastAPI, parts: ApiComposition, started: list[ApiState]
    ) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if opening is not None:  # may wait for the engine's dependencies
                await stack.enter_async_context(opening(parts))
            async with parts.resources:
                for hook in on_startup:
                    await hook(parts)
                state = parts.complete(needs_of(routers))  # or a composition error
                metrics.shown[:] = parts.metrics
                app.state.api = state
                started.append(state)
                yield

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_store = store if store is not None else open_store(settings.storage)
        parts = ApiComposition(settings=settings, store=the_store, readiness=app.state.readiness)
        started: list[ApiState] = []
        # The routes answer 503 (and /healthz says why) while the set-up waits.
        async with parts.readiness.serving(set_up(app, parts, started)):
            try:
                yield
            finally:  # the last records anchored in a checkpoint
                for state in started:
                    await state.audit.aclose()

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
    metrics = install_metrics(app, dependencies=[Depends(authorized)], responses=PROBLEM_RESPONSES)
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
