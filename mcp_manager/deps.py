"""What the manager's routes depend on: :class:`ManagerState` (the parts they share, set once
the manager serves) as the ``State`` alias, and ``SECURED``, the bearer token check.

``mcp_manager.app`` sets ``app.state.manager`` (a :class:`ManagerState`, or None while the
manager waits for its store), ``app.state.readiness`` and ``app.state.token``; the routers of
``routes`` declare these dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mcp_manager.containment import Containment
from mcp_manager.executions import ExecutionService
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool
from mcp_manager.problem_answers import NotReadyError
from skillweave.gate import UNAUTHORIZED_DETAIL, token_accepted
from skillweave.storage import ArtifactStore

__all__ = ["SECURED", "ManagerState", "State"]


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
        raise NotReadyError(request.app.state.readiness)
    return state


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
"""The manager's parts, for a route that needs them (503 ``not_ready`` until it serves)."""
SECURED = [Depends(_authorized)]
"""The dependencies of every route that needs the manager's token."""
