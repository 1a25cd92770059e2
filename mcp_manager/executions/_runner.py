"""Running a prepared run in a sandbox: the sandbox claimed from the pool, the request sent
while the execution's claim is written, the start recorded, the script let go, its result
masked and kept, the sandbox given back.

:class:`SandboxRunner` is called by ``ExecutionService`` with a
:class:`~mcp_manager.executor_client.SandboxRun` the run's preparation (``_preparation``)
made. From the moment the claim is won every way out ends in a stored result or a withdrawn
claim, never a claim left with no result.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import Final

from mcp_manager.backends import Sandbox
from mcp_manager.claims import Claim, Claims
from mcp_manager.containment import Containment
from mcp_manager.executions._audit import RunAudit
from mcp_manager.executions._inflight import InflightRun
from mcp_manager.executions._results import StoredResults
from mcp_manager.executions._secrets import RunSecrets
from mcp_manager.executor_client import ExecutorClient, Handover, SandboxRun
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool
from mcp_manager.records import Fingerprint, result_for
from skillweave.errors import SandboxLostError, StorageError
from skillweave.sandbox import ExecuteRequest, ExecutionResult

__all__ = ["SandboxRunner"]

logger = logging.getLogger("skillweave.manager")

_CLEAN_ENDS: Final = frozenset({"succeeded", "failed", "timed_out"})
"""Ends of an execution after which its executor is as it was before it (the script ran, and
the executor answered): the only ones after which a pool may hand the sandbox out again."""


async def _dropped(sending: asyncio.Future[ExecutionResult]) -> None:
    """Stop a run's request before its end was sent (the script never started); whatever
    it came to is moot."""
    sending.cancel()
    await asyncio.wait([sending])
    if not sending.cancelled():
        sending.exception()  # retrieved: it ended before the cancel reached it


def _failed_after_run(request: ExecuteRequest, exc: Exception) -> ExecutionResult:
    """The terminal result of a run the manager could not finish handling (the error, with
    its class): stored like any other, so the script is not run again."""
    return result_for(
        request,
        status="error",
        error=f"the manager failed after the script ran ({type(exc).__name__}: {exc});"
        " it is not run again",
    )


class SandboxRunner:
    """Runs prepared runs in sandboxes of the pool, once per claim.

    Args:
        pool: where sandboxes come from (and go back to).
        executor: speaks the executor protocol to a sandbox.
        claims: the claims of executions (renewed while a script runs).
        results: claims executions and keeps their results.
        audit: records each start before its script may begin.
        secrets: masks each result before it is kept or answered.
        metrics: the manager's metrics.
        containment: told the isolation each result ran under; None: nobody is.
    """

    def __init__(
        self,
        *,
        pool: SandboxPool,
        executor: ExecutorClient,
        claims: Claims,
        results: StoredResults,
        audit: RunAudit,
        secrets: RunSecrets,
        metrics: ManagerMetrics,
        containment: Containment | None,
    ) -> None:
        self._pool = pool
        self._executor = executor
        self._claims = claims
        self._results = results
        self._audit = audit
        self._secrets = secrets
        self._metrics = metrics
        self._containment = containment

    async def run(
        self, entry: InflightRun, fingerprint: Fingerprint, run: SandboxRun, *, unbound: str | None
    ) -> ExecutionResult:
        """Run `run` in a sandbox once its claim is won; the stored result when another run
        finished it meanwhile.

        Raises:
            PoolExhaustedError: no sandbox became free in time; nothing ran.
            SandboxLostError: the sandbox was lost; the claim is withdrawn.
            ExecutionConflictError, ExecutionInProgressError: the claim is not this run's.
            AuditUnavailableError: the start cannot be recorded; nothing ran.
        """
        request = entry.request
        sandbox, _ = await self._pool.claim()
        sending, handover, go = await self._begin(sandbox, run)
        claim = await self._claim_beside(request, fingerprint, sandbox, sending)
        if isinstance(claim, ExecutionResult):
            await self._audit.record_repeat(request, "stored")  # another run finished it
            return claim
        if claim.taken_over:
            self._metrics.claims_taken_over.inc()
        # From here on every way out ends in one of two states: a stored result (what ran, or
        # the failure that ended it, with its class), or a withdrawn claim when the script
        # never reached a sandbox (or its sandbox was lost mid-run: see SandboxLostError).
        # Never a claim left with no result, which would run the script again once it lapsed.
        entry.sandbox = sandbox
        clean = False  # whether the sandbox may serve again: only once a script ran to an end
        try:
            if entry.cancelled:
                await _dropped(sending)
                result = result_for(request, status="cancelled", error="cancelled before start")
            else:
                undo = functools.partial(self._unstarted, request, claim, sending)
                await self._audit.record_start(request, unbound=unbound, claim=claim, undo=undo)
                async with self._claims.renewing(claim):
                    try:
                        go.set_result(None)
                        result = await sending
                        clean = result.status in _CLEAN_ENDS
                    except SandboxLostError:
                        await self._claims.withdraw(claim)
                        self._metrics.executions.labels(outcome="lost").inc()
                        logger.warning(
                            "sandbox %s lost during %s", sandbox.id, request.execution_id
                        )
                        raise
                    except Exception as exc:
                        if not handover.sent:  # the script never reached a sandbox: free the id
                            await self._claims.withdraw(claim)
                            raise
                        logger.exception(
                            "execution %s failed after its script ran", request.execution_id
                        )
                        result = _failed_after_run(request, exc)
            # Before anything keeps or shows it.
            try:
                result = await self._secrets.masked(result)
            except Exception as exc:  # kept without the text that could not be masked
                logger.exception("execution %s: output not masked", request.execution_id)
                result = _failed_after_run(request, exc)
            await self._results.keep(request, fingerprint, result, claim)
        finally:
            # After the result is stored: destroying the sandbox and starting its replacement
            # are work for the host, which the caller need not wait behind.
            await self._pool.release(sandbox, clean=clean)
        self._metrics.executions.labels(outcome=result.status).inc()
        if self._containment is not None:
            self._containment.observe(result.isolation)
        if result.timed_out:
            self._metrics.timeouts.inc()
        self._metrics.execution_seconds.observe(time.perf_counter() - entry.started)
        return result

    async def _unstarted(
        self, request: ExecuteRequest, claim: Claim, sending: asyncio.Future[ExecutionResult]
    ) -> None:
        """A start that will not be: its request dropped before its end and its claim
        withdrawn (nothing ran, the id stays free)."""
        await _dropped(sending)
        try:
            await asyncio.shield(self._claims.withdraw(claim))
        except StorageError as failure:  # unrenewed, it lapses: the id is free after the lease
            logger.warning("execution %s: claim not withdrawn: %s", request.execution_id, failure)

    async def _begin(
        self, sandbox: Sandbox, run: SandboxRun
    ) -> tuple[asyncio.Future[ExecutionResult], Handover, asyncio.Future[None]]:
        """Send `run` to `sandbox`, all but its end, which waits for the returned `go`.

        The sandbox reads the request and fills its workspace while the claim is written, and
        the script can start only once `go` is set, after the claim is durable. The request is
        handed to the socket before the claim's write begins, so that the two do not contend
        for this process. A request that does not get the claim is dropped unfinished
        (nothing ran), and its sandbox, which read part of it, is not reused.

        Raises:
            SandboxLostError: the sandbox cannot be reached (it is given back).
        """
        handover = Handover()
        go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            started = await self._executor.start(sandbox, run, handover=handover, go=go)
        except BaseException as exc:
            await asyncio.shield(self._pool.release(sandbox))
            if isinstance(exc, SandboxLostError):
                self._metrics.executions.labels(outcome="lost").inc()
                logger.warning("sandbox %s lost before %s", sandbox.id, run.request.execution_id)
            raise
        return asyncio.ensure_future(started), handover, go

    async def _claim_beside(
        self,
        request: ExecuteRequest,
        fingerprint: Fingerprint,
        sandbox: Sandbox,
        sending: asyncio.Future[ExecutionResult],
    ) -> Claim | ExecutionResult:
        """The execution's claim, while `sending` gives `sandbox` the run's request; without
        the claim, the request is dropped before its end and the sandbox destroyed."""
        try:
            claim = await self._results.claim(request.execution_id, fingerprint)
        except BaseException:
            await self._drop(sending, sandbox)
            raise
        if isinstance(claim, ExecutionResult):
            await self._drop(sending, sandbox)
        return claim

    async def _drop(self, sending: asyncio.Future[ExecutionResult], sandbox: Sandbox) -> None:
        """Drop a request before its end and destroy its sandbox, even if this is cancelled
        meanwhile (a sandbox left claimed would never go back to the pool)."""
        try:
            await _dropped(sending)
        finally:
            await asyncio.shield(self._pool.release(sandbox))
