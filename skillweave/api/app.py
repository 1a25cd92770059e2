"""The control-plane REST API: ``create_api`` and what every route shares.

Every path but ``GET /healthz`` and the OpenAPI document (``/openapi.json``, rendered at
``/docs`` and ``/redoc``) requires ``Authorization: Bearer <API__TOKEN>`` (or one of
``API__EXTRA_TOKENS``, for rotation), compared in constant time. The token and the body cap
(``API__MAX_JSON_BYTES``, uploads ``API__MAX_UPLOAD_BYTES``) are checked by
:class:`skillweave.gate.RequestGate` before any byte of the body is read; the routes check the
token again, as a second line. Errors are problem+json (:mod:`skillweave.api.problems`).
Resources are routers of their own under ``/v1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from skillweave.api.metrics import install_metrics
from skillweave.api.problems import ApiProblem, install_problem_handlers, problem_response
from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, open_paths, token_accepted
from skillweave.storage import open_store
from skillweave.storage.base import ArtifactStore
from skillweave.telemetry.tracing import TraceMiddleware

__all__ = ["ApiState", "create_api", "state_of"]

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
}


@dataclass
class ApiState:
    """What the routes share (``request.app.state.api``)."""

    settings: Settings
    store: ArtifactStore
    extras: dict[str, Any] = field(default_factory=dict)


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
) -> FastAPI:
    """Build the API app.

    Args:
        settings: configuration; ``api.token`` is required.
        store: the artifact store (default: from ``settings.storage``).
        routers: resource routers to mount (each declares its own ``/v1/...`` prefix).
        on_startup: coroutines given the state once it exists (resources open their stores).
    """
    tokens = _tokens(settings)

    async def authorized(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> None:
        # A second line: the RequestGate has checked the same header before the body.
        given = credentials.credentials.encode() if credentials is not None else b""
        if not token_accepted(given, tokens):
            raise ApiProblem(401, UNAUTHORIZED_DETAIL, headers={"WWW-Authenticate": "Bearer"})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = ApiState(settings, store if store is not None else open_store(settings.storage))
        app.state.api = state
        for hook in on_startup:
            await hook(state)
        yield

    app = FastAPI(
        title="skillweave control-plane API",
        version="1",
        lifespan=lifespan,
        responses={},
    )
    install_problem_handlers(app)
    app.add_middleware(
        RequestGate,
        tokens=tokens,
        open_paths=open_paths(app),
        max_body_bytes=settings.api.max_json_bytes,
        path_limits=dict.fromkeys(UPLOAD_PATHS, settings.api.max_upload_bytes),
    )
    # Metrics: requests by route and status (outside the gate: its refusals count too) and
    # GET /metrics behind the token.
    install_metrics(app, dependencies=[Depends(authorized)], responses=PROBLEM_RESPONSES)
    app.add_middleware(TraceMiddleware)  # outermost: a refused request is traced too

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """Liveness; needs no token."""
        return {"status": "ok"}

    for router in routers:
        app.include_router(router, dependencies=[Depends(authorized)], responses=PROBLEM_RESPONSES)
    return app
