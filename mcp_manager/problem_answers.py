"""The manager's error answers: every error of its routes as problem+json typed by a
:class:`~skillweave.sandbox.problems.ProblemCode`, which the sandbox client turns back into
the error (``skillweave.sandbox.client``).

``mcp_manager.app`` installs :func:`install_error_handlers`; the routes' dependencies
(``deps``) raise :class:`NotReadyError` while the manager waits for its store, and the MCP
endpoint (``routes``) answers :func:`not_ready_answer` itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Final

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from skillweave.errors import (
    AuditUnavailableError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    ManagerRefusedError,
    PoolExhaustedError,
    SandboxLostError,
    SandboxStartError,
)
from skillweave.readiness import Readiness
from skillweave.sandbox import (
    PROBLEM_JSON,
    FieldProblem,
    Problem,
    ProblemCode,
    media_type_refusal,
)

__all__ = [
    "JsonAnswer",
    "NotReadyError",
    "install_error_handlers",
    "not_ready_answer",
]

_HTTP_TITLES: Final = {
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
}


class JsonAnswer(JSONResponse):
    """JSON in ASCII: an answer about a refused request may quote text that UTF-8 cannot
    carry (a lone surrogate), which must come back as a clear 4xx, not a 500."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class NotReadyError(Exception):
    """A route asked before the manager serves: answered by :func:`not_ready_answer`."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        super().__init__("the manager is not ready")


def _problem(problem: Problem, *, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JsonAnswer(
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


def not_ready_answer(readiness: Readiness) -> JSONResponse:
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


def install_error_handlers(app: FastAPI) -> None:
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

    @app.exception_handler(NotReadyError)
    async def _not_ready_yet(_: Request, exc: NotReadyError) -> JSONResponse:
        return not_ready_answer(exc.readiness)

    @app.exception_handler(ExecutionRejectedError)
    async def _rejected(_: Request, exc: ExecutionRejectedError) -> JSONResponse:
        return _coded(ProblemCode.REJECTED, exc.status_code, "Request rejected", exc.reason)

    @app.exception_handler(ManagerRefusedError)
    async def _store_mismatch(_: Request, exc: ManagerRefusedError) -> JSONResponse:
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
