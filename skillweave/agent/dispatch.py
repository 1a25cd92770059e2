"""`ToolDispatch`: the answer to each tool call the model makes.

It checks a call's arguments against the tool's schema as offered, then runs it:
``activate_skill`` (also the loop's preloads), ``read_skill_resource`` (deferred to the next
model call where the runtime lets reads ride with it), ``run_skill_script``,
``search_skills`` when the catalog offers it, script runs and an executable skill's own tools
(``skillweave.agent.script_runs``), the authoring calls (``skillweave.agent.drafts``) when
the run may author, and the registry calls (``skillweave.agent.acquisitions``) when it may
acquire. What the disclosure rules (``skillweave.agent.disclosure``) refuse is
answered as a tool result the model can act on. Called by the agent loop
(``skillweave.agent.loop``). Pure: every side effect is one runtime call.
"""

from __future__ import annotations

from typing import Final

from skillweave.agent import disclosure
from skillweave.agent.acquisition import offers_find
from skillweave.agent.acquisitions import Acquisitions
from skillweave.agent.disclosure import (
    attachable,
    find_skill_tool,
)
from skillweave.agent.drafts import Drafts
from skillweave.agent.effect_models import (
    LoadSkillInput,
    ReadResourceInput,
    SearchInput,
)
from skillweave.agent.effects import (
    LOAD_SKILL,
    READ_SKILL_RESOURCE,
    SEARCH_SKILLS,
    Runtime,
)
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, string_argument
from skillweave.agent.script_runs import ScriptRuns
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import ActiveSkill, AgentState, TranscriptEntry
from skillweave.agent.tools import tool_specs
from skillweave.llm.messages import Message, ToolCall

__all__ = ["ToolDispatch"]

_REFUSAL_CHARS: Final = 1_000
"""The most characters a read's refusal (no such file, too large, binary, withheld) has
besides its path."""


def _read_bound(skill: ActiveSkill, path: str) -> int | None:
    """The most characters a read of `path` in `skill` answers (None: not known)."""
    if skill.read_chars is None:
        return None
    return max(skill.read_chars, _REFUSAL_CHARS + 2 * len(path))


class ToolDispatch:
    """Answers one run's tool calls against `runtime`.

    Args:
        runtime: where every side effect goes.
        spec: the agent (allowed skills, pins, approvals).
        journal: the run's transcript and events.
        runs: the script runs (``run_skill_script`` and skill tools).
        drafts: the authoring calls.
        acquisitions: the registry calls.
        top_k: how many skills a search returns.
    """

    def __init__(
        self,
        runtime: Runtime,
        spec: AgentSpec,
        *,
        journal: Journal,
        runs: ScriptRuns,
        drafts: Drafts,
        acquisitions: Acquisitions,
        top_k: int,
    ) -> None:
        self._runtime = runtime
        self._spec = spec
        self._journal = journal
        self._runs = runs
        self._drafts = drafts
        self._acquisitions = acquisitions
        self._top_k = top_k

    async def call(self, state: AgentState, call: ToolCall, *, cut_off: bool = False) -> None:
        """Answer `call` (in a reply cut off at the output limit when `cut_off`)."""
        try:
            self._check_arguments(state, call, cut_off=cut_off)
            match call.name:
                case disclosure.ACTIVATE_SKILL:
                    name = string_argument(call, "name")
                    await self.activate(state, state.aliases.get(name, name), call_id=call.id)
                case disclosure.READ_SKILL_RESOURCE:
                    await self._read(state, call)
                case disclosure.RUN_SKILL_SCRIPT:
                    await self._runs.run_script(state, call, self.active(state, call))
                case disclosure.SEARCH_SKILLS if state.search_enabled:
                    await self._search(state, call)
                case disclosure.CREATE_SKILL if state.authoring:
                    await self._drafts.create(state, call)
                case disclosure.PUBLISH_SKILL if state.authoring:
                    await self._drafts.publish(state, call)
                case disclosure.FIND_SKILLS if offers_find(state):
                    await self._acquisitions.find(state, call)
                case disclosure.REQUEST_SKILL if offers_find(state) and state.found:
                    await self._acquisitions.request(state, call)
                case _:
                    tool = find_skill_tool(state.active, call.name)
                    if tool is None:
                        offered = [spec.name for spec in tool_specs(state)]
                        raise Refusal(disclosure.unknown_tool(call.name, offered))
                    await self._runs.run_tool(state, call, *tool)
        except Refusal as refusal:
            self._refuse(state, call, str(refusal))

    def _check_arguments(self, state: AgentState, call: ToolCall, *, cut_off: bool) -> None:
        """Refuse a call of an offered tool whose arguments were unreadable or do not match its
        schema as offered (a tool not offered is refused by the dispatch, naming the others)."""
        spec = next((spec for spec in tool_specs(state) if spec.name == call.name), None)
        if spec is None:
            return
        refusal = disclosure.arguments_refusal(
            call.name, call.arguments, spec.input_schema, cut_off=cut_off
        )
        if refusal is not None:
            raise Refusal(refusal)

    def _refuse(self, state: AgentState, call: ToolCall, text: str) -> None:
        self._journal.append_own(
            state,
            Message(
                role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=True
            ),
            kind="note",
        )
        self._journal.emit(state, "tool_refused", tool=call.name, detail=text)

    async def activate(self, state: AgentState, name: str, *, call_id: str | None) -> None:
        """Activate the skill `name`: for a call `call_id`, or a preload when None (raises
        :class:`Refusal` when the disclosure rules refuse it)."""
        if name in state.active and call_id is None:
            return  # a preload of what is active already: nothing to say
        refusal = disclosure.activation_refusal(name, roots=state.roots, active=state.active)
        if refusal is not None:
            raise Refusal(refusal)
        seq = state.next_seq
        draft = state.drafts.get(name)
        loaded = await self._runtime.call(
            LOAD_SKILL,
            LoadSkillInput(
                run_id=state.run_id,
                skill=name,
                draft=draft.version if draft is not None else None,
                seq=seq,
                tool_call_id=call_id or "",
                allowed=self._spec.skills,
                pinned=self._spec.pinned,
                taken_tools=disclosure.registered_tools(state.active),
                acquired=state.acquired.get(name),
            ),
        )
        role = "tool" if call_id else "user"
        if loaded.refused is not None:
            state.transcript.append(
                TranscriptEntry(seq=seq, role=role, kind="note", chars=loaded.chars)
            )
            self._journal.emit(
                state,
                "tool_refused",
                skill=name,
                tool=disclosure.ACTIVATE_SKILL,
                detail=loaded.refused,
            )
            return
        state.active[name] = ActiveSkill(
            name=name,
            version=loaded.version,
            children=loaded.children,
            tools=loaded.tools,
            allowed=loaded.allowed,
            read_chars=loaded.read_chars,
        )
        state.transcript.append(
            TranscriptEntry(seq=seq, role=role, kind="skill", chars=loaded.chars)
        )
        detail = "; ".join(loaded.notes)
        if loaded.children:
            detail = f"sub-skills: {', '.join(loaded.children)}" + (f"; {detail}" if detail else "")
        self._journal.emit(
            state,
            "skill_activated",
            skill=name,
            version=loaded.version,
            detail=detail,
            tools_registered=tuple(t.name for t in loaded.tools),
        )

    def active(self, state: AgentState, call: ToolCall) -> ActiveSkill:
        """The active skill `call` names in its ``skill`` argument; a :class:`Refusal` when that
        skill is not active."""
        name = string_argument(call, "skill")
        skill = state.active.get(state.aliases.get(name, name))
        if skill is None:
            raise Refusal(disclosure.not_active(name, attachable(state.roots, state.active)))
        return skill

    async def _read(self, state: AgentState, call: ToolCall) -> None:
        skill = self.active(state, call)
        path = string_argument(call, "path")
        request = ReadResourceInput(
            run_id=state.run_id,
            skill=skill.name,
            version=skill.version,
            path=path,
            seq=state.next_seq,
            tool_call_id=call.id,
        )
        bound = _read_bound(skill, path)
        if (
            self._runtime.reads_ride_with_model_calls()
            and bound is not None
            and state.visible_chars() + bound <= state.budgets.transcript_chars
        ):
            # The next model call does it, before it reads the transcript back. Counted at
            # the most it can answer, the read cannot make that call pass the budget, so
            # compaction elides what it would have elided had the read been done now.
            self._journal.defer_read(state, request, chars=bound)
        else:
            outcome = await self._runtime.call(READ_SKILL_RESOURCE, request)
            self._journal.append_outcome(state, outcome, kind="resource")
        self._journal.emit(state, "resource_read", skill=skill.name, tool=call.name, detail=path)

    async def _search(self, state: AgentState, call: ToolCall) -> None:
        query = string_argument(call, "query")
        outcome = await self._runtime.call(
            SEARCH_SKILLS,
            SearchInput(
                run_id=state.run_id,
                query=query,
                top_k=self._top_k,
                allowed=self._spec.skills,
                pinned=self._spec.pinned,
                seq=state.next_seq,
                tool_call_id=call.id,
            ),
        )
        self._journal.append_outcome(state, outcome, kind="tool")
        state.roots = state.roots + tuple(n for n in outcome.found if n not in state.roots)
        # The model looked in its own library: what it found may not fit, so find_skills
        # (acquisition on_miss) is offered from now on; the model judges the miss.
        state.library_searched = True
        self._journal.emit(state, "skills_searched", tool=call.name, detail=query)
