"""`Approvals`: asking a person before a script runs or a draft is published.

:meth:`Approvals.ask` puts a request to the runtime between an ``approval_requested`` and an
``approval_decided`` event; :meth:`Approvals.approve_run` refuses the run when the person did
not approve it. Used by the tool dispatch (``skillweave.agent.dispatch``) and the drafts
(``skillweave.agent.drafts``). Pure: the waiting is the runtime's.
"""

from __future__ import annotations

from skillweave.agent.effect_models import ApprovalDecision, ApprovalRequest
from skillweave.agent.effects import Runtime
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, because
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import AgentState

__all__ = ["Approvals", "why"]


def why(decision: ApprovalDecision) -> str:
    """The end of the sentence that says why a person did not approve: their note, or "."."""
    return because(decision.note)


class Approvals:
    """Asks a person through `runtime`, under the agent's approval settings."""

    def __init__(self, runtime: Runtime, spec: AgentSpec, journal: Journal) -> None:
        self._runtime = runtime
        self._spec = spec
        self._journal = journal

    async def approve_run(
        self, state: AgentState, *, skill: str, script: str, args: tuple[str, ...]
    ) -> None:
        """Ask for the run of `skill`/`script`; a :class:`Refusal` unless it was approved."""
        what = f"{skill}/{script}" + (f" {' '.join(args)}" if args else "")
        request = ApprovalRequest(
            seq=state.next_seq,
            skill=skill,
            script=script,
            args=args,
            timeout_seconds=self._spec.approvals.timeout_seconds,
        )
        decision = await self.ask(state, request, what)
        if not decision.approved:
            raise Refusal(
                f"Running {what} was not approved{why(decision)} Do not retry it unchanged."
            )

    async def ask(self, state: AgentState, request: ApprovalRequest, what: str) -> ApprovalDecision:
        """Ask a person: ``approval_requested``, their decision, ``approval_decided``."""
        self._journal.emit(state, "approval_requested", skill=request.skill, detail=what)
        decision = await self._runtime.request_approval(request)
        verdict = "approved" if decision.approved else "denied"
        self._journal.emit(
            state,
            "approval_decided",
            skill=request.skill,
            status=verdict,
            detail=f"{what}: {verdict}" + (f" ({decision.note})" if decision.note else ""),
        )
        return decision
