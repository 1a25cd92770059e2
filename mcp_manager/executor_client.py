"""The manager's side of the executor protocol: :class:`ExecutorClient`, used by ``executions``.

One run in a one-shot sandbox (``skillweave.sandbox.models`` describes the wire): a multipart
``POST /execute`` carries the run's :class:`ExecutorRequest` JSON (``request``), the skill
package (``package``), the packed environment of its dependencies (``environment``, when it
has one) and each input (``inputs``, named by its path under ``inputs/``); the answer is an
:class:`ExecutorResult`. Each declared output and each over-cap stdout/stderr is then streamed
with ``GET /files/{name}``, checked against its size and sha256 and stored as an artifact of
the run. ``DELETE /execute`` stops a run. The sandbox's bearer token goes with every call.

The body may be sent in two steps (``go``): all of it but the closing multipart boundary at
once, the rest when the caller says so. ``executions`` writes the execution's claim meanwhile,
so the executor reads the request while the claim becomes durable, and it cannot start the
script before (the body has not ended).

How a failure ends: the executor refusing the request (4xx) or failing (5xx), a timeout and
any other HTTP failure are a terminal ``error`` result; a broken connection is
:class:`SandboxLostError` (the sandbox died or vanished: a pod deleted, a node lost); any
other exception is raised as it is, for the caller to decide (``executions`` stores it as the
run's terminal result once the request was complete). The client never retries: a run is
sent once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote

import httpx

from mcp_manager.backends import Sandbox
from mcp_manager.records import result_for
from skillweave.errors import InvalidKeyError, SandboxLostError
from skillweave.sandbox.models import (
    ExecuteRequest,
    ExecutionResult,
    ExecutionStatus,
    ExecutorFile,
    ExecutorRequest,
    ExecutorResult,
    OutputArtifact,
    SkippedOutput,
)
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore
from skillweave.telemetry.masker import SecretMasker
from skillweave.telemetry.tracing import inject

__all__ = ["ExecutorClient", "Handover", "SandboxRun"]

_HTTP_GRACE_SECONDS: Final = 30.0
_FETCH_TIMEOUT_SECONDS: Final = 60.0
_CANCEL_TIMEOUT_SECONDS: Final = 5.0
_CHUNK_BYTES: Final = 1 << 20
_MAX_DETAIL_CHARS: Final = 500


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
        self._store = store
        self._masker = masker
        self.http = httpx.AsyncClient(transport=transport)
        """The connection pool to the sandboxes."""

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
        may run. With `go`, all of the request but its last bytes is sent at once, and the
        rest once `go` resolves: the sandbox reads the request and waits, and the script
        cannot start before then (the executor runs nothing of a request whose body has not
        ended). Cancelled before `go`, the request is dropped unfinished and nothing runs.

        Raises:
            SandboxLostError: the connection to the sandbox broke; nothing of the run was kept.
        """
        request = run.request
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
            headers=inject(_auth(sandbox)),
            timeout=run.body.limits.timeout_seconds + _HTTP_GRACE_SECONDS,
        )
        if go is None:
            handover.sent = True
        else:
            outgoing.stream = _HeldEnd(outgoing.read(), go, handover)
        try:
            response = await self.http.send(outgoing)
            if response.status_code >= 400:
                detail = _detail(response)
                if 400 <= response.status_code < 500 and response.status_code != 409:
                    return result_for(request, status="error", error=f"rejected: {detail}")
                return result_for(request, status="error", error=f"executor: {detail}")
            executed = ExecutorResult.model_validate_json(response.content)
            return await self._collect(sandbox, request, executed)
        except httpx.TimeoutException as exc:
            return result_for(request, status="error", error=f"sandbox failed: {exc!r}")
        except httpx.TransportError as exc:
            # The connection broke: the sandbox died or vanished (a pod deleted, a node lost).
            # It is destroyed on release; nothing of the run was kept.
            raise SandboxLostError(request.execution_id, f"{type(exc).__name__}: {exc}") from exc
        except httpx.HTTPError as exc:
            return result_for(request, status="error", error=f"sandbox failed: {exc!r}")

    async def cancel(self, sandbox: Sandbox) -> None:
        """Stop the run in `sandbox` (its whole process tree); quiet when it cannot be asked."""
        with contextlib.suppress(httpx.HTTPError):
            await self.http.delete(
                f"{sandbox.url}/execute", headers=_auth(sandbox), timeout=_CANCEL_TIMEOUT_SECONDS
            )

    async def _collect(
        self, sandbox: Sandbox, request: ExecuteRequest, executed: ExecutorResult
    ) -> ExecutionResult:
        """The run's result, its outputs and over-cap logs fetched into the store."""
        outputs: list[OutputArtifact] = []
        skipped = list(executed.skipped_outputs)
        for item in executed.outputs:
            path = item.name.removeprefix("outputs/")
            try:
                key = keys.execution_output_key(request.run_id, request.execution_id, path)
            except InvalidKeyError as exc:  # a name no key can carry: said, not fatal
                skipped.append(SkippedOutput(path=path, reason=exc.reason))
                continue
            outputs.append(OutputArtifact(path=path, ref=await self.fetch(sandbox, item, key)))
        stdout_ref = stderr_ref = None
        if executed.full_stdout is not None:
            key = keys.execution_log_key(request.run_id, request.execution_id, "stdout")
            stdout_ref = await self.fetch(sandbox, executed.full_stdout, key, mask=True)
        if executed.full_stderr is not None:
            key = keys.execution_log_key(request.run_id, request.execution_id, "stderr")
            stderr_ref = await self.fetch(sandbox, executed.full_stderr, key, mask=True)
        return ExecutionResult(
            execution_id=request.execution_id,
            run_id=request.run_id,
            skill=request.skill,
            version=request.version,
            script=request.script,
            status=_status(executed),
            exit_code=executed.exit_code,
            stdout=executed.stdout,  # masked by the caller, with every other text of the result
            stderr=executed.stderr,
            stdout_truncated=executed.stdout_truncated,
            stderr_truncated=executed.stderr_truncated,
            stdout_ref=stdout_ref,
            stderr_ref=stderr_ref,
            timed_out=executed.timed_out,
            duration_ms=executed.duration_ms,
            outputs=outputs,
            skipped_outputs=skipped,
            isolation=executed.isolation,
            error=executed.error,
        )

    async def fetch(
        self, sandbox: Sandbox, item: ExecutorFile, key: str, *, mask: bool = False
    ) -> ArtifactRef:
        """Stream one file from the sandbox to the store under `key`, checking its size and
        hash.

        `mask` (a stdout/stderr log): once the transfer is verified, the secrets in it are
        masked (in place, streamed; ``cut``: the capture may have stopped mid-secret at its
        cap), and the store hashes the masked bytes it keeps.

        Raises:
            httpx.HTTPError: the file could not be fetched, or arrived damaged.
        """
        with tempfile.NamedTemporaryFile(prefix="skillweave-fetch-", delete=False) as handle:
            path = Path(handle.name)
            digest = hashlib.sha256()
            size = 0
            async with self.http.stream(
                "GET",
                f"{sandbox.url}/files/{quote(item.name, safe='/')}",
                headers=_auth(sandbox),
                timeout=_FETCH_TIMEOUT_SECONDS,
            ) as response:
                response.raise_for_status()
                async for chunk in response.aiter_bytes(_CHUNK_BYTES):
                    digest.update(chunk)
                    size += len(chunk)
                    handle.write(chunk)
        try:
            if size != item.size or digest.hexdigest() != item.sha256:
                raise httpx.HTTPError(f"{item.name} arrived damaged from the sandbox")
            if mask and self._masker:
                await asyncio.to_thread(self._masker.mask_file, path, cut=True)
            return await self._store.put_file(key, str(path))
        finally:
            path.unlink(missing_ok=True)


class _HeldEnd(httpx.AsyncByteStream):
    """A request body sent whole but for its closing multipart boundary, which waits for
    `go`."""

    def __init__(self, body: bytes, go: asyncio.Future[None], handover: Handover) -> None:
        self._body = body
        self._split = body.rindex(b"\r\n--")
        self._go = go
        self._handover = handover

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body[: self._split]
        await asyncio.shield(self._go)
        self._handover.sent = True
        yield self._body[self._split :]


def _status(executed: ExecutorResult) -> ExecutionStatus:
    if executed.cancelled:
        return "cancelled"
    if executed.timed_out:
        return "timed_out"
    if executed.error is not None:
        return "error"
    return "succeeded" if executed.exit_code == 0 else "failed"


def _auth(sandbox: Sandbox) -> dict[str, str]:
    return {"Authorization": f"Bearer {sandbox.token}"}


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:_MAX_DETAIL_CHARS]
