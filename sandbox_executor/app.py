"""The executor's HTTP API, served on loopback (or the pod network) to the MCP manager only.

    GET    /healthz         no auth: {"status": "ready"|"busy"|"done", "isolation": ...}
    POST   /execute         multipart: ``request`` (ExecutorRequest JSON), ``package`` (the
                            skill ZIP), ``inputs`` (zero or more; filename = path under
                            inputs/) → ExecutorResult. 401 without the token, 409 once the
                            executor has taken its one execution, 422 for a request that does
                            not parse, 400 for anything else that cannot run.
    GET    /files/{name}    ``stdout``, ``stderr`` (the full captures) or a listed
                            ``outputs/...`` file, streamed; 404 for anything else.
    DELETE /execute         cancel: the process tree is killed at once and the pending
                            /execute answers ``cancelled: true``.

Every endpoint but /healthz needs ``Authorization: Bearer <token>``, compared in constant time
by :class:`skillweave.gate.RequestGate` before a byte of the body is read, which also caps
bodies (``/execute``: ``EXECUTOR__MAX_BODY_BYTES``; the other paths take none) and answers
401 and 413 unread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Final

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.middleware import Middleware

from sandbox_executor.errors import ExecutorBusyError, RequestRejectedError
from sandbox_executor.executor import Executor, ExecutorStatus
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import MAX_INPUT_FILES, iter_file
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, bearer_credentials, token_accepted
from skillweave.sandbox.models import ExecutorRequest, ExecutorResult, Isolation
from skillweave.skills.package import DEFAULT_MAX_BYTES
from skillweave.telemetry.tracing import TraceMiddleware

__all__ = ["CancelResult", "Health", "create_app"]

_MAX_REQUEST_FIELD_BYTES: Final = 1024 * 1024
_MAX_FORM_FIELDS: Final = 8
# extract_package refuses more than DEFAULT_MAX_BYTES uncompressed; a ZIP of that is no larger,
# but for its headers.
_MAX_PACKAGE_BYTES: Final = DEFAULT_MAX_BYTES + 4 * 1024 * 1024
# GET /files and DELETE /execute take no body.
_MAX_OTHER_BODY_BYTES: Final = 64 * 1024
_OPEN_PATHS: Final = ("/healthz",)


class Health(BaseModel):
    """``GET /healthz``."""

    status: ExecutorStatus
    isolation: Isolation


class CancelResult(BaseModel):
    """``DELETE /execute``: whether an execution was (or will be, on arrival) cancelled."""

    cancelled: bool
    status: ExecutorStatus


def create_app(
    *, token: str, workdir: Path | None = None, settings: ExecutorSettings | None = None
) -> FastAPI:
    """Build the executor app; the sandbox user and the isolation are decided here, at once.

    Args:
        token: The manager's bearer token; the only credential accepted.
        workdir: Where the executor makes its folder (default: the temp dir).
        settings: Default: read from ``EXECUTOR__*`` variables.

    Raises:
        ConfigError: `token` is empty.
        ExecutorError: The executor cannot start (see `Executor`).
    """
    if not token:
        raise ConfigError("the executor needs a bearer token (EXECUTOR__TOKEN)")
    expected = token.encode("utf-8")
    settings = settings or ExecutorSettings()
    executor = Executor(settings=settings, workdir=workdir)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Start the worker thread file work runs on now, not in the one request's time.
        await asyncio.to_thread(int)
        try:
            yield
        finally:
            await executor.close()

    app = FastAPI(
        title="skillweave sandbox executor",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        middleware=[
            Middleware(TraceMiddleware),  # joins the manager's trace, when tracing
            Middleware(
                RequestGate,
                tokens=[expected],
                open_paths=_OPEN_PATHS,
                max_body_bytes=_MAX_OTHER_BODY_BYTES,
                path_limits={"/execute": settings.max_body_bytes},
            ),
        ],
    )
    app.state.executor = executor

    # A coroutine, so FastAPI runs it inline: a plain function would go to a worker thread,
    # and starting the thread pool would be the slowest step of a one-shot executor's call.
    # A second line: the RequestGate has checked the same header before the body.
    async def require_token(authorization: Annotated[str | None, Header()] = None) -> None:
        if not token_accepted(bearer_credentials(authorization), [expected]):
            raise HTTPException(
                status_code=401, detail=UNAUTHORIZED_DETAIL, headers={"WWW-Authenticate": "Bearer"}
            )

    authorized = [Depends(require_token)]

    @app.get("/healthz")
    async def healthz() -> Health:
        return Health(status=executor.status, isolation=executor.isolation)

    @app.post("/execute", dependencies=authorized)
    async def execute(request: Request) -> ExecutorResult:
        try:
            ready_made = executor.claim()
        except ExecutorBusyError as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from exc
        if ready_made is not None:
            return ready_made
        try:
            # starlette answers a malformed or oversized multipart body with a 400 itself.
            async with request.form(
                # the package, its environment, and a request sent as a file
                max_files=MAX_INPUT_FILES + 3,
                max_fields=_MAX_FORM_FIELDS,
                max_part_size=_MAX_REQUEST_FIELD_BYTES,
            ) as form:
                parsed = await _parse_request(form)
                package = await _read_package(_one_file(form, "package"))
                inputs = [(upload.filename or "", upload.file) for upload in _inputs(form)]
                environment = _optional_file(form, "environment")
                return await executor.execute(
                    parsed,
                    package=package,
                    inputs=inputs,
                    environment=environment.file if environment is not None else None,
                )
        except RequestRejectedError as exc:
            raise HTTPException(status_code=exc.status_code, detail=exc.detail) from exc
        finally:
            # Ready again when the request was refused before anything ran; else a no-op.
            executor.unclaim()

    @app.delete("/execute", dependencies=authorized)
    async def cancel() -> CancelResult:
        cancelled = await executor.cancel()
        return CancelResult(cancelled=cancelled, status=executor.status)

    @app.get("/files/{name:path}", dependencies=authorized)
    async def files(name: str) -> StreamingResponse:
        try:
            fd = executor.open_file(name)
        except FileNotFoundError as exc:
            raise HTTPException(status_code=404, detail=f"no file {name!r}") from exc
        size = os.fstat(fd).st_size
        return StreamingResponse(
            iter_file(fd),
            media_type="application/octet-stream",
            headers={"Content-Length": str(size)},
        )

    return app


async def _parse_request(form: FormData) -> ExecutorRequest:
    field = form.get("request")
    if field is None:
        raise RequestRejectedError(
            "missing the 'request' field (ExecutorRequest JSON)", status_code=422
        )
    raw = await field.read() if isinstance(field, UploadFile) else field
    if isinstance(raw, bytes) and len(raw) > _MAX_REQUEST_FIELD_BYTES:
        raise RequestRejectedError("the 'request' field is too large", status_code=422)
    try:
        return ExecutorRequest.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'request'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise RequestRejectedError(f"bad 'request' field: {problems}", status_code=422) from exc


async def _read_package(upload: UploadFile) -> bytes:
    if upload.size is not None and upload.size > _MAX_PACKAGE_BYTES:
        raise RequestRejectedError(f"the package is over {_MAX_PACKAGE_BYTES} bytes")
    return await upload.read()


def _one_file(form: FormData, name: str) -> UploadFile:
    values = form.getlist(name)
    if len(values) != 1 or not isinstance(values[0], UploadFile):
        raise RequestRejectedError(f"expected exactly one {name!r} file")
    return values[0]


def _optional_file(form: FormData, name: str) -> UploadFile | None:
    values = form.getlist(name)
    if not values:
        return None
    return _one_file(form, name)


def _inputs(form: FormData) -> list[UploadFile]:
    uploads: list[UploadFile] = []
    for value in form.getlist("inputs"):
        if not isinstance(value, UploadFile):
            raise RequestRejectedError("'inputs' must be files whose filename is their path")
        uploads.append(value)
    return uploads
