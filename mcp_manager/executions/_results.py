"""What makes an execution id an idempotency key: its stored result, and the claim that lets
exactly one request run its script (layers 1 and 3 of the package's docstring).

:class:`StoredResults` is asked by ``ExecutionService`` (a repeat answered from the store, an
execution's state) and by the runner (``_runner``: the claim won beside the sandbox, the
result kept after the run). The claim itself is ``mcp_manager.claims``; the stored record
and the fingerprint are ``mcp_manager.records``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from mcp_manager.claims import Claim, ClaimRecord, Claims
from mcp_manager.executions._secrets import RunSecrets
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.records import ExecutionRecord, Fingerprint
from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    StorageError,
)
from skillweave.sandbox import ExecuteRequest, ExecutionResult
from skillweave.storage import ArtifactStore, keys

__all__ = ["StoredResults"]

logger = logging.getLogger("skillweave.manager")

_KEEP_ATTEMPTS: Final = 4
_KEEP_BACKOFF_SECONDS: Final = 0.25
_JSON: Final = "application/json"


class StoredResults:
    """The stored results and the claims of executions.

    Args:
        store: where results and claims are stored.
        claims: the claims of executions (renewed while a script runs).
        metrics: the manager's metrics (a repeat answered from the store counts).
        secrets: masks every result read back.
    """

    def __init__(
        self, store: ArtifactStore, claims: Claims, *, metrics: ManagerMetrics, secrets: RunSecrets
    ) -> None:
        self._store = store
        self._claims = claims
        self._metrics = metrics
        self._secrets = secrets

    async def read(self, execution_id: str) -> ExecutionRecord | None:
        """The stored record of `execution_id`; None: it has none."""
        ref = await self._store.stat(keys.execution_result_key(execution_id))
        if ref is None:
            return None
        return ExecutionRecord.model_validate_json(await self._store.get_bytes(ref))

    async def stored(self, execution_id: str, fingerprint: Fingerprint) -> ExecutionResult | None:
        """The stored result of the request `fingerprint` identifies, masked; None: none yet.

        Raises:
            ExecutionConflictError: the id's result is a different request's.
        """
        record = await self.read(execution_id)
        if record is None:
            return None
        if not fingerprint.matches(record.fingerprint):
            raise ExecutionConflictError(execution_id, "used with a different request")
        self._metrics.deduplicated.inc()
        # Masked again: a result stored before masking, or before a secret was configured.
        return self._secrets.mask(record.result)

    async def claim(self, execution_id: str, fingerprint: Fingerprint) -> Claim | ExecutionResult:
        """Claim the execution; the claim won, or the stored result when another run
        finished it meanwhile.

        Attempt 1 is ``.claim``. A claim that is there already belongs to a run that is going
        on (renewed within the lease: :class:`ExecutionInProgressError`) or to one whose
        manager stopped (not renewed within the lease): that run is over (its sandbox went
        with it, and nothing of it was kept, since a result is stored before anything is
        reported), so the next attempt is claimed, atomically again. Running it again is
        safe: a sandbox reaches nothing outside itself, and its outputs are collected only
        from a run that finished.

        Raises:
            ExecutionConflictError: the id was claimed for a different request, or it was
                interrupted too many times.
            ExecutionInProgressError: another manager's run holds a live claim.
        """

        def check(holder: ClaimRecord) -> None:
            if not fingerprint.matches(holder.fingerprint):
                raise ExecutionConflictError(execution_id, "used with a different request")
            if holder.ran:
                raise ExecutionConflictError(
                    execution_id, "ran, but its result could not be stored; it is not run again"
                )

        async def in_progress(left: float) -> None:
            raise ExecutionInProgressError(execution_id, retry_after=max(1.0, left))

        def interrupted() -> Exception:
            return ExecutionConflictError(
                execution_id,
                f"was interrupted {self._claims.max_attempts} times; it is not run again",
            )

        return await self._claims.acquire(
            lambda attempt: keys.execution_claim_key(execution_id, attempt),
            settled=lambda: self.stored(execution_id, fingerprint),
            check=check,
            wait=in_progress,
            exhausted=interrupted,
            fingerprint=fingerprint.value,
            what=f"execution {execution_id}",
        )

    async def keep(
        self,
        request: ExecuteRequest,
        fingerprint: Fingerprint,
        result: ExecutionResult,
        claim: Claim,
    ) -> None:
        """Store the result, asking the store again a few times; if it cannot be stored, the
        claim says that the script ran, so that no later request runs it again.

        Raises:
            StorageError: the result could not be stored (the id answers 409 from then on).
        """
        record = ExecutionRecord(fingerprint=fingerprint.value, result=result).encoded()
        key = keys.execution_result_key(request.execution_id)
        for tried in range(1, _KEEP_ATTEMPTS + 1):
            try:
                await self._store.put_bytes(key, record, content_type=_JSON)
                return
            except StorageError as exc:
                failure = exc
                logger.warning(
                    "execution %s: result not stored (try %d): %s", request.execution_id, tried, exc
                )
                await asyncio.sleep(_KEEP_BACKOFF_SECONDS * tried)
        await self._claims.mark_ran(claim)
        raise failure
