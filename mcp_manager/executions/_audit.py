"""The audit records of script runs: an ``execution`` record for each start, written before
the script may begin (a start that cannot be recorded is refused), and an
``execution_repeat`` record for each request answered without one (best effort).

:class:`RunAudit` is asked by the runner (``_runner``: the start) and by
``ExecutionService`` (the repeats); the refusal's line is the one policy of
:func:`skillweave.sandbox.problems.audit_refusal`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

from mcp_manager.claims import Claim
from skillweave.agent import one_line
from skillweave.errors import (
    AuditEntryError,
    AuditLogError,
    AuditUnavailableError,
    ExecutionRejectedError,
)
from skillweave.sandbox import AUDIT_RETRY_SECONDS, ExecuteRequest, audit_refusal
from skillweave.storage.audit import AuditEvent, AuditLog

__all__ = ["RepeatAnswer", "RunAudit"]

logger = logging.getLogger("skillweave.manager")

_LOGGED_CHARS: Final = 300
"""The log's error in the line that says a start was refused is clipped to this many
characters."""

RepeatAnswer = Literal["stored", "joined", "in_progress"]
"""How a request that started nothing was answered (``answered`` of its ``execution_repeat``
audit record): with the stored result; by waiting for this manager's run of the same id; or
"in progress", another manager's run holding the claim (the caller asks again later)."""


class RunAudit:
    """Writes the audit records of this manager's runs.

    Args:
        audit: the audit log; None: nothing is recorded.
        manager_id: the actor of every record (``SANDBOX__MANAGER_ID``).
    """

    def __init__(self, audit: AuditLog | None, *, manager_id: str) -> None:
        self._audit = audit
        self._manager_id = manager_id

    async def aclose(self) -> None:
        """Close the audit log: its queued records are written and its newest one is anchored
        in a checkpoint."""
        if self._audit is not None:
            await self._audit.aclose()

    async def record_start(
        self,
        request: ExecuteRequest,
        *,
        unbound: str | None,
        claim: Claim,
        undo: Callable[[], Awaitable[None]],
    ) -> None:
        """The start's ``execution`` audit record, once its claim is won and before its script
        may begin: nothing runs unrecorded, and a start that cannot be recorded is refused.

        Args:
            request: the run.
            unbound: why it is not given its skill's secrets (``Admission.unbound``).
            claim: the claim it won (a taken-over attempt is recorded).
            undo: awaited before a refusal is raised: drops the request before its end and
                withdraws the claim (nothing ran, the id stays free).

        Raises:
            AuditUnavailableError: the record was not stored (the store failed).
            ExecutionRejectedError: 422, the request's fields cannot be a record.
        """
        if self._audit is None:
            return
        try:
            await self._record(
                self._audit,
                "execution",
                request,
                args=request.args,
                **({"attempt": claim.attempt} if claim.taken_over else {}),
                **({"unbound": unbound} if unbound is not None else {}),
            )
        except BaseException as exc:
            await undo()
            if isinstance(exc, AuditEntryError):  # the request's fields, not the store
                raise ExecutionRejectedError(
                    422, f"the request cannot be recorded in the audit log: {exc}"
                ) from exc
            if not isinstance(exc, AuditLogError):
                raise
            logger.warning(
                "execution %s refused, not started: its audit record cannot be stored: %s",
                request.execution_id,
                one_line(str(exc), _LOGGED_CHARS),
            )
            raise AuditUnavailableError(
                audit_refusal(exc, what="this run", so="the script was not started"),
                retry_after=AUDIT_RETRY_SECONDS,
            ) from exc

    async def record_repeat(self, request: ExecuteRequest, answered: RepeatAnswer) -> None:
        """An ``execution_repeat`` audit record: `request` started nothing, and was `answered`
        so. Best effort: a record that cannot be written is logged, the answer still given."""
        if self._audit is None:
            return
        try:
            await self._record(self._audit, "execution_repeat", request, answered=answered)
        except AuditLogError as exc:
            logger.warning(
                "execution %s: its repeat (%s) is not in the audit log: %s",
                request.execution_id,
                answered,
                exc,
            )

    async def _record(
        self, audit: AuditLog, action: AuditEvent, request: ExecuteRequest, **details: Any
    ) -> None:
        """One record of `action` about `request`, this manager its actor."""
        await audit.record(
            action,
            skill=request.skill,
            version=request.version,
            run=request.run_id,
            actor=self._manager_id,
            script=request.script,
            execution_id=request.execution_id,
            **details,
        )
