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

Nothing of an /execute runs before its body has ended. The manager sends the body's last two
bytes (the CRLF after the closing multipart boundary) only once the execution's claim is
durable, and drops a request that did not get the claim before its end. Meanwhile the executor
reads the parts, fills the workspace and makes the script's order, so that only the order is
left once the end arrives; a request dropped before its end has its workspace emptied again,
which leaves the executor ready (nothing ran).
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
from pydantic import BaseModel
from python_multipart.multipart import parse_options_header
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect

from sandbox_executor.channel import serve_channel
from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.executor import Executor, ExecutorStatus
from sandbox_executor.intake import (
    MAX_INPUTS,
    MAX_REQUEST_BYTES,
    Dropped,
    Refused,
    RunParts,
    check_package_size,
    parse_request,
    take_run,
)
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import iter_file
from skillweave.errors import ConfigError
from skillweave.gate import UNAUTHORIZED_DETAIL, RequestGate, bearer_credentials, token_accepted
from skillweave.sandbox import ExecutorRequest, ExecutorResult, Isolation
from skillweave.telemetry import TraceMiddleware

__all__ = ["CancelResult", "Health", "create_app", "prebuild"]

_MAX_FORM_FIELDS: Final = 8
# GET /files and DELETE /execute take no body.
_MAX_OTHER_BODY_BYTES: Final = 64 * 1024
_OPEN_PATHS: Final = ("/healthz",)
_MAX_EPILOGUE_BYTES: Final = 1024

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
    *,
    token: str,
    workdir: Path | None = None,
    settings: ExecutorSettings | None = None,
    channel: Path | None = None,
) -> FastAPI:
    """Build the executor app; the sandbox user and the isolation are decided here, at once.

    Args:
        token: The manager's bearer token; the only credential accepted.
        workdir: Where the executor makes its folder (default: the temp dir).
        settings: Default: read from ``EXECUTOR__*`` variables.
        channel: Where to listen for runs on a Unix socket as well (the run channel, for a
            manager on this host), from start-up to shutdown. ``app.state.channel`` says
            whether it does: a path too long for a socket leaves runs to HTTP.

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
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Start the worker thread file work runs on now, not in the one request's time.
        await asyncio.to_thread(int)
        server = None
        if channel is not None:
            try:
                server = await serve_channel(
                    channel,
                    executor=executor,
                    tokens=[expected],
                    max_body_bytes=settings.max_body_bytes,
                )
                app.state.channel = channel
            except OSError as exc:
                logger.info("no run channel at %s (%s): runs come over HTTP", channel, exc)
        try:
            yield
        finally:
            if server is not None:
                server.close()
            await executor.close()

    app = _prebuilt.pop() if _prebuilt else _routes()
    app.router.lifespan_context = lifespan
    app.state.executor = executor
    app.state.tokens = [expected]
    app.state.channel = None
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
        body = _Body(request)
        try:
            return await take_run(_executor(request), body.parts, ended=body.ended)
        except Refused as exc:
            raise HTTPException(status_code=exc.status, detail=exc.detail) from exc
        except Dropped:
            raise HTTPException(status_code=400, detail="the request ended early") from None

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


class _UntilEnd(MultiPartParser):
    """starlette's multipart parser, which also says when the closing boundary was read."""

    ended = False

    def on_end(self) -> None:
        self.ended = True


class _Body:
    """An /execute body read in two steps: its parts (`parts`, done at the closing multipart
    boundary), then its end (`ended`): what little follows the boundary, and the end of the
    stream. The manager holds the last bytes back until it may run the script."""

    def __init__(self, request: Request) -> None:
        self._request = request
        self._stream = request.stream()
        self._parser: _UntilEnd | None = None

    async def parts(self) -> RunParts:
        """The request's parts, once the closing boundary is read (the body may go on).

        Raises:
            RequestRejectedError: a body that is not multipart, is malformed, or breaks the
                limits of a run's request.
            Dropped: the manager dropped the request.
        """
        content_type = self._request.headers.get("content-type", "")
        if parse_options_header(content_type)[0] != b"multipart/form-data":
            raise RequestRejectedError("the body must be multipart/form-data", status_code=415)
        self._parser = _UntilEnd(
            self._request.headers,
            self._until_boundary(),
            # the package, its environment, and a request sent as a file
            max_files=MAX_INPUTS + 3,
            max_fields=_MAX_FORM_FIELDS,
            max_part_size=MAX_REQUEST_BYTES,
        )
        try:
            form = await self._parser.parse()
        except MultiPartException as exc:
            raise RequestRejectedError(exc.message) from exc
        except ClientDisconnect:
            raise Dropped from None
        files = [value.file for _, value in form.multi_items() if isinstance(value, UploadFile)]
        try:
            if not self._parser.ended:
                raise RequestRejectedError("the body ended before its closing multipart boundary")
            package = _one_file(form, "package")
            if package.size is not None:
                check_package_size(package.size)
            environment = _optional_file(form, "environment")
            return RunParts(
                request=await _request_field(form),
                package=await package.read(),
                inputs=[(upload.filename or "", upload.file) for upload in _inputs(form)],
                environment=environment.file if environment is not None else None,
                files=files,
            )
        except BaseException:
            for file in files:
                file.close()
            raise

    async def _until_boundary(self) -> AsyncIterator[bytes]:
        # An async generator the parser reads to its end; the stream itself goes on, for `ended`.
        async for chunk in self._stream:
            yield chunk
            if self._parser is not None and self._parser.ended:
                return

    async def ended(self) -> None:
        """Until the body has ended: what follows the closing boundary is at most a line.

        Raises:
            Dropped: the manager dropped the request before its end.
            RequestRejectedError: more than a line followed the closing boundary.
        """
        after = 0
        try:
            async for chunk in self._stream:
                after += len(chunk)
                if after > _MAX_EPILOGUE_BYTES:
                    raise RequestRejectedError("data after the closing multipart boundary")
        except ClientDisconnect:
            raise Dropped from None


async def _request_field(form: FormData) -> ExecutorRequest:
    field = form.get("request")
    if field is None:
        raise RequestRejectedError(
            "missing the 'request' field (ExecutorRequest JSON)", status_code=422
        )
    return parse_request(await field.read() if isinstance(field, UploadFile) else field)


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
