"""The manager's side of the executor protocol: :class:`ExecutorClient`, used by ``executions``.

One run in a one-shot sandbox (``skillweave.sandbox.models`` describes the wire): a multipart
``POST /execute`` carries the run's :class:`ExecutorRequest` JSON (``request``), the skill
package (``package``), the packed environment of its dependencies (``environment``, when it
has one) and each input (``inputs``, named by its path under ``inputs/``); the answer is an
:class:`ExecutorResult`. Each declared output and each over-cap stdout/stderr is then brought
to the store by the client's :class:`~mcp_manager.output_collector.OutputCollector`
(``GET /files/{name}``). ``DELETE /execute`` stops a run. The sandbox's bearer token goes with
every call.

The body may be sent in two steps (``go``): all of it but its last two bytes (the CRLF after
the closing multipart boundary) at once, those when the caller says so. ``executions`` writes
the execution's claim meanwhile, so the executor reads the request, fills the workspace and
makes the script's order while the claim becomes durable, and it cannot start the script
before (the body has not ended).

How a failure ends: the executor refusing the request (4xx) or failing (5xx), a timeout and
any other HTTP failure are a terminal ``error`` result; a broken connection is
:class:`SandboxLostError` (the sandbox died or vanished: a pod deleted, a node lost, an
executor killed), also while the files of a run it answered are fetched (see
``output_collector``). Nothing a script does can break that connection (its processes are gone
once the executor answers, and collecting its outputs is bounded and answers its own failures,
``sandbox_executor.workspace``), so a run goes again only when its sandbox was lost from
outside. Whatever the executor answers while its files are fetched (a file it cannot serve,
one that arrives damaged) is the run's terminal ``error`` result: stored, never run again. Any
other exception is raised as it is, for the caller to decide (``executions`` stores it as the
run's terminal result once the request was complete). The client never retries: a run is sent
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx

from mcp_manager.backends import Sandbox
from mcp_manager.output_collector import OutputCollector, sandbox_auth
from mcp_manager.records import result_for
from skillweave.errors import SandboxLostError
from skillweave.sandbox import (
    GO,
    ChannelError,
    ExecuteRequest,
    ExecutionResult,
    ExecutorRequest,
    ExecutorResult,
    RunHead,
    answer_max_bytes,
    frame,
    read_answer,
)
from skillweave.storage import ArtifactStore
from skillweave.telemetry import SecretMasker, inject

__all__ = ["ExecutorClient", "Handover", "SandboxRun"]

_HTTP_GRACE_SECONDS: Final = 30.0
_FETCH_TIMEOUT_SECONDS: Final = 60.0
_CANCEL_TIMEOUT_SECONDS: Final = 5.0
_CHUNK_BYTES: Final = 1 << 20
_MAX_DETAIL_CHARS: Final = 500
_NO_ANSWER: Final = (ConnectionError, ChannelError, asyncio.IncompleteReadError)
_HELD: Final = b"\r\n"
"""What a held body keeps back until `go`: the line end after its closing boundary."""


@dataclass
class Handover:
    """Whether a run's request was sent to its sandbox: from then on its script may have run,
    and it is never run again."""

    sent: bool = False


@dataclass(frozen=True, slots=True)
class SandboxRun:
    """What one run sends to its sandbox.

    Attributes:
        request: the execution (names the run, and where its outputs are stored).
        body: the executor's request (script, args, environment variables, limits).
        package: the skill package ZIP.
        inputs: each input's path under ``inputs/`` and bytes.
        environment: the packed environment of the skill's dependencies, if it has one.
    """

    request: ExecuteRequest
    body: ExecutorRequest
    package: bytes
    inputs: list[tuple[str, bytes]]
    environment: bytes | None = None


class ExecutorClient:
    """Runs scripts in sandboxes and brings their outputs to the store.

    Args:
        store: where outputs and full stdout/stderr logs are stored.
        masker: masks the secrets in a full stdout/stderr log once its transfer was verified
            and before it is stored, so the log's ref describes the masked bytes.
        transport: an httpx transport (tests may pass a mock one).
    """

    def __init__(
        self,
        *,
        store: ArtifactStore,
        masker: SecretMasker,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.http = httpx.AsyncClient(transport=transport)
        """The connection pool to the sandboxes."""
        self.outputs = OutputCollector(self.http, store=store, masker=masker)
        """Brings each run's outputs and over-cap logs from its sandbox to the store."""

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def run(
        self,
        sandbox: Sandbox,
        run: SandboxRun,
        *,
        handover: Handover,
        go: asyncio.Future[None] | None = None,
    ) -> ExecutionResult:
        """Run `run` in `sandbox` and store its outputs; its result (not yet masked).

        `handover.sent` is set just before the request is complete: from then on the script
        may run. With `go`, all of the request but its end is sent at once, and the end once
        `go` resolves: the sandbox reads the request, prepares the run and waits, and the
        script cannot start before then (the executor runs nothing of a request that has not
        ended). Cancelled before `go`, the request is dropped unfinished and nothing runs.

        Raises:
            SandboxLostError: the connection to the sandbox broke; nothing of the run was kept.
        """
        return await (await self.start(sandbox, run, handover=handover, go=go))

    async def start(
        self,
        sandbox: Sandbox,
        run: SandboxRun,
        *,
        handover: Handover,
        go: asyncio.Future[None] | None = None,
    ) -> Coroutine[Any, Any, ExecutionResult]:
        """`run` begun: over a run channel, connected and the whole request but its end handed
        to the socket before this returns (so the sandbox reads it while the caller goes on);
        the rest of `run` is the coroutine returned, which the caller must await (or close).

        Raises:
            SandboxLostError: the sandbox cannot be reached; nothing was sent.
        """
        if sandbox.channel is None:
            return self._finish(sandbox, run, self._over_http(sandbox, run, handover, go))
        try:
            reader, writer = await self._open_channel(sandbox.channel)
        except OSError as exc:
            raise SandboxLostError(
                run.request.execution_id, f"{type(exc).__name__}: {exc}"
            ) from exc
        try:
            head = RunHead(
                request=run.body,
                package=len(run.package),
                environment=len(run.environment) if run.environment is not None else None,
                inputs=[(name, len(data)) for name, data in run.inputs],
                trace=dict(inject({})),
            )
            writer.write(frame(sandbox.token.encode()) + frame(head.model_dump_json().encode()))
            for blob in (run.package, run.environment or b"", *(d for _, d in run.inputs)):
                writer.write(blob)
        except BaseException:
            writer.close()
            raise
        return self._finish(sandbox, run, self._over_channel(reader, writer, run, handover, go))

    async def _finish(
        self,
        sandbox: Sandbox,
        run: SandboxRun,
        delivery: Coroutine[Any, Any, tuple[int, bytes]],
    ) -> ExecutionResult:
        """The run's result, from the executor's answer (`delivery`) and its outputs."""
        request = run.request
        try:
            status, content = await delivery
            if status >= 400:
                detail = _detail(content)
                if 400 <= status < 500 and status != 409:
                    return result_for(request, status="error", error=f"rejected: {detail}")
                return result_for(request, status="error", error=f"executor: {detail}")
            executed = ExecutorResult.model_validate_json(content)
        except _Unanswered as exc:
            return result_for(request, status="error", error=f"sandbox failed: {exc.cause!r}")
        except _Lost as exc:
            # The connection broke: the sandbox died or vanished (a pod deleted, a node lost).
            # It is destroyed on release; nothing of the run was kept.
            cause = exc.__cause__
            raise SandboxLostError(
                request.execution_id, f"{type(cause).__name__}: {cause}"
            ) from cause
        # The executor answered: what it says from here on is the run's terminal result; only
        # a sandbox lost from outside (a broken connection) runs it again.
        return await self.outputs.collect(sandbox, request, executed)

    async def _over_http(
        self,
        sandbox: Sandbox,
        run: SandboxRun,
        handover: Handover,
        go: asyncio.Future[None] | None,
    ) -> tuple[int, bytes]:
        """``POST /execute``: the answer's status and body.

        Raises:
            _Lost: the connection broke. _Unanswered: no answer in time, or none that is HTTP.
        """
        files: list[tuple[str, tuple[str, bytes, str]]] = [
            ("package", ("package.zip", run.package, "application/zip"))
        ]
        if run.environment is not None:
            environment = ("environment.tar.gz", run.environment, "application/gzip")
            files.append(("environment", environment))
        files += [("inputs", (name, data, "application/octet-stream")) for name, data in run.inputs]
        outgoing = self.http.build_request(
            "POST",
            f"{sandbox.url}/execute",
            data={"request": run.body.model_dump_json()},
            files=files,
            headers=inject(sandbox_auth(sandbox)),
            timeout=run.body.limits.timeout_seconds + _HTTP_GRACE_SECONDS,
        )
        if go is None:
            handover.sent = True
        else:
            outgoing.stream = _HeldEnd(outgoing.read(), go, handover)
        try:
            response = await self.http.send(outgoing)
        except httpx.TimeoutException as exc:
            raise _Unanswered(exc) from exc
        except httpx.TransportError as exc:
            raise _Lost from exc
        except httpx.HTTPError as exc:
            raise _Unanswered(exc) from exc
        return response.status_code, response.content

    async def _over_channel(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        run: SandboxRun,
        handover: Handover,
        go: asyncio.Future[None] | None,
    ) -> tuple[int, bytes]:
        """The rest of a run over a run channel (``skillweave.sandbox.run_channel``), whose
        request `start` wrote but for its go byte: the answer's status and body, as
        ``POST /execute`` would give them.

        Raises:
            _Lost: the connection broke. _Unanswered: no answer in time, or a broken one.
        """
        most = answer_max_bytes(run.body)
        try:
            try:
                await writer.drain()
                if go is not None:
                    await asyncio.shield(go)
                handover.sent = True
                writer.write(GO)
                await writer.drain()
            except ConnectionError as exc:
                # Refused before its end, perhaps: the executor answers, then closes.
                with contextlib.suppress(*_NO_ANSWER):
                    async with asyncio.timeout(_CANCEL_TIMEOUT_SECONDS):
                        return await read_answer(reader, most)
                raise _Lost from exc
            try:
                async with asyncio.timeout(run.body.limits.timeout_seconds + _HTTP_GRACE_SECONDS):
                    return await read_answer(reader, most)
            except (TimeoutError, ChannelError) as exc:
                raise _Unanswered(exc) from exc
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                raise _Lost from exc
        finally:
            writer.close()

    async def _open_channel(self, path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect to a run channel (a seam for tests that break the connection)."""
        return await asyncio.open_unix_connection(str(path))

    async def cancel(self, sandbox: Sandbox) -> None:
        """Stop the run in `sandbox` (its whole process tree); quiet when it cannot be asked."""
        with contextlib.suppress(httpx.HTTPError):
            await self.http.delete(
                f"{sandbox.url}/execute",
                headers=sandbox_auth(sandbox),
                timeout=_CANCEL_TIMEOUT_SECONDS,
            )


class _HeldEnd(httpx.AsyncByteStream):
    """A multipart request body sent whole but for the line end after its closing boundary,
    which waits for `go`: the executor has every part, and the body has not ended."""

    def __init__(self, body: bytes, go: asyncio.Future[None], handover: Handover) -> None:
        if not body.endswith(b"--" + _HELD):
            raise ValueError("a held body must end with a closing multipart boundary")
        self._body = body
        self._split = len(body) - len(_HELD)
        self._go = go
        self._handover = handover

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body[: self._split]
        await asyncio.shield(self._go)
        self._handover.sent = True
        yield self._body[self._split :]


class _Lost(Exception):
    """The connection to the sandbox broke (raised from its cause)."""


class _Unanswered(Exception):
    """No answer came in time, or none that can be read."""

    def __init__(self, cause: Exception) -> None:
        self.cause = cause
        super().__init__(repr(cause))


def _detail(content: bytes) -> str:
    text = content.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:_MAX_DETAIL_CHARS]
    if isinstance(parsed, dict) and "detail" in parsed:
        return str(parsed["detail"])
    return text[:_MAX_DETAIL_CHARS]
