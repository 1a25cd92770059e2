"""Errors as ``application/problem+json`` (RFC 9457): one place maps everything a route can
raise to a status, a short title and a detail that names the problem; never a stack trace.
The body is the one :class:`Problem` model every service answers with
(``skillweave.sandbox.problems``, shared with the MCP manager and its client).

Routes raise :class:`ApiProblem` for their own refusals; skillweave's errors map by kind
(a skill that is not there is 404, a SKILL.md or package that is wrong is 422, a store that is
down is 503); request validation is 422 with the failing fields; anything else is logged with
its trace on the server and answered 500 with no detail. An audit log that cannot be written is
503 ``audit_unavailable`` (:data:`~skillweave.sandbox.problems.ProblemCode`, the manager's code
too) with Retry-After: the routes write their record before the change it names, so that
answer means nothing was changed.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from skillweave.errors import (
    AgentSpecError,
    ArtifactNotFoundError,
    AuditEntryError,
    AuditLogError,
    ConfigError,
    InvalidKeyError,
    PackageError,
    ResourceError,
    ResourceNotFoundError,
    SignatureError,
    SkillError,
    SkillFormatError,
    SkillNameTakenError,
    SkillNotFoundError,
    SkillScanError,
    SkillUnavailableError,
    SkillweaveError,
    StorageError,
)
from skillweave.sandbox import (
    AUDIT_RETRY_SECONDS,
    PROBLEM_JSON,
    FieldProblem,
    Problem,
    ProblemCode,
    audit_refusal,
    media_type_refusal,
)

__all__ = [
    "PROBLEM_JSON",
    "ApiProblem",
    "Problem",
    "install_problem_handlers",
    "problem",
    "problem_response",
]

logger = logging.getLogger("skillweave.api")

_TITLES: Final = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request too large",
    415: "Unsupported media type",
    422: "Invalid input",
    500: "Internal error",
    503: "Unavailable",
}


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its ``$defs`` put in place: a ``#/$defs/...`` reference would point
    into the OpenAPI document's root, where there are none."""
    definitions = schema.pop("$defs", {})

    def resolve(node: object) -> object:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(definitions[ref.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)  # type: ignore[return-value]


def problem_response(description: str) -> dict[str, Any]:
    """An OpenAPI ``responses`` entry for a problem+json answer.

    FastAPI's ``{"model": Problem}`` would document it as ``application/json``; the schema is
    inlined because no route returns a Problem, so it is not among the document's components.
    """
    schema = _inlined(Problem.model_json_schema(mode="serialization"))
    return {"description": description, "content": {PROBLEM_JSON: {"schema": schema}}}


class ApiProblem(Exception):
    """A refusal a route raises: becomes a problem+json answer with this status."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.title = title or _TITLES.get(status, "Error")
        self.detail = detail
        self.headers = headers
        super().__init__(detail)


def problem(
    status: int,
    detail: str | None = None,
    *,
    title: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
    code: ProblemCode | None = None,
    retry_after: float | None = None,
) -> JSONResponse:
    """A problem+json response; each of `errors` names a field (``loc``, ``msg``) and may
    carry more members (the data of the refusal); `code` types it (``type``, ``error``),
    `retry_after` is its member and ``Retry-After`` header."""
    body = Problem(
        type=code.type if code is not None else "about:blank",
        title=title or _TITLES.get(status, "Error"),
        status=status,
        detail=detail,
        errors=[FieldProblem.model_validate(e) for e in errors] if errors is not None else None,
        error=code.value if code is not None else None,
        retry_after=retry_after,
    )
    if retry_after is not None:
        headers = {**(headers or {}), "Retry-After": str(round(retry_after))}
    return JSONResponse(
        body.body(),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers=headers,
    )


def status_of(exc: SkillweaveError) -> int:
    """The HTTP status of one of skillweave's errors (the order matters where classes nest)."""
    match exc:
        case SkillNotFoundError() | ResourceNotFoundError() | ArtifactNotFoundError():
            return 404
        case SkillNameTakenError() | SkillUnavailableError():
            return 409
        case SkillFormatError() | PackageError() | ResourceError() | AgentSpecError():
            return 422
        case SkillScanError():  # what the operator's policy refuses, named
            return 422
        case SignatureError():
            return 403
        case InvalidKeyError() | ConfigError() | SkillError():
            return 400
        case StorageError():
            return 503
        case _:
            return 500


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error of `app` as problem+json."""

    @app.exception_handler(ApiProblem)
    async def _api_problem(_: Request, exc: ApiProblem) -> JSONResponse:
        return problem(exc.status, exc.detail, title=exc.title, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return problem(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        refusal = media_type_refusal(request.headers.get("content-type"), exc.body)
        if refusal is not None:
            return problem(415, refusal)
        errors = [
            {"loc": [str(part) for part in error.get("loc", ())], "msg": str(error.get("msg"))}
            for error in exc.errors()
        ]
        where = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        return problem(422, f"the request is not valid: {where}", errors=errors)

    @app.exception_handler(AuditEntryError)
    async def _unrecordable(_: Request, exc: AuditEntryError) -> JSONResponse:
        return problem(422, f"the request cannot be recorded in the audit log: {exc}")

    @app.exception_handler(AuditLogError)
    async def _audit(_: Request, exc: AuditLogError) -> JSONResponse:
        logger.error("refused: the audit log cannot be written: %s", exc)
        return problem(
            503,
            audit_refusal(exc, what="this change", so="nothing was changed"),
            title="Audit log unavailable",
            code=ProblemCode.AUDIT_UNAVAILABLE,
            retry_after=AUDIT_RETRY_SECONDS,
        )

    @app.exception_handler(SkillweaveError)
    async def _skillweave(_: Request, exc: SkillweaveError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            logger.error("request failed: %r", exc)
            return problem(status, "the server could not complete the request")
        return problem(status, str(exc))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error", exc_info=exc)
        return problem(500, "the server could not complete the request")
