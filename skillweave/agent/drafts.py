"""`Drafts`: the ``create_skill`` and ``publish_skill`` calls of an agent that writes skills.

:meth:`Drafts.create` checks a draft's parts (``skillweave.agent.authoring``), its name and the
run's draft and script-run limits, has the runtime build and try it, and keeps the version it
kept; :meth:`Drafts.publish` asks a person (``skillweave.agent.approvals``) and has the runtime
publish the approved draft. Called by the tool dispatch (``skillweave.agent.dispatch``) when the
run may author. Pure: every side effect is one runtime call.
"""

from __future__ import annotations

from skillweave.agent.approvals import Approvals, why
from skillweave.agent.authoring import AuthoringError, draft_parts, not_a_draft, too_many_drafts
from skillweave.agent.disclosure import attachable
from skillweave.agent.effect_models import ApprovalRequest, CreateSkillInput, PublishSkillInput
from skillweave.agent.effects import CREATE_SKILL, PUBLISH_SKILL, Runtime
from skillweave.agent.idempotency import execution_key
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, check_runs, string_argument
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import AgentState, DraftSkill
from skillweave.llm.messages import ToolCall

__all__ = ["Drafts"]


class Drafts:
    """The skills one run writes: drafting them and publishing what a person approved."""

    def __init__(
        self, runtime: Runtime, spec: AgentSpec, journal: Journal, approvals: Approvals
    ) -> None:
        self._runtime = runtime
        self._spec = spec
        self._journal = journal
        self._approvals = approvals

    async def create(self, state: AgentState, call: ToolCall) -> None:
        """Answer a ``create_skill`` call (raises :class:`Refusal` for what it refuses)."""
        try:
            name, description, instructions, files, examples = draft_parts(call.arguments)
        except AuthoringError as exc:
            raise Refusal(str(exc)) from None
        if name not in state.drafts and name in attachable(state.roots, state.active):
            raise Refusal(
                f"A skill named {name!r} exists already; activate it, or write yours under "
                "another name."
            )
        if name not in state.drafts and len(state.drafts) >= self._spec.authoring.max_drafts:
            raise Refusal(too_many_drafts(self._spec.authoring.max_drafts))
        check_runs(state, len(examples))
        seq = state.next_seq
        previous = state.drafts.get(name)
        outcome = await self._runtime.call(
            CREATE_SKILL,
            CreateSkillInput(
                run_id=state.run_id,
                seq=seq,
                tool_call_id=call.id,
                execution_id=execution_key(state.run_id, seq),
                name=name,
                description=description,
                instructions=instructions,
                files=files,
                examples=examples,
                allowed=self._spec.skills,
                pinned=self._spec.pinned,
                replaces=previous.version if previous is not None else None,
            ),
        )
        state.script_runs += outcome.runs
        self._journal.append_outcome(state, outcome, kind="script")
        if outcome.version is not None:
            state.drafts[name] = DraftSkill(
                version=outcome.version, report=outcome.report, evals=outcome.evals
            )
            state.active.pop(name, None)  # an earlier draft's activation is of its old text
            if name not in state.roots:
                state.roots = (*state.roots, name)
        self._journal.emit(
            state,
            "skill_drafted",
            skill=name,
            version=outcome.version,
            tool=call.name,
            status="kept" if outcome.version is not None else "refused",
            detail=outcome.report or outcome.summary,
        )

    async def publish(self, state: AgentState, call: ToolCall) -> None:
        """Answer a ``publish_skill`` call (raises :class:`Refusal` for what it refuses)."""
        name = string_argument(call, "name")
        draft = state.drafts.get(name)
        if draft is None:
            raise Refusal(not_a_draft(name, {k: v.version for k, v in state.drafts.items()}))
        what = f"publish {name} version {draft.version[:12]}" + (
            f" ({draft.evals})" if draft.evals else ""
        )
        request = ApprovalRequest(
            seq=state.next_seq,
            skill=name,
            script="",
            action="publish",
            version=draft.version,
            report=draft.report,
            evals=draft.evals,
            timeout_seconds=self._spec.approvals.timeout_seconds,
        )
        decision = await self._approvals.ask(state, request, what)
        if not decision.approved:
            raise Refusal(
                f"Publishing {name!r} was not approved{why(decision)} It stays a draft of this run."
            )
        outcome = await self._runtime.call(
            PUBLISH_SKILL,
            PublishSkillInput(
                run_id=state.run_id,
                seq=state.next_seq,
                tool_call_id=call.id,
                name=name,
                version=draft.version,
                approved_by=decision.by,
            ),
        )
        self._journal.append_outcome(state, outcome, kind="script")
        self._journal.emit(
            state,
            "skill_published",
            skill=name,
            version=draft.version,
            tool=call.name,
            status="published" if outcome.published else "refused",
            detail=outcome.summary,
        )
