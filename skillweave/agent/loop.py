"""The agent loop: a deterministic state machine over `AgentState`.

:func:`new_state` makes a run; :class:`AgentLoop` drives it. Each turn: take user messages that
arrived, check the budgets, compact the transcript, call the model, then answer each tool call
it made, in order. Every side effect is one call on the ``Runtime`` port; the loop itself has
no I/O, no clock and no randomness (ids come from the run id and transcript positions), so it
replays identically inside a Temporal workflow.

Rules the loop enforces (each answered as a tool result the model can act on; the disclosure
rules, their texts and the tool specs are ``skillweave.agent.disclosure``'s, which the MCP
front door shares):

- ``activate_skill`` names a skill that is attachable now (the enum; a namespaced skill also by
  its qualified name, ``web.scraper``); repeats get "already active"; a parent's activation
  makes its children attachable and an executable skill's activation registers its tools.
- ``read_skill_resource`` and ``run_skill_script`` need the skill active, and run against the
  version pinned at activation. Where the runtime lets reads ride with model calls, a read is
  deferred: the next model call does it first (:class:`~skillweave.agent.journal.Journal`
  counts it at the most it can answer until then, and a read that might push that call past
  the transcript budget is done at once); one still deferred when the run ends or pauses is
  done then.
- input artifacts must be ones the run knows (its inputs and earlier outputs).
- while active skills limit the tools (``allowed-tools``), a run none of them allows is
  refused, and a run a skill allows for its own scripts needs no person's approval.
- unknown tools and malformed arguments are refused with what would have been accepted:
  arguments that were not readable JSON, or that do not match the tool's schema (an executable
  skill's from its ``--help-json`` too), are refused before anything runs.

It reads what the model sent back: a reply with no text and no tool call, or an answer cut off
at the output limit (``stop_reason`` ``max_tokens``), is not an answer; the model is asked again,
up to :data:`~skillweave.agent.replies.REPLY_RETRIES` times in a row, and then the run ends
``failed`` (``empty reply: …`` or ``truncated: …``), never ``completed``. A script run the
runtime refused before any sandbox was claimed (``ScriptOutcome.ran`` false: no such script)
does not count against the budget.

Budgets (turns, tokens, script runs) end the run with status ``budget_exhausted`` and a reason.
Infrastructure failures raised by the runtime end it as ``failed`` and propagate.

The loop drives the turns; its collaborators do the rest: ``skillweave.agent.dispatch``
answers tool calls (with ``script_runs``, ``approvals``, ``drafts`` and ``acquisitions``),
``skillweave.agent.journal`` records the transcript and events, ``skillweave.agent.refusals``
holds the budget checks and ``skillweave.agent.replies`` reads what the model sent back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Final

from skillweave.agent.acquisitions import Acquisitions
from skillweave.agent.approvals import Approvals
from skillweave.agent.compaction import compact
from skillweave.agent.disclosure import attachable
from skillweave.agent.dispatch import ToolDispatch
from skillweave.agent.drafts import Drafts
from skillweave.agent.effect_models import (
    CatalogInput,
    InvokeModelInput,
    ModelTurn,
    RecordInput,
    TranscriptView,
    WaitInput,
)
from skillweave.agent.effects import (
    INVOKE_MODEL,
    PREPARE_CATALOG,
    READ_SKILL_RESOURCE,
    RECORD_TRANSCRIPT,
    Runtime,
)
from skillweave.agent.events import AgentEvent
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import BudgetExhausted, check_tokens, check_turns
from skillweave.agent.replies import REPLY_RETRIES, no_answer, reply_detail
from skillweave.agent.script_runs import ScriptRuns
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import AgentState, TranscriptEntry
from skillweave.agent.tools import tool_specs
from skillweave.config import CatalogMode
from skillweave.llm.messages import Message
from skillweave.storage.base import ArtifactRef
from skillweave.terminal import counted

__all__ = ["AgentLoop", "new_state", "system_prompt"]

_SUMMARY_MAX: Final = 300


def system_prompt(spec: AgentSpec, catalog: str) -> str:
    """The system prompt: the agent's instruction, then the tier-1 catalog."""
    return f"{spec.instruction.strip()}\n\n{catalog.strip()}\n"


def new_state(
    *,
    run_id: str,
    task: str,
    spec: AgentSpec,
    inputs: Sequence[ArtifactRef] = (),
    store_id: str | None = None,
) -> AgentState:
    """A run that has not started: the task and its input artifacts."""
    return AgentState(
        run_id=run_id,
        agent=spec.name,
        model=spec.model,
        task=task,
        budgets=spec.limits,
        authoring=spec.authoring.enabled,
        acquisition=spec.acquisition.offer if spec.acquisition.enabled else "off",
        store_id=store_id,
        inputs=list(inputs),
        artifacts={ref.key: ref for ref in inputs},
    )


def _task_text(state: AgentState) -> str:
    if not state.inputs:
        return state.task
    files = "\n".join(f"- {ref.key} ({counted(ref.size, 'byte')})" for ref in state.inputs)
    return f"{state.task}\n\nAttached files (artifact keys):\n{files}"


class AgentLoop:
    """Runs one run's turns against a runtime.

    Args:
        runtime: where every side effect goes.
        spec: the agent (instruction, allowed skills, catalog, preload, limits).
        on_event: called with each :class:`AgentEvent`, in order (must not block).
        pause: asked after every turn; when it says so, :meth:`run` returns the unfinished
            state at that safe point (the Temporal engine continues it as a new run).
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
    ) -> None:
        self.runtime = runtime
        self.spec = spec
        self._pause = pause
        self._catalog_mode = spec.catalog.mode or catalog_mode
        self._top_k = spec.catalog.top_k or catalog_top_k
        self._journal = Journal(runtime.now, on_event)
        approvals = Approvals(runtime, spec, self._journal)
        self._tools = ToolDispatch(
            runtime,
            spec,
            journal=self._journal,
            runs=ScriptRuns(runtime, spec, self._journal, approvals),
            drafts=Drafts(runtime, spec, self._journal, approvals),
            acquisitions=Acquisitions(runtime, spec, self._journal, approvals, top_k=self._top_k),
            top_k=self._top_k,
        )

    async def run(self, state: AgentState) -> AgentState:
        """Run `state` until it finishes (or ``pause`` says so); returns it (also updated in
        place). A paused state is ``running`` and can be run again, by this loop or another.

        Raises whatever the runtime raises (after marking the run ``failed``), and
        ``asyncio.CancelledError`` (after marking it ``cancelled``).
        """
        journal = self._journal
        try:
            if not state.system:
                await self._prepare(state)
            while not state.finished:
                await self._turn(state)
                state.fold()
                if not state.finished and self._pause is not None and self._pause(state):
                    break
        except BudgetExhausted as exc:
            journal.finish(state, "budget_exhausted", str(exc))
        except asyncio.CancelledError:
            journal.finish(state, "cancelled", "cancelled by request")
            raise
        except GeneratorExit:
            # The run is being discarded, not ended: a worker that stopped dropped its copy
            # (the run lives on in Temporal). Nothing is recorded, nor can be, from here.
            journal.drop_unsaved()
            raise
        except BaseException as exc:
            journal.finish(state, "failed", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            # Reads still deferred (the run ended or paused before a model call did them):
            # done now, so that the transcript has no hole and a continued run knows their sizes.
            for read in journal.take_reads():
                outcome = await asyncio.shield(self.runtime.call(READ_SKILL_RESOURCE, read))
                journal.settle_reads(state, (read,), (outcome,))
            if journal.has_unsaved:
                writes = journal.take_unsaved()
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
        # With no search_skills, the whole catalog is in view: the model judges a miss itself.
        state.library_searched = state.library_searched or not result.search_enabled
        state.aliases = dict(result.aliases)
        count = len(result.roots)
        self._journal.emit(
            state, "run_started", detail=f"{count} skill{'s' * (count != 1)} in the catalog"
        )
        self._journal.append_own(state, Message(role="user", text=_task_text(state)), kind="task")
        for name in result.auto_load:
            if name not in state.active and name in attachable(state.roots, state.active):
                await self._tools.activate(state, name, call_id=None)
                self._journal.emit(state, "preloaded", skill=name, detail="auto_load")
        if result.preload and result.preload in attachable(state.roots, state.active):
            await self._tools.activate(state, result.preload, call_id=None)
            self._journal.emit(state, "preloaded", skill=result.preload)

    async def _turn(self, state: AgentState) -> None:
        for text in await self.runtime.wait_for_input(WaitInput(timeout_seconds=0)):
            self._receive(state, text)
        check_turns(state)
        elided = compact(state)
        if elided:
            self._journal.emit(
                state, "compacted", detail=f"{elided} older tool outputs elided to refs"
            )
        writes = self._journal.take_unsaved()
        reads = self._journal.take_reads()
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
                max_output_tokens=state.budgets.max_output_tokens,
                model=state.model,
                reads=reads,
            ),
        )
        self._journal.settle_reads(state, reads, turn.reads)
        state.turn += 1
        state.usage = state.usage + turn.usage
        message = turn.message
        size = len(message.text) + sum(
            len(c.name) + len(json.dumps(c.arguments)) for c in message.tool_calls
        )
        state.transcript.append(
            TranscriptEntry(seq=reply_seq, role="assistant", kind="assistant", chars=size)
        )
        self._journal.emit(
            state,
            "model_called",
            usage=turn.usage,
            model=turn.model or None,
            detail=reply_detail(turn),
        )
        check_tokens(state)
        if not message.tool_calls:
            if self._no_answer(state, turn):
                return
            state.unusable_replies = 0
            await self._answered(state, message.text)
            return
        state.unusable_replies = 0
        cut_off = turn.stop_reason == "max_tokens"
        for call in message.tool_calls:
            await self._tools.call(state, call, cut_off=cut_off)

    def _no_answer(self, state: AgentState, turn: ModelTurn) -> bool:
        """Whether the reply `turn` (with no tool call) is no answer: empty, or cut off at the
        output limit. Such a reply is answered with a note asking again, or, after
        :data:`~skillweave.agent.replies.REPLY_RETRIES` of them in a row, ends the run
        ``failed``."""
        found = no_answer(turn, state.budgets.max_output_tokens)
        if found is None:
            return False
        if state.unusable_replies >= REPLY_RETRIES:
            count = state.unusable_replies + 1
            self._journal.finish(
                state, "failed", f"{found.reason}, {counted(count, 'time')} in a row"
            )
            return True
        state.unusable_replies += 1
        self._journal.append_own(state, Message(role="user", text=found.note), kind="note")
        return True

    async def _answered(self, state: AgentState, text: str) -> None:
        state.answer = text
        self._journal.emit(state, "answered", detail=text[:_SUMMARY_MAX])
        if self.spec.follow_up_seconds > 0:
            more = await self.runtime.wait_for_input(
                WaitInput(timeout_seconds=self.spec.follow_up_seconds)
            )
            if more:
                for message in more:
                    self._receive(state, message)
                return
        self._journal.finish(state, "completed", "answered")

    def _receive(self, state: AgentState, text: str) -> None:
        self._journal.append_own(state, Message(role="user", text=text), kind="user")
        self._journal.emit(state, "message_received", detail=text[:_SUMMARY_MAX])
