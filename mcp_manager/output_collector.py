"""A run's files brought from its sandbox to the store: :class:`OutputCollector`.

Once the executor answered a run (``executor_client``), each declared output and each over-cap
stdout/stderr log is streamed with ``GET /files/{name}`` (the sandbox's bearer token with it),
checked against its size and sha256 and stored as an artifact of the run; a log's secrets are
masked once its transfer is verified. A broken connection meanwhile is
:class:`SandboxLostError` (the files went with the sandbox, and only a run on a fresh sandbox
brings them back); whatever the executor answers instead (a file it cannot serve, one that
arrives damaged) is the run's terminal ``error`` result: stored, never run again. The executor
client owns one collector, over its connection pool.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final
from urllib.parse import quote

import httpx

from mcp_manager.backends import Sandbox
from mcp_manager.records import result_for
from skillweave.errors import InvalidKeyError, SandboxLostError
from skillweave.sandbox import (
    FETCH_FILE_PREFIX,
    ExecuteRequest,
    ExecutionResult,
    ExecutionStatus,
    ExecutorFile,
    ExecutorResult,
    OutputArtifact,
    SkippedOutput,
)
from skillweave.storage import ArtifactRef, ArtifactStore, keys
from skillweave.telemetry import SecretMasker

__all__ = ["OutputCollector", "sandbox_auth"]

_FETCH_TIMEOUT_SECONDS: Final = 60.0
_CHUNK_BYTES: Final = 1 << 20


class OutputCollector:
    """Fetches a run's outputs and over-cap logs from its sandbox into the store.

    Args:
        http: the connection pool to the sandboxes (the executor client's).
        store: where outputs and full stdout/stderr logs are stored.
        masker: masks the secrets in a full stdout/stderr log once its transfer was verified
            and before it is stored, so the log's ref describes the masked bytes.
    """

    def __init__(
        self, http: httpx.AsyncClient, *, store: ArtifactStore, masker: SecretMasker
    ) -> None:
        self._http = http
        self._store = store
        self._masker = masker

    async def collect(
        self, sandbox: Sandbox, request: ExecuteRequest, executed: ExecutorResult
    ) -> ExecutionResult:
        """The run's result, its outputs and over-cap logs fetched into the store.

        A file the executor cannot serve, or sends damaged, ends the run in ``error``, saying
        so, with what was kept before: a terminal result (stored, never run again).

        Raises:
            SandboxLostError: the connection broke (the sandbox was lost from outside; its
                files went with it).
        """
        outputs: list[OutputArtifact] = []
        skipped = list(executed.skipped_outputs)
        stdout_ref = stderr_ref = None
        status, error = _status(executed), executed.error
        try:
            for item in executed.outputs:
                path = item.name.removeprefix("outputs/")
                try:
                    key = keys.execution_output_key(request.run_id, request.execution_id, path)
                except InvalidKeyError as exc:  # a name no key can carry: said, not fatal
                    skipped.append(SkippedOutput(path=path, reason=exc.reason))
                    continue
                ref = await self.fetch(sandbox, item, key)
                outputs.append(OutputArtifact(path=path, ref=ref))
            if executed.full_stdout is not None:
                key = keys.execution_log_key(request.run_id, request.execution_id, "stdout")
                stdout_ref = await self.fetch(sandbox, executed.full_stdout, key, mask=True)
            if executed.full_stderr is not None:
                key = keys.execution_log_key(request.run_id, request.execution_id, "stderr")
                stderr_ref = await self.fetch(sandbox, executed.full_stderr, key, mask=True)
        except httpx.TransportError as exc:
            raise SandboxLostError(
                request.execution_id,
                f"lost while its files were fetched: {type(exc).__name__}: {exc}",
            ) from exc
        except httpx.HTTPError as exc:
            status = "error"
            error = (
                f"the script ran, but its files could not be brought back from the sandbox"
                f" ({type(exc).__name__}: {exc}); it is not run again"
            )
        return result_for(
            request,
            status=status,
            error=error,
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
        descriptor, name = tempfile.mkstemp(prefix=FETCH_FILE_PREFIX)
        path = Path(name)
        try:  # removed however the transfer ends: a refused, broken or cancelled one too
            # and locked until then, so a pool's sweep takes it only once this process died
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            digest = hashlib.sha256()
            size = 0
            with os.fdopen(descriptor, "wb", closefd=False) as sink:
                async with self._http.stream(
                    "GET",
                    f"{sandbox.url}/files/{quote(item.name, safe='/')}",
                    headers=sandbox_auth(sandbox),
                    timeout=_FETCH_TIMEOUT_SECONDS,
                ) as response:
                    response.raise_for_status()
                    async for chunk in response.aiter_bytes(_CHUNK_BYTES):
                        digest.update(chunk)
                        size += len(chunk)
                        sink.write(chunk)
            if size != item.size or digest.hexdigest() != item.sha256:
                raise httpx.HTTPError(f"{item.name} arrived damaged from the sandbox")
            if mask and self._masker:
                await asyncio.to_thread(self._masker.mask_file, path, cut=True)
            return await self._store.put_file(key, str(path))
        finally:
            path.unlink(missing_ok=True)
            os.close(descriptor)


def _status(executed: ExecutorResult) -> ExecutionStatus:
    if executed.cancelled:
        return "cancelled"
    if executed.timed_out:
        return "timed_out"
    if executed.error is not None:
        return "error"
    return "succeeded" if executed.exit_code == 0 else "failed"


def sandbox_auth(sandbox: Sandbox) -> dict[str, str]:
    """The headers that carry `sandbox`'s bearer token (every call to an executor has them)."""
    return {"Authorization": f"Bearer {sandbox.token}"}
