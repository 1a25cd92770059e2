"""The manager's routes, one ``APIRouter`` per resource, and the MCP endpoint.

``health_routes`` (``GET /healthz``, no token), ``execution_routes`` (``POST
/sandbox/execute``, ``GET``/``DELETE /sandbox/executions/{id}``), ``pool_routes`` (``GET
/sandbox/pool``), ``environment_routes`` (``POST /sandbox/environments``) and
``metrics_routes`` (``GET /metrics``); :class:`McpEndpoint` serves ``/mcp``.
``mcp_manager.app`` includes them (:data:`ROUTERS`, in that order); their dependencies are
``deps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response, status
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.types import Receive, Scope, Send

from mcp_manager.deps import SECURED, ManagerState, State
from mcp_manager.executions import ExecutionState, PreparedEnvironment
from mcp_manager.pool import after_answer
from mcp_manager.problem_answers import JsonAnswer, not_ready_answer
from skillweave.config import Settings
from skillweave.readiness import Readiness
from skillweave.sandbox import ExecuteRequest, ExecutionResult

__all__ = [
    "ROUTERS",
    "EnvironmentRequest",
    "McpEndpoint",
    "environment_routes",
    "execution_routes",
    "health_routes",
    "metrics_routes",
    "pool_routes",
]

health_routes = APIRouter()
execution_routes = APIRouter(dependencies=SECURED)
pool_routes = APIRouter(dependencies=SECURED)
environment_routes = APIRouter(dependencies=SECURED)
metrics_routes = APIRouter(dependencies=SECURED)


class EnvironmentRequest(BaseModel):
    """``POST /sandbox/environments``: which skill version to prepare."""

    skill: str = Field(min_length=1, max_length=64)
    version: str = Field(pattern=r"^[0-9a-f]{64}$")


class McpEndpoint:
    """``/mcp``: the MCP front door (streamable HTTP). The app's RequestGate has checked the
    bearer token and caps the body, before this is called."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app.state.manager is None:  # still waiting for the store
            await not_ready_answer(self.app.state.readiness)(scope, receive, send)
            return
        await self.app.state.mcp.handle_request(scope, receive, send)


@health_routes.get("/healthz")
async def healthz(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    readiness: Readiness = request.app.state.readiness
    state: ManagerState | None = request.app.state.manager
    if state is None:  # 503 until the store answers and the pool is started
        body = {
            "status": "starting",
            "manager_id": settings.sandbox.manager_identity,
            **readiness.health(),
        }
        return JsonAnswer(body, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)
    return JsonAnswer(
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


@execution_routes.post("/sandbox/execute", response_model=ExecutionResult)
async def execute(body: ExecuteRequest, state: State) -> Response:
    # The used sandbox is destroyed and replaced once the answer is sent, not while it is.
    with after_answer() as release:
        return _result_answer(await state.service.execute(body), then=release)


@execution_routes.get("/sandbox/executions/{execution_id:path}")
async def get_execution(execution_id: str, state: State) -> ExecutionState:
    found = await state.service.state(execution_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such execution")
    return found


@execution_routes.delete(
    "/sandbox/executions/{execution_id:path}", status_code=status.HTTP_202_ACCEPTED
)
async def cancel_execution(execution_id: str, state: State) -> dict[str, bool]:
    if await state.service.cancel(execution_id):
        return {"cancelled": True}
    if await state.service.state(execution_id) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, detail="the execution has finished")
    raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such execution")


@pool_routes.get("/sandbox/pool")
async def pool_status(state: State) -> dict[str, object]:
    return dict(state.pool.status())


@environment_routes.post("/sandbox/environments")
async def prepare_environment(body: EnvironmentRequest, state: State) -> PreparedEnvironment:
    """Build (once) a published skill version's environment, ahead of its first run."""
    return await state.service.prepare_environment(body.skill, body.version)


@metrics_routes.get("/metrics")
async def metrics(state: State) -> Response:
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)


ROUTERS: Final = (health_routes, execution_routes, pool_routes, environment_routes, metrics_routes)
"""Every router of the manager, in the order the app includes them."""
