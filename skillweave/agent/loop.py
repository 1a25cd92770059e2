"""The agent loop: a deterministic state machine over `AgentState`.

:func:`new_state` makes a job; :class:`AgentLoop` drives it. Each turn: take user messages that
arrived, check the budgets, compact the transcript, call the model, then answer each tool call
it made, in order. Every side effect is one call on the ``Runtime`` port; the loop itself has
no I/O, no clock and no randomness (ids come from the job id and transcript positions), so it
replays identically inside a Temporal workflow.

Rules the loop enforces (each answered as a tool result the model can act on; the disclosure
rules, their texts and the tool specs are ``skillweave.agent.disclosure``'s, which the MCP
front door shares):

- ``activate_skill`` names a skill that is attachable now (the enum; a namespaced skill also by
  its qualified name, ``web.scraper``); repeats get "already active"; a parent's activation
  makes its children attachable and an executable skill's activation registers its tools.
- ``read_skill_resource`` and ``run_skill_script`` need the skill active, and run against the
  version pinned at activation.
- input artifacts must be ones the job knows (its inputs and earlier outputs).
- while active skills limit the tools (``allowed-tools``), a run none of them allows is
  refused, and a run a skill allows for its own scripts needs no person's approval.
- unknown tools and malformed arguments are refused with what would have been accepted:
  arguments that were not readable JSON, or that do not match the tool's schema (an executable
  skill's from its ``--help-json`` too), are refused before anything runs.

It reads what the model sent back: a reply with no text and no tool call, or an answer cut off
at the output limit (``stop_reason`` ``max_tokens``), is not an answer; the model is asked again,
up to :data:`REPLY_RETRIES` times in a row, and then the job ends ``failed`` (``empty reply: …``
or ``truncated: …``), never ``completed``. A script run the runtime refused before any sandbox
was claimed (``ScriptOutcome.ran`` false: no such script) does not count against the budget.

Budgets (turns, tokens, script runs) end the job with status ``budget_exhausted`` and a reason.
Infrastructure failures raised by the runtime end it as ``failed`` and propagate.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from skillweave.agent import disclosure
from skillweave.agent.authoring import AuthoringError, draft_parts, not_a_draft, too_many_drafts
from skillweave.agent.compaction import compact
from skillweave.agent.disclosure import (
    ARGS_NOT_STRINGS,
    INPUT_ARTIFACTS,
    attachable,
    find_skill_tool,
    names_preview,
)
from skillweave.agent.effects import (
    CREATE_SKILL,
    INVOKE_MODEL,
    LOAD_SKILL,
    PREPARE_CATALOG,
    PUBLISH_SKILL,
    READ_SKILL_RESOURCE,
    RECORD_TRANSCRIPT,
    RUN_SKILL_SCRIPT,
    SEARCH_SKILLS,
    Runtime,
)
from skillweave.agent.events import AgentEvent, EventKind
from skillweave.agent.identity import execution_key
from skillweave.agent.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    CatalogInput,
    CreateSkillInput,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    PublishSkillInput,
    ReadResourceInput,
    RecordInput,
    RunScriptInput,
    SearchInput,
    ToolInvocation,
    ToolOutcome,
    TranscriptView,
    TranscriptWrite,
    WaitInput,
)
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import (
    ActiveSkill,
    AgentState,
    DraftSkill,
    EntryKind,
    JobStatus,
    SkillTool,
    TranscriptEntry,
)
from skillweave.agent.tools import tool_specs
from skillweave.config import CatalogMode
from skillweave.llm.messages import Message, ToolCall
from skillweave.storage.base import ArtifactRef
from skillweave.terminal import counted

__all__ = ["REPLY_RETRIES", "AgentLoop", "new_state", "system_prompt"]

_SUMMARY_MAX: Final = 300

REPLY_RETRIES: Final = 2
"""How many replies in a row that are no answer (empty, or cut off at the output limit) the
model is asked again after; the next one ends the job ``failed``."""

_EMPTY_NOTE: Final = (
    "Your last reply was empty: no text and no tool call. Go on with the task: call one of "
    "the tools, or give your answer as text."
)


def system_prompt(spec: AgentSpec, catalog: str) -> str:
    """The system prompt: the agent's instruction, then the tier-1 catalog."""
    return f"{spec.instruction.strip()}\n\n{catalog.strip()}\n"


def new_state(
    *,
    job_id: str,
    task: str,
    spec: AgentSpec,
    inputs: Sequence[ArtifactRef] = (),
    store_id: str | None = None,
) -> AgentState:
    """A job that has not started: the task and its input artifacts."""
    return AgentState(
        job_id=job_id,
        agent=spec.name,
        model=spec.model,
        task=task,
        budgets=spec.limits,
        authoring=spec.authoring.enabled,
        store_id=store_id,
        inputs=list(inputs),
        artifacts={ref.key: ref for ref in inputs},
    )


def _task_text(state: AgentState) -> str:
    if not state.inputs:
        return state.task
    files = "\n".join(f"- {ref.key} ({counted(ref.size, 'byte')})" for ref in state.inputs)
    return f"{state.task}\n\nAttached files (artifact keys):\n{files}"


def _calls(count: int) -> str:
    return counted(count, "tool call")


def _cut_off_note(limit: int) -> str:
    return (
        f"Your last reply was cut off at the output limit ({limit} tokens), so it is not taken "
        "as your answer. Give your answer again, shorter, or go on with a tool call."
    )


def _reply_detail(turn: ModelTurn) -> str:
    """What a model call brought back, for its ``model_called`` event."""
    message = turn.message
    cut = " (cut off at the output limit)" if turn.stop_reason == "max_tokens" else ""
    if message.tool_calls:
        return _calls(len(message.tool_calls)) + cut
    if turn.stop_reason == "max_tokens":
        return "an answer cut off at the output limit"
    return "answer" if message.text.strip() else "an empty reply"


def _why(decision: ApprovalDecision) -> str:
    """The end of the sentence that says why a person did not approve: their note, or "."."""
    return f": {decision.note}" if decision.note else "."


class _Refusal(Exception):
    """A tool call the loop answers with a message instead of running it."""


class _BudgetExhausted(Exception):
    pass


class AgentLoop:
    """Runs one job's turns against a runtime.

    Args:
        runtime: where every side effect goes.
        spec: the agent (instruction, allowed skills, catalog, preload, limits).
        on_event: called with each :class:`AgentEvent`, in order (must not block).
        pause: asked after every turn; when it says so, :meth:`run` returns the unfinished
            state at that safe point (the Temporal engine continues it as a new run).
        checks_replies: read what the model sent back (the module docstring: ask again after
            a reply that is no answer, refuse unreadable or schema-invalid arguments before
            anything runs). False only to replay jobs the Temporal workflow started before that
            rule, which took any reply without tool calls as the answer and ran any arguments.
    """

    def __init__(
        self,
        runtime: Runtime,
        spec: AgentSpec,
        *,
        on_event: Callable[[AgentEvent], None] | None = None,
        pause: Callable[[AgentState], bool] | None = None,
        catalog_mode: CatalogMode = "enabled",
        catalog_top_k: int = 8,
        checks_replies: bool = True,
    ) -> None:
        self.runtime = runtime
        self.spec = spec
        self._on_event = on_event
        self._pause = pause
        self._checks_replies = checks_replies
        self._catalog_mode = spec.catalog.mode or catalog_mode
        self._top_k = spec.catalog.top_k or catalog_top_k
        self._unsaved: list[TranscriptWrite] = []

    # --- driving ---------------------------------------------------------------------------

    async def run(self, state: AgentState) -> AgentState:
        """Run `state` until it finishes (or ``pause`` says so); returns it (also updated in
        place). A paused state is ``running`` and can be run again, by this loop or another.

        Raises whatever the runtime raises (after marking the job ``failed``), and
        ``asyncio.CancelledError`` (after marking it ``cancelled``).
        """
        try:
            if not state.system:
                await self._prepare(state)
            while not state.finished:
                await self._turn(state)
                state.fold()
                if not state.finished and self._pause is not None and self._pause(state):
                    break
        except _BudgetExhausted as exc:
            self._finish(state, "budget_exhausted", str(exc))
        except asyncio.CancelledError:
            self._finish(state, "cancelled", "cancelled by request")
            raise
        except GeneratorExit:
            # The run is being discarded, not ended: a worker that stopped dropped its copy
            # (the job lives on in Temporal). Nothing is recorded, nor can be, from here.
            self._unsaved.clear()
            raise
        except BaseException as exc:
            self._finish(state, "failed", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if self._unsaved:
                writes, self._unsaved = tuple(self._unsaved), []
                await asyncio.shield(
                    self.runtime.call(
                        RECORD_TRANSCRIPT, RecordInput(run_id=state.run_id, writes=writes)
                    )
                )
        return state

    async def _prepare(self, state: AgentState) -> None:
        result = await self.runtime.call(
            PREPARE_CATALOG,
            CatalogInput(
                run_id=state.run_id,
                task=state.task,
                mode=self._catalog_mode,
                top_k=self._top_k,
                allowed=self.spec.skills,
                pinned=self.spec.pinned,
                store_id=state.store_id,
                preload=self.spec.preload.enabled,
                preload_threshold=self.spec.preload.min_score
                if self.spec.preload.enabled
                else None,
            ),
        )
        state.system = system_prompt(self.spec, result.catalog)
        state.roots = result.roots
        state.search_enabled = result.search_enabled
        state.aliases = dict(result.aliases)
        count = len(result.roots)
        self._emit(state, "job_started", detail=f"{count} skill{'s' * (count != 1)} in the catalog")
        self._append_own(state, Message(role="user", text=_task_text(state)), kind="task")
        for name in result.auto_load:
            if name not in state.active and name in attachable(state.roots, state.active):
                await self._activate(state, name, call_id=None)
                self._emit(state, "preloaded", skill=name, detail="auto_load")
        if result.preload and result.preload in attachable(state.roots, state.active):
            await self._activate(state, result.preload, call_id=None)
            self._emit(state, "preloaded", skill=result.preload)

    async def _turn(self, state: AgentState) -> None:
        for text in await self.runtime.wait_for_input(WaitInput(timeout_seconds=0)):
            self._receive(state, text)
        budgets = state.budgets
        if state.turn >= budgets.max_turns:
            raise _BudgetExhausted(
                f"max_turns reached ({counted(budgets.max_turns, 'model call')})"
            )
        elided = compact(state)
        if elided:
            self._emit(state, "compacted", detail=f"{elided} older tool outputs elided to refs")
        writes, self._unsaved = tuple(self._unsaved), []
        reply_seq = state.next_seq
        turn = await self.runtime.call(
            INVOKE_MODEL,
            InvokeModelInput(
                run_id=state.run_id,
                system=state.system,
                tools=tool_specs(state),
                view=TranscriptView(upto=reply_seq, elide_before=state.elide_before),
                writes=writes,
                reply_seq=reply_seq,
                max_output_tokens=budgets.max_output_tokens,
                model=state.model,
            ),
        )
        state.turn += 1
        state.usage = state.usage + turn.usage
        message = turn.message
        size = len(message.text) + sum(
            len(c.name) + len(json.dumps(c.arguments)) for c in message.tool_calls
        )
        state.transcript.append(
            TranscriptEntry(seq=reply_seq, role="assistant", kind="assistant", chars=size)
        )
        self._emit(
            state,
            "model_called",
            usage=turn.usage,
            model=turn.model or None,
            detail=_reply_detail(turn),
        )
        if state.usage.total_tokens >= budgets.max_tokens:
            raise _BudgetExhausted(
                f"max_tokens reached ({state.usage.total_tokens} of {budgets.max_tokens})"
            )
        if not message.tool_calls:
            if self._checks_replies and self._no_answer(state, turn):
                return
            state.unusable_replies = 0
            await self._answered(state, message.text)
            return
        state.unusable_replies = 0
        cut_off = turn.stop_reason == "max_tokens"
        for call in message.tool_calls:
            await self._call(state, call, cut_off=cut_off)

    def _no_answer(self, state: AgentState, turn: ModelTurn) -> bool:
        """Whether the reply `turn` (with no tool call) is no answer: empty, or cut off at the
        output limit. Such a reply is answered with a note asking again, or, after
        :data:`REPLY_RETRIES` of them in a row, ends the job ``failed``."""
        limit = state.budgets.max_output_tokens
        if turn.stop_reason == "max_tokens":
            note = _cut_off_note(limit)
            reason = (
                f"truncated: the model's reply was cut off at the output limit ({limit} tokens)"
            )
        elif not turn.message.text.strip():
            note = _EMPTY_NOTE
            reason = "empty reply: the model answered with no text and no tool call"
        else:
            return False
        if state.unusable_replies >= REPLY_RETRIES:
            count = state.unusable_replies + 1
            self._finish(state, "failed", f"{reason}, {counted(count, 'time')} in a row")
            return True
        state.unusable_replies += 1
        self._append_own(state, Message(role="user", text=note), kind="note")
        return True

    async def _answered(self, state: AgentState, text: str) -> None:
        state.answer = text
        self._emit(state, "answered", detail=text[:_SUMMARY_MAX])
        if self.spec.follow_up_seconds > 0:
            more = await self.runtime.wait_for_input(
                WaitInput(timeout_seconds=self.spec.follow_up_seconds)
            )
            if more:
                for message in more:
                    self._receive(state, message)
                return
        self._finish(state, "completed", "answered")

    def _receive(self, state: AgentState, text: str) -> None:
        self._append_own(state, Message(role="user", text=text), kind="user")
        self._emit(state, "message_received", detail=text[:_SUMMARY_MAX])

    # --- tool calls ------------------------------------------------------------------------

    async def _call(self, state: AgentState, call: ToolCall, *, cut_off: bool = False) -> None:
        try:
            if self._checks_replies:
                self._check_arguments(state, call, cut_off=cut_off)
            match call.name:
                case disclosure.ACTIVATE_SKILL:
                    name = _string(call, "name")
                    await self._activate(state, state.aliases.get(name, name), call_id=call.id)
                case disclosure.READ_SKILL_RESOURCE:
                    await self._read(state, call)
                case disclosure.RUN_SKILL_SCRIPT:
                    await self._run_script(state, call)
                case disclosure.SEARCH_SKILLS if state.search_enabled:
                    await self._search(state, call)
                case disclosure.CREATE_SKILL if state.authoring:
                    await self._create(state, call)
                case disclosure.PUBLISH_SKILL if state.authoring:
                    await self._publish(state, call)
                case _:
                    tool = find_skill_tool(state.active, call.name)
                    if tool is None:
                        raise _Refusal(self._unknown_tool(state, call.name))
                    await self._run_tool(state, call, *tool)
        except _Refusal as refusal:
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
            raise _Refusal(refusal)

    def _refuse(self, state: AgentState, call: ToolCall, text: str) -> None:
        self._append_own(
            state,
            Message(
                role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=True
            ),
            kind="note",
        )
        self._emit(state, "tool_refused", tool=call.name, detail=text)

    def _unknown_tool(self, state: AgentState, name: str) -> str:
        offered = [spec.name for spec in tool_specs(state)]
        return disclosure.unknown_tool(name, offered)

    async def _activate(self, state: AgentState, name: str, *, call_id: str | None) -> None:
        if name in state.active and call_id is None:
            return  # a preload of what is active already: nothing to say
        refusal = disclosure.activation_refusal(name, roots=state.roots, active=state.active)
        if refusal is not None:
            raise _Refusal(refusal)
        seq = state.next_seq
        draft = state.drafts.get(name)
        loaded = await self.runtime.call(
            LOAD_SKILL,
            LoadSkillInput(
                run_id=state.run_id,
                skill=name,
                draft=draft.version if draft is not None else None,
                seq=seq,
                tool_call_id=call_id or "",
                allowed=self.spec.skills,
                pinned=self.spec.pinned,
                taken_tools=disclosure.registered_tools(state.active),
            ),
        )
        role = "tool" if call_id else "user"
        if loaded.refused is not None:
            state.transcript.append(
                TranscriptEntry(seq=seq, role=role, kind="note", chars=loaded.chars)
            )
            self._emit(
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
        )
        state.transcript.append(
            TranscriptEntry(seq=seq, role=role, kind="skill", chars=loaded.chars)
        )
        detail = "; ".join(loaded.notes)
        if loaded.children:
            detail = f"sub-skills: {', '.join(loaded.children)}" + (f"; {detail}" if detail else "")
        self._emit(
            state,
            "skill_activated",
            skill=name,
            version=loaded.version,
            detail=detail,
            tools_registered=tuple(t.name for t in loaded.tools),
        )

    def _active(self, state: AgentState, call: ToolCall) -> ActiveSkill:
        name = _string(call, "skill")
        skill = state.active.get(state.aliases.get(name, name))
        if skill is None:
            raise _Refusal(disclosure.not_active(name, attachable(state.roots, state.active)))
        return skill

    async def _read(self, state: AgentState, call: ToolCall) -> None:
        skill = self._active(state, call)
        path = _string(call, "path")
        outcome = await self.runtime.call(
            READ_SKILL_RESOURCE,
            ReadResourceInput(
                run_id=state.run_id,
                skill=skill.name,
                version=skill.version,
                path=path,
                seq=state.next_seq,
                tool_call_id=call.id,
            ),
        )
        self._append_outcome(state, outcome, kind="resource")
        self._emit(state, "resource_read", skill=skill.name, tool=call.name, detail=path)

    def _artifacts(self, state: AgentState, keys: object, argument: str) -> tuple[ArtifactRef, ...]:
        if keys is None:
            return ()
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise _Refusal(disclosure.artifact_list_needed(argument))
        refs = []
        for key in keys:
            ref = state.artifacts.get(key.strip())
            if ref is None:
                raise _Refusal(
                    f"Unknown artifact {key!r}. Artifacts of this job: "
                    f"{names_preview(list(state.artifacts))}."
                )
            refs.append(ref)
        return tuple(refs)

    def _count_run(self, state: AgentState) -> None:
        limit = state.budgets.max_script_runs
        if state.script_runs >= limit:
            raise _BudgetExhausted(f"max_script_runs reached ({counted(limit, 'script run')})")
        state.script_runs += 1

    async def _run_script(self, state: AgentState, call: ToolCall) -> None:
        skill = self._active(state, call)
        script = _string(call, "script")
        args = call.arguments.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            raise _Refusal(ARGS_NOT_STRINGS)
        inputs = self._artifacts(state, call.arguments.get("inputs"), "inputs")
        await self._execute(
            state,
            call,
            skill=skill,
            script=script,
            args=tuple(str(a) for a in args),
            inputs=inputs,
            run_json=None,
        )

    async def _run_tool(
        self, state: AgentState, call: ToolCall, skill: ActiveSkill, tool: SkillTool
    ) -> None:
        arguments = dict(call.arguments)
        inputs = self._artifacts(state, arguments.pop(INPUT_ARTIFACTS, None), INPUT_ARTIFACTS)
        await self._execute(
            state,
            call,
            skill=skill,
            script=tool.script,
            args=(),
            inputs=inputs,
            run_json=ToolInvocation(
                tool=tool.tool, arguments=arguments, shared_script=tool.shared_script
            ),
            tool=tool,
        )

    async def _execute(
        self,
        state: AgentState,
        call: ToolCall,
        *,
        skill: ActiveSkill,
        script: str,
        args: tuple[str, ...],
        inputs: tuple[ArtifactRef, ...],
        run_json: ToolInvocation | None,
        tool: SkillTool | None = None,
    ) -> None:
        if not disclosure.permits(state.active, skill=skill.name, script=script, tool=tool):
            what = call.name if tool is not None else f"Running {skill.name}/{script}"
            raise _Refusal(disclosure.not_permitted(state.active, what))
        if self.spec.approvals.required(skill.name) and not disclosure.pre_approved(
            state.active, skill=skill.name, script=script, tool=tool
        ):
            await self._approve(state, skill=skill.name, script=script, args=args)
        self._count_run(state)
        seq = state.next_seq
        outcome = await self.runtime.call(
            RUN_SKILL_SCRIPT,
            RunScriptInput(
                run_id=state.run_id,
                execution_id=execution_key(state.job_id, seq),
                skill=skill.name,
                version=skill.version,
                script=script,
                args=args,
                inputs=inputs,
                seq=seq,
                tool_call_id=call.id,
                tool_name=call.name,
                run_json=run_json,
            ),
        )
        if not outcome.ran:
            state.script_runs -= 1  # refused before any sandbox was claimed: not a run
        self._append_outcome(state, outcome, kind="script")
        for ref in outcome.outputs:
            state.artifacts[ref.key] = ref
            state.outputs.append(ref)
        self._emit(
            state,
            "script_ran",
            skill=skill.name,
            tool=call.name,
            detail=script,
            status=outcome.status,
            duration_ms=outcome.duration_ms,
            artifacts=outcome.outputs,
        )

    async def _approve(
        self, state: AgentState, *, skill: str, script: str, args: tuple[str, ...]
    ) -> None:
        what = f"{skill}/{script}" + (f" {' '.join(args)}" if args else "")
        request = ApprovalRequest(
            seq=state.next_seq,
            skill=skill,
            script=script,
            args=args,
            timeout_seconds=self.spec.approvals.timeout_seconds,
        )
        decision = await self._asked(state, request, what)
        if not decision.approved:
            raise _Refusal(
                f"Running {what} was not approved{_why(decision)} Do not retry it unchanged."
            )

    async def _asked(
        self, state: AgentState, request: ApprovalRequest, what: str
    ) -> ApprovalDecision:
        """Ask a person: ``approval_requested``, their decision, ``approval_decided``."""
        self._emit(state, "approval_requested", skill=request.skill, detail=what)
        decision = await self.runtime.request_approval(request)
        verdict = "approved" if decision.approved else "denied"
        self._emit(
            state,
            "approval_decided",
            skill=request.skill,
            status=verdict,
            detail=f"{what}: {verdict}" + (f" ({decision.note})" if decision.note else ""),
        )
        return decision

    # --- skills the agent writes ------------------------------------------------------------

    async def _create(self, state: AgentState, call: ToolCall) -> None:
        try:
            name, description, instructions, files, examples = draft_parts(call.arguments)
        except AuthoringError as exc:
            raise _Refusal(str(exc)) from None
        if name not in state.drafts and name in attachable(state.roots, state.active):
            raise _Refusal(
                f"A skill named {name!r} exists already; activate it, or write yours under "
                "another name."
            )
        if name not in state.drafts and len(state.drafts) >= self.spec.authoring.max_drafts:
            raise _Refusal(too_many_drafts(self.spec.authoring.max_drafts))
        limit = state.budgets.max_script_runs
        if state.script_runs + len(examples) > limit:
            raise _BudgetExhausted(f"max_script_runs reached ({counted(limit, 'script run')})")
        seq = state.next_seq
        previous = state.drafts.get(name)
        outcome = await self.runtime.call(
            CREATE_SKILL,
            CreateSkillInput(
                run_id=state.run_id,
                seq=seq,
                tool_call_id=call.id,
                execution_id=execution_key(state.job_id, seq),
                name=name,
                description=description,
                instructions=instructions,
                files=files,
                examples=examples,
                allowed=self.spec.skills,
                pinned=self.spec.pinned,
                replaces=previous.version if previous is not None else None,
            ),
        )
        state.script_runs += outcome.runs
        self._append_outcome(state, outcome, kind="script")
        if outcome.version is not None:
            state.drafts[name] = DraftSkill(version=outcome.version, report=outcome.report)
            state.active.pop(name, None)  # an earlier draft's activation is of its old text
            if name not in state.roots:
                state.roots = (*state.roots, name)
        self._emit(
            state,
            "skill_drafted",
            skill=name,
            version=outcome.version,
            tool=call.name,
            status="kept" if outcome.version is not None else "refused",
            detail=outcome.report or outcome.summary,
        )

    async def _publish(self, state: AgentState, call: ToolCall) -> None:
        name = _string(call, "name")
        draft = state.drafts.get(name)
        if draft is None:
            raise _Refusal(not_a_draft(name, {k: v.version for k, v in state.drafts.items()}))
        what = f"publish {name} version {draft.version[:12]}"
        request = ApprovalRequest(
            seq=state.next_seq,
            skill=name,
            script="",
            action="publish",
            version=draft.version,
            report=draft.report,
            timeout_seconds=self.spec.approvals.timeout_seconds,
        )
        decision = await self._asked(state, request, what)
        if not decision.approved:
            raise _Refusal(
                f"Publishing {name!r} was not approved{_why(decision)} It stays a draft of "
                "this job."
            )
        outcome = await self.runtime.call(
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
        self._append_outcome(state, outcome, kind="script")
        self._emit(
            state,
            "skill_published",
            skill=name,
            version=draft.version,
            tool=call.name,
            status="published" if outcome.published else "refused",
            detail=outcome.summary,
        )

    async def _search(self, state: AgentState, call: ToolCall) -> None:
        query = _string(call, "query")
        outcome = await self.runtime.call(
            SEARCH_SKILLS,
            SearchInput(
                run_id=state.run_id,
                query=query,
                top_k=self._top_k,
                allowed=self.spec.skills,
                pinned=self.spec.pinned,
                seq=state.next_seq,
                tool_call_id=call.id,
            ),
        )
        self._append_outcome(state, outcome, kind="tool")
        state.roots = state.roots + tuple(n for n in outcome.found if n not in state.roots)
        self._emit(state, "skills_searched", tool=call.name, detail=query)

    # --- bookkeeping -----------------------------------------------------------------------

    def _append_outcome(self, state: AgentState, outcome: ToolOutcome, *, kind: EntryKind) -> None:
        if outcome.seq != state.next_seq:
            raise RuntimeError(f"runtime stored seq {outcome.seq}, expected {state.next_seq}")
        state.transcript.append(
            TranscriptEntry(
                seq=outcome.seq,
                role="tool",
                kind=kind,
                chars=outcome.chars,
                summary=outcome.summary,
            )
        )

    def _append_own(self, state: AgentState, message: Message, *, kind: EntryKind) -> None:
        seq = state.next_seq
        self._unsaved.append(TranscriptWrite(seq=seq, message=message))
        state.transcript.append(
            TranscriptEntry(seq=seq, role=message.role, kind=kind, chars=len(message.text))
        )

    def _finish(self, state: AgentState, status: JobStatus, reason: str) -> None:
        if state.finished:
            return
        state.status = status
        state.reason = reason
        self._emit(state, "job_finished", status=status, detail=reason, usage=state.usage)

    def _emit(self, state: AgentState, kind: EventKind, **fields: Any) -> None:
        if self._on_event is not None:
            event = AgentEvent(
                kind=kind, job_id=state.job_id, turn=state.turn, at=self.runtime.now(), **fields
            )
            self._on_event(event)


def _string(call: ToolCall, name: str) -> str:
    value = call.arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _Refusal(disclosure.needs_string(call.name, name))
    return value.strip()
