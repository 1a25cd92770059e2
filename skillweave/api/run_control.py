"""Talking to a running run: a follow-up message, the decision on the approval it waits on, a
cancel. :class:`RunControl` is made by the run service (:mod:`skillweave.api.run_service`) and
called by the run routes; an engine's refusal (the run has ended, waits on no approval…) is a
409.
"""

from __future__ import annotations

import inspect
from typing import Any

from skillweave.agent import ApprovalDecision
from skillweave.api.problems import ApiProblem
from skillweave.api.run_schemas import Run
from skillweave.engines import Engine
from skillweave.errors import AgentError

__all__ = ["RunControl"]


class RunControl:
    """Sends what a user decides to the runs of one engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def send(self, run: Run, text: str) -> None:
        """A follow-up message for `run` (taken before its next model call)."""
        try:
            await self._engine.send(run.id, text)
        except AgentError as exc:
            raise ApiProblem(409, str(exc)) from None

    async def cancel(self, run: Run, reason: str) -> None:
        """Stop `run` and wait until it has stopped (`reason` kept where the engine keeps it:
        temporal)."""
        if run.result is not None:
            raise ApiProblem(409, f"run {run.id!r} has ended ({run.status})")
        cancel: Any = self._engine.cancel
        try:
            if "reason" in inspect.signature(cancel).parameters:
                await cancel(run.id, reason=reason)
            else:
                await cancel(run.id)
        except AgentError as exc:
            raise ApiProblem(409, str(exc)) from None

    async def decide(self, run: Run, *, approved: bool, note: str) -> None:
        """Approve (or deny) the script run `run` waits on."""
        if run.result is not None:
            raise ApiProblem(409, f"run {run.id!r} has ended ({run.status})")
        decision = ApprovalDecision(approved=approved, note=note, by="the API")
        try:
            await self._engine.approve(run.id, decision)
        except AgentError as exc:
            raise ApiProblem(409, str(exc)) from None
