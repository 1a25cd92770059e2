"""`ScriptExecutor`: a script run asked of the MCP manager, and cancelled there.

Every side effect that runs a script goes through it: ``run_skill_script``
(:class:`~skillweave.engines._script_runs.ScriptRuns`), an activation's ``--help-json``
(:class:`~skillweave.engines._activation.Activations`) and a written skill's examples
(:class:`~skillweave.engines.authoring.SkillAuthoring`).
"""

from __future__ import annotations

import asyncio
import logging

from skillweave.config import SandboxSettings
from skillweave.sandbox import ExecuteRequest, ExecutionResult, SandboxClient, queued
from skillweave.storage import ArtifactStore, store_identity

__all__ = ["ScriptExecutor"]

_log = logging.getLogger("skillweave.engines.services")


class ScriptExecutor:
    """Runs scripts on the manager `sandbox` for the runs of `store`.

    Args:
        sandbox: a client of the MCP manager (replaceable: :attr:`sandbox`).
        store: this worker's store, which every request names.
        settings: how long a full pool is waited for (``SANDBOX__QUEUE_SECONDS``).
    """

    def __init__(
        self, sandbox: SandboxClient, *, store: ArtifactStore, settings: SandboxSettings
    ) -> None:
        self.sandbox = sandbox
        self._store = store
        self._settings = settings

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request` on the manager. A full pool is back-pressure, not a failure: the step
        asks again after each 503's Retry-After (jittered, so that waiting steps spread out)
        for up to ``SANDBOX__QUEUE_SECONDS``, and only then fails to the engine's retries
        (``skillweave.sandbox.queue``, the MCP front door's policy too). A manager that is
        down or refuses this worker (its token, its store) is waited for the same way; each
        wait is told to the context's reporter (``skillweave.waiting``) and never becomes a
        tool result.

        The request names this worker's store (a manager on another refuses it) and sets no
        limits: the script limit is the manager's (``SANDBOX__TIMEOUT_SECONDS`` where it runs).
        """
        request = request.model_copy(update={"store_id": await store_identity(self._store)})
        return await queued(
            lambda: self.sandbox.execute(request),
            queue_seconds=self._settings.queue_seconds,
            call=f"script {request.skill}/{request.script}",
        )

    async def cancel(self, execution_id: str) -> None:
        """Ask the manager to stop a run whose caller was cancelled (the run was, or its
        activity): it would otherwise run to its timeout. Best effort, and shielded, so the
        request is not cut short by the cancellation being delivered."""
        try:
            await asyncio.shield(self.sandbox.cancel(execution_id))
        except Exception:
            _log.warning("could not cancel execution %s", execution_id, exc_info=True)
