"""`AgentWorkflow`: one agent run as a durable Temporal workflow.

The workflow runs ``skillweave.agent``'s loop, the same code the direct engine runs, through
:class:`~workflows.runtime.TemporalRuntime`. Its durable state is the small ``AgentState``
(pinned active skills, transcript refs, usage, turn, status); transcripts and outputs stay in
the artifact store. This module imports only pure code (through ``imports_passed_through``):
no HTTP client, object store or Kubernetes client can reach the workflow sandbox.

For people and tools (names in :mod:`skillweave.engines.contract`):

- update ``send_message``: a user message; completes with the model's answer to it. The
  validator rejects empty or oversized text, a run that has ended, and a stale reply.
- signals ``cancel`` and ``approve``; query ``status`` (never the transcript) and ``events``
  (:class:`~workflows._event_window.EventWindow`).
- the UI: the client sets a static summary and details at start; here ``set_current_details``
  (markdown) on every change, its last step the line every view shows for the latest event
  (``skillweave.agent.rendering``), a ``summary`` on every activity, and the search attributes,
  written only when the phase, the active skills or the agent changes and otherwise every tenth
  turn (:class:`~workflows._search_attributes.SearchAttributes` says why). Events alone (a model
  call's tokens, an activation) never write one, nor do the phases of the local reads.

The loop reads what the model sent back (``skillweave.agent.replies``: an empty or cut-off
reply is asked again or fails the run, unreadable or schema-invalid arguments are refused before
anything runs). The cheap reads (the catalog, a search) run as local activities, and a resource
read rides with the next model call where the run's worker said so (``workflows.runtime``).

The limits a run's activities run under are its worker's, not its client's: the workflow asks
for them once, before the loop starts (the local activity ``run_limits``), shows them in
``status`` and carries them over continue-as-new (the continued run does not ask again).

Long runs: after every turn the loop asks whether to pause; when the server suggests continue-as-
new (and no update waits for a reply), the run stops at that safe point, waits for its handlers
to finish, and continues as new with only the small state, the unread messages and the latest
events. A run of any length keeps going.

How a run ends: completed (or cancelled by the ``cancel`` signal) returns a ``RunResult``;
budget exhaustion fails the workflow with ``ApplicationError(type="BudgetExhausted")``, and a
failed tool or a run the loop ended ``failed`` (the model's replies were no answer) with
``type="RunFailed"``, all non-retryable, the ``RunResult`` in their details.

A bug in workflow code is not caught: it fails the workflow *task*, which Temporal retries
until fixed code is deployed, and the run resumes where it was.

**Compatibility.** Version 0.1.0 is the baseline. Every change to the commands a workflow
issues (an activity added, removed, renamed or reordered, a timer, a search-attribute upsert, a
continue-as-new, a local activity) is gated, with ``workflow.patched`` or with what the run's
history holds already, so that a run started by the old code replays, and is replay-tested: the
old code's histories are kept in a folder named for the change
(``tests/data/histories/before-…``) and ``tests/workflows/test_replay.py`` replays them beside
re-recorded current ones (``bench/record_history.py``). The one change so far: a resource read
rides with the next model call where the worker's ``run_limits`` answer says its model calls do
reads, so a run an earlier worker answered reads with local activities. A branch is dropped
only when no run of the old code can still be running.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from skillweave.agent.effect_models import ApprovalDecision
    from skillweave.agent.events import AgentEvent
    from skillweave.agent.loop import AgentLoop, new_state
    from skillweave.agent.rendering import event_line
    from skillweave.agent.state import AgentState
    from skillweave.engines.base import RunResult, result_of
    from skillweave.engines.contract import (
        MAX_MESSAGE_CHARS,
        QUERY_EVENTS,
        QUERY_STATUS,
        SIGNAL_APPROVE,
        SIGNAL_CANCEL,
        UPDATE_SEND,
        WORKFLOW_NAME,
        ActivityTimeouts,
        AgentWorkflowInput,
        EventPage,
        Phase,
        Reply,
        RunView,
        UserMessage,
    )
    from workflows._details import current_details
    from workflows._event_window import EventWindow
    from workflows._search_attributes import SearchAttributes
    from workflows.runtime import Session, TemporalRuntime, ToolFailure

__all__ = ["AgentWorkflow"]


@workflow.defn(name=WORKFLOW_NAME)
class AgentWorkflow:
    """One agent run (see the module docstring)."""

    @workflow.init
    def __init__(self, start: AgentWorkflowInput) -> None:
        request = start.request
        self._start = start
        self._state: AgentState = start.state or new_state(
            run_id=request.run_id,
            task=request.task,
            spec=request.agent,
            inputs=request.inputs,
            store_id=request.store_id,
        )
        self._session = Session(inbox=list(start.inbox))
        self._events = EventWindow(start.events, total=start.events_total)
        self._phase: Phase = "starting"
        self._last_error: str | None = None
        self._last_step = ""
        self._cancel_reason: str | None = None
        # Replies: message n (1-based, in the order updates were accepted) is answered by the
        # first answer the model gives after taking it.
        self._accepted = self._session.taken
        self._replies: dict[int, Reply] = {}
        self._waiting: set[int] = set()
        self._answer_turn: int | None = None
        # What the run started with (the client sets the agent and "starting"; a new run
        # after continue-as-new inherits the last values) is not written again.
        self._attributes = SearchAttributes(agent=request.agent.name if start.runs == 1 else None)
        self._limits: ActivityTimeouts | None = None
        self._runtime = TemporalRuntime(
            state=self._state,
            session=self._session,
            timeouts=start.limits or ActivityTimeouts(),
            on_phase=self._set_phase,
        )

    # --- the run ---------------------------------------------------------------------------

    @workflow.run
    async def run(self, start: AgentWorkflowInput) -> RunResult:
        spec = start.request.agent
        self._limits = await self._limits_of(start)
        self._runtime.timeouts = self._limits
        loop = AgentLoop(
            self._runtime,
            spec,
            on_event=self._on_event,
            pause=self._should_pause,
            catalog_mode=start.catalog_mode,
            catalog_top_k=start.catalog_top_k,
        )
        loop_task = asyncio.create_task(loop.run(self._state))
        try:
            await workflow.wait_condition(
                lambda: loop_task.done() or self._cancel_reason is not None
            )
        except asyncio.CancelledError:
            # Cancelled from outside (the UI, ``temporal workflow cancel``): stop the loop
            # (and the activity in flight), then end as cancelled.
            await self._stop(loop_task)
            self._end()
            raise
        if not loop_task.done():
            await self._stop(loop_task)
        return await self._settle(loop_task, start)

    async def _limits_of(self, start: AgentWorkflowInput) -> ActivityTimeouts:
        """The limits this run's activities run under: carried over continue-as-new, else
        asked of the worker."""
        if start.limits is not None:
            return start.limits
        return await self._runtime.run_limits()

    async def _stop(self, loop_task: asyncio.Task[AgentState]) -> None:
        loop_task.cancel()
        await workflow.wait([loop_task])

    async def _settle(
        self, loop_task: asyncio.Task[AgentState], start: AgentWorkflowInput
    ) -> RunResult:
        state = self._state
        if loop_task.cancelled() and self._cancel_reason is not None:
            state.reason = self._cancel_reason  # the signal's reason, not the loop's generic one
        if not loop_task.cancelled():
            failure = loop_task.exception()
            if isinstance(failure, ToolFailure):
                self._last_error = str(failure)
                self._end()
                raise ApplicationError(
                    state.reason or str(failure),
                    result_of(state).model_dump(mode="json"),
                    type="RunFailed",
                    non_retryable=True,
                )
            if failure is not None:
                raise failure  # a bug: fail the workflow task, resume when fixed
        if not state.finished:
            # Paused at a safe point because the server suggested continue-as-new.
            await workflow.wait_condition(workflow.all_handlers_finished)
            workflow.continue_as_new(self._carried(start))
        self._end()
        await workflow.wait_condition(workflow.all_handlers_finished)
        if state.status == "budget_exhausted":
            raise ApplicationError(
                state.reason or "budget exhausted",
                result_of(state).model_dump(mode="json"),
                type="BudgetExhausted",
                non_retryable=True,
            )
        if state.status == "failed":  # ended by the loop (no answer came back), not a tool
            raise ApplicationError(
                state.reason or "failed",
                result_of(state).model_dump(mode="json"),
                type="RunFailed",
                non_retryable=True,
            )
        return result_of(state)

    def _carried(self, start: AgentWorkflowInput) -> AgentWorkflowInput:
        return start.model_copy(
            update={
                "state": self._state,
                "inbox": tuple(self._session.inbox),
                "events": self._events.carried(),
                "events_total": self._events.total,
                "runs": start.runs + 1,
                "limits": self._limits,  # asked once per run
            }
        )

    def _should_pause(self, state: AgentState) -> bool:
        return (
            workflow.info().is_continue_as_new_suggested()
            and not self._waiting
            and not self._session.inbox
        )

    def _end(self) -> None:
        self._set_phase(self._state.status)  # type: ignore[arg-type]
        for index in sorted(self._waiting):
            self._replies.setdefault(index, self._reply(text=None))

    # --- events, phase, UI -----------------------------------------------------------------

    def _on_event(self, event: AgentEvent) -> None:
        self._events.append(event)
        if event.kind == "answered":
            self._answer_turn = self._state.turn
            for index in sorted(self._waiting):
                if index <= self._session.taken:
                    self._replies.setdefault(index, self._reply(text=self._state.answer))
        # Every step, in the words of every other view (markdown-escaped: it is run text).
        self._last_step = event_line(event).markdown()
        workflow.set_current_details(self._details())

    def _set_phase(self, phase: Phase) -> None:
        self._phase = phase
        self._attributes.show(phase, self._state)
        workflow.set_current_details(self._details())

    def _details(self) -> str:
        return current_details(
            self._state,
            phase=self._phase,
            run=self._start.runs,
            last_step=self._last_step,
            awaiting=self._session.awaiting,
            last_error=self._last_error,
        )

    def _reply(self, *, text: str | None) -> Reply:
        state = self._state
        return Reply(
            run_id=state.run_id,
            turn=state.turn,
            status=state.status,
            text=text,
            reason=state.reason if state.finished else None,
        )

    # --- handlers --------------------------------------------------------------------------

    @workflow.update(name=UPDATE_SEND)
    async def send_message(self, message: UserMessage) -> Reply:
        self._accepted += 1
        index = self._accepted
        self._session.inbox.append(message.text.strip())
        self._waiting.add(index)
        try:
            await workflow.wait_condition(lambda: index in self._replies)
        finally:
            self._waiting.discard(index)
        return self._replies.pop(index)

    @send_message.validator
    def _check_message(self, message: UserMessage) -> None:
        text = message.text.strip()
        if not text:
            raise ValueError("the message is empty")
        if len(text) > MAX_MESSAGE_CHARS:
            raise ValueError(
                f"the message has {len(text)} characters; the limit is {MAX_MESSAGE_CHARS}"
            )
        state = self._state
        if state.finished or self._cancel_reason is not None:
            raise ValueError(f"stale: the run has ended ({state.status})")
        if (
            message.reply_to_turn is not None
            and self._answer_turn is not None
            and message.reply_to_turn < self._answer_turn
        ):
            raise ValueError(
                f"stale: it replies to the answer of turn {message.reply_to_turn}, but the "
                f"latest answer is from turn {self._answer_turn}"
            )

    @workflow.signal(name=SIGNAL_CANCEL)
    def cancel(self, reason: str = "cancelled by request") -> None:
        if self._cancel_reason is None:
            self._cancel_reason = reason or "cancelled by request"

    @workflow.signal(name=SIGNAL_APPROVE)
    def approve(self, decision: ApprovalDecision) -> None:
        # A decision with nothing waiting is dropped: it cannot approve a later request.
        if self._session.awaiting is not None:
            self._session.decision = decision

    @workflow.query(name=QUERY_STATUS)
    def status(self) -> RunView:
        state = self._state
        return RunView(
            run_id=state.run_id,
            agent=state.agent,
            task=state.task,
            phase=self._phase,
            status=state.status,
            turn=state.turn,
            script_runs=state.script_runs,
            usage=state.usage,
            active_skills={name: skill.version for name, skill in state.active.items()},
            last_error=self._last_error,
            reason=state.reason,
            answer=state.answer,
            awaiting_approval=self._session.awaiting,
            answer_turn=self._answer_turn,
            events_total=self._events.total,
            runs=self._start.runs,
            outputs=len(state.outputs),
            limits=self._limits,
        )

    @workflow.query(name=QUERY_EVENTS)
    def events(self, after: int = 0) -> EventPage:
        return self._events.page(after, finished=self._state.finished)
