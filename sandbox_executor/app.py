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

Nothing of an /execute reaches the workspace before its body has ended: the manager sends the
body's last bytes only once the execution's claim is durable, and drops a request that did
not get the claim before its end, which leaves the executor ready (nothing ran).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Final

import fastapi.routing
from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.requests import ClientDisconnect

from sandbox_executor.errors import ExecutorBusyError, RequestRejectedError
from sandbox_executor.executor import Executor, ExecutorStatus
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import MAX_INPUT_FILES, iter_file
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, bearer_credentials, token_accepted
from skillweave.sandbox.models import ExecutorRequest, ExecutorResult, Isolation
from skillweave.skills.package import DEFAULT_MAX_BYTES
from skillweave.telemetry.tracing import TraceMiddleware

__all__ = ["CancelResult", "Health", "create_app", "prebuild"]

_MAX_REQUEST_FIELD_BYTES: Final = 1024 * 1024
_MAX_FORM_FIELDS: Final = 8
# extract_package refuses more than DEFAULT_MAX_BYTES uncompressed; a ZIP of that is no larger,
# but for its headers.
_MAX_PACKAGE_BYTES: Final = DEFAULT_MAX_BYTES + 4 * 1024 * 1024
# GET /files and DELETE /execute take no body.
_MAX_OTHER_BODY_BYTES: Final = 64 * 1024
_OPEN_PATHS: Final = ("/healthz",)

logger = logging.getLogger(__name__)


class Health(BaseModel):
    """``GET /healthz``."""

    status: ExecutorStatus
    isolation: Isolation


class CancelResult(BaseModel):
    """``DELETE /execute``: whether an execution was (or will be, on arrival) cancelled."""

    cancelled: bool
    status: ExecutorStatus


_prebuilt: list[FastAPI] = []
"""Route tables built ahead (`prebuild`), each for one `create_app` of this process."""


def prebuild() -> None:
    """Build the executor's route table now, for the next `create_app` of this process.

    The zygote calls it once: each executor it forks then finds its routes built (FastAPI
    inspects every endpoint's signature and models, a few milliseconds) and only adds its own
    executor, token and limits. Nothing of an executor is in the table: its endpoints read
    those from ``app.state``.
    """
    app = _routes()
    # FastAPI reads each endpoint's place in its source file on the endpoint's first request
    # (for error messages) and caches it by function: about 0.5 ms, which each forked
    # executor's one /execute would pay. Read here, the cache comes with the fork. A private
    # function, so only where it exists: without it, nothing but the time changes.
    extract = getattr(fastapi.routing, "_extract_endpoint_context", None)
    if callable(extract):
        for route in app.routes:
            if isinstance(route, APIRoute) and route.dependant.call is not None:
                extract(route.dependant.call)
    _prebuilt.append(app)


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

    app = _prebuilt.pop() if _prebuilt else _routes()
    app.router.lifespan_context = lifespan
    app.state.executor = executor
    app.state.tokens = [expected]
    # Added innermost first: the trace middleware ends up outermost (it joins the manager's
    # trace, when tracing), then the gate.
    app.add_middleware(
        RequestGate,
        tokens=[expected],
        open_paths=_OPEN_PATHS,
        max_body_bytes=_MAX_OTHER_BODY_BYTES,
        path_limits={"/execute": settings.max_body_bytes},
    )
    app.add_middleware(TraceMiddleware)
    return app


def _executor(request: Request) -> Executor:
    executor: Executor = request.app.state.executor
    return executor


# A coroutine, so FastAPI runs it inline: a plain function would go to a worker thread, and
# starting the thread pool would be the slowest step of a one-shot executor's call. A second
# line: the RequestGate has checked the same header before the body.
async def _require_token(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> None:
    if not token_accepted(bearer_credentials(authorization), request.app.state.tokens):
        raise HTTPException(
            status_code=401, detail=UNAUTHORIZED_DETAIL, headers={"WWW-Authenticate": "Bearer"}
        )


def _routes() -> FastAPI:
    """The executor's endpoints, with no executor yet (see `create_app`)."""
    app = FastAPI(
        title="skillweave sandbox executor", docs_url=None, redoc_url=None, openapi_url=None
    )
    authorized = [Depends(_require_token)]

    @app.get("/healthz")
    async def healthz(request: Request) -> Health:
        executor = _executor(request)
        return Health(status=executor.status, isolation=executor.isolation)

    @app.post("/execute", dependencies=authorized)
    async def execute(request: Request) -> ExecutorResult:
        executor = _executor(request)
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
        except ClientDisconnect:
            # The manager dropped the request before its end (it did not get the execution's
            # claim): nothing ran, and nobody is left to answer.
            logger.info("the request was dropped before its body ended; nothing ran")
            raise HTTPException(status_code=400, detail="the request ended early") from None
        finally:
            # Ready again when the request was refused before anything ran; else a no-op.
            executor.unclaim()

    @app.delete("/execute", dependencies=authorized)
    async def cancel(request: Request) -> CancelResult:
        executor = _executor(request)
        cancelled = await executor.cancel()
        return CancelResult(cancelled=cancelled, status=executor.status)

    @app.get("/files/{name:path}", dependencies=authorized)
    async def files(request: Request, name: str) -> StreamingResponse:
        try:
            fd = _executor(request).open_file(name)
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
