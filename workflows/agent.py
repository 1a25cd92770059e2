"""`AgentWorkflow`: one agent job as a durable Temporal workflow.

The workflow runs ``skillweave.agent``'s loop, the same code the direct engine runs, through
:class:`~workflows.runtime.TemporalRuntime`. Its durable state is the small ``AgentState``
(pinned active skills, transcript refs, usage, turn, status); transcripts and outputs stay in
the artifact store. This module imports only pure code (through ``imports_passed_through``):
no HTTP client, object store or Kubernetes client can reach the workflow sandbox.

For people and tools (names in :mod:`skillweave.engines.contract`):

- update ``send_message``: a user message; completes with the model's answer to it. The
  validator rejects empty or oversized text, a job that has ended, and a stale reply.
- signals ``cancel`` and ``approve``; query ``status`` (never the transcript) and ``events``.
- the UI: the client sets a static summary and details at start; here ``set_current_details``
  (markdown) on every change, its last step the line every view shows for the latest event
  (``skillweave.agent.rendering``), a ``summary`` on every activity, and the search attributes
  ``SkillweaveAgent``, ``SkillweavePhase``, ``SkillweaveActiveSkills``, ``SkillweaveTurns`` and
  ``SkillweaveTokens``. Each upsert is an event in the job's history (and a write to the
  server's visibility store), so they are written only when the phase, the active skills or
  the agent changes (so ``SkillweavePhase`` is current: ops filter on ``running_script`` and
  ``awaiting_approval``), with the turns and tokens riding along, and otherwise every tenth
  turn (``COUNTS_EVERY_TURNS``: a run of reads and model calls in one phase writes its counts
  once per ten turns; the status query and the UI's current details are always current).
  Events alone (a model call's tokens, an activation) never write one, nor do the phases of
  the local reads, which end inside the workflow task that began them, nor the values the run
  started with. Histories recorded before these rules replay as they were written: with no
  ``fewer-events-per-step`` marker, an upsert on every change; with it but no
  ``counts-every-ten-turns`` marker, an upsert at every turn's start too.

Long jobs: after every turn the loop asks whether to pause; when the server suggests continue-as-
new (and no update waits for a reply), the run stops at that safe point, waits for its handlers
to finish, and continues as new with only the small state, the unread messages and the latest
events. A job of any length keeps going.

How a job ends: completed (or cancelled by the ``cancel`` signal) returns a ``JobResult``;
budget exhaustion fails the workflow with ``ApplicationError(type="BudgetExhausted")``, and a
failed tool or a job the loop ended ``failed`` (the model's replies were no answer) with
``type="JobFailed"``, all non-retryable, the ``JobResult`` in their details.

The loop reads what the model sent back (``AgentLoop(checks_replies=…)``: an empty or cut-off
reply is asked again or fails the job, unreadable or schema-invalid arguments are refused before
anything runs) in runs started since ``workflow.patched("loop-reads-replies")``; histories
recorded before it replay as they were written, taking any reply without tool calls as the
answer and running any arguments.

The limits a job's activities run under are its worker's, not its client's: in runs started
since ``workflow.patched("worker-limits")`` the workflow asks for them once, before the loop
starts (the local activity ``job_limits``), shows them in ``status`` and carries them over
continue-as-new (the continued run does not ask again). Histories recorded before it replay
under the timeouts their client sent in the input.

A bug in workflow code is not caught: it fails the workflow *task*, which Temporal retries
until fixed code is deployed, and the job resumes where it was.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Final

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from skillweave.agent.events import AgentEvent
    from skillweave.agent.loop import AgentLoop, new_state
    from skillweave.agent.rendering import event_line
    from skillweave.agent.runtime import ApprovalDecision
    from skillweave.agent.state import AgentState
    from skillweave.engines.base import JobResult, result_of
    from skillweave.engines.contract import (
        EVENT_WINDOW,
        EVENTS_CARRIED,
        MAX_MESSAGE_CHARS,
        QUERY_EVENTS,
        QUERY_STATUS,
        SA_ACTIVE_SKILLS,
        SA_AGENT,
        SA_PHASE,
        SA_TOKENS,
        SA_TURNS,
        SIGNAL_APPROVE,
        SIGNAL_CANCEL,
        UPDATE_SEND,
        WORKFLOW_NAME,
        ActivityTimeouts,
        AgentWorkflowInput,
        EventPage,
        JobView,
        Phase,
        Reply,
        UserMessage,
    )
    from skillweave.terminal import counted
    from workflows.runtime import Session, TemporalRuntime, ToolFailure

__all__ = ["AgentWorkflow"]

PATCH_FEWER_EVENTS_PER_STEP: Final = "fewer-events-per-step"
PATCH_COUNTS_IN_TENS: Final = "counts-every-ten-turns"
COUNTS_EVERY_TURNS: Final = 10
"""Under ``counts-every-ten-turns``: a turn that changes only the counts (turns, tokens)
writes them once this many turns have passed since they were last written."""
"""The ``workflow.patched`` id of the leaner history: search attributes written only when the
phase changes or a turn begins, and the cheap reads run as local activities
(``TemporalRuntime.local_reads``).
One id for both, so a new run records one marker."""
PATCH_READS_REPLIES: Final = "loop-reads-replies"
"""The ``workflow.patched`` id of the loop that reads what the model sent back (the module
docstring); it changes which activities follow an empty or cut-off reply or a bad call."""
PATCH_WORKER_LIMITS: Final = "worker-limits"
"""The ``workflow.patched`` id of the limits asked of the worker (the module docstring): it
adds the ``job_limits`` local activity at a job's start."""

_INSTANT_PHASES: Final = frozenset({"starting", "reading", "searching"})
"""Phases of the local activities: over within the workflow task that began them, so nobody
could see them in visibility; with the patch they are not written there (the details and the
``status`` query still show them)."""

_VERSION_CHARS = 12


@workflow.defn(name=WORKFLOW_NAME)
class AgentWorkflow:
    """One agent job (see the module docstring)."""

    @workflow.init
    def __init__(self, start: AgentWorkflowInput) -> None:
        request = start.request
        self._start = start
        self._state: AgentState = start.state or new_state(
            job_id=request.job_id,
            task=request.task,
            spec=request.agent,
            inputs=request.inputs,
            store_id=request.store_id,
        )
        self._session = Session(inbox=list(start.inbox))
        self._events: deque[AgentEvent] = deque(start.events, maxlen=EVENT_WINDOW)
        self._events_total = start.events_total
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
        self._upserted: dict[str, Any] = {}
        self._agent: dict[str, str] = {}
        self._fewer_events = False
        self._counts_in_tens = False
        self._limits: ActivityTimeouts | None = None
        self._limits_asked = False
        self._runtime = TemporalRuntime(
            state=self._state,
            session=self._session,
            timeouts=start.timeouts,
            on_phase=self._set_phase,
        )

    # --- the run ---------------------------------------------------------------------------

    @workflow.run
    async def run(self, start: AgentWorkflowInput) -> JobResult:
        spec = start.request.agent
        self._fewer_events = workflow.patched(PATCH_FEWER_EVENTS_PER_STEP)
        self._counts_in_tens = self._fewer_events and workflow.patched(PATCH_COUNTS_IN_TENS)
        reads_replies = workflow.patched(PATCH_READS_REPLIES)
        self._runtime.local_reads = self._fewer_events
        self._limits = await self._limits_of(start)
        self._runtime.timeouts = self._limits
        if self._fewer_events:
            # What the run started with (the client sets the agent and "starting"; a new run
            # after continue-as-new inherits the last values) is not written again.
            self._upserted.update(self._started_with())
            if start.runs == 1:
                self._agent = {"agent": spec.name}  # written with the first upsert if missing
        elif start.runs == 1:
            self._upsert(agent=spec.name)
        loop = AgentLoop(
            self._runtime,
            spec,
            on_event=self._on_event,
            pause=self._should_pause,
            catalog_mode=start.catalog_mode,
            catalog_top_k=start.catalog_top_k,
            checks_replies=reads_replies,
        )
        job = asyncio.create_task(loop.run(self._state))
        try:
            await workflow.wait_condition(lambda: job.done() or self._cancel_reason is not None)
        except asyncio.CancelledError:
            # Cancelled from outside (the UI, ``temporal workflow cancel``): stop the loop
            # (and the activity in flight), then end as cancelled.
            await self._stop(job)
            self._end()
            raise
        if not job.done():
            await self._stop(job)
        return await self._settle(job, start)

    async def _limits_of(self, start: AgentWorkflowInput) -> ActivityTimeouts:
        """The limits this run's activities run under: carried over continue-as-new, else
        asked of the worker, else (a history recorded before) the ones the client sent."""
        if start.limits is not None:
            self._limits_asked = True
            return start.limits
        if not workflow.patched(PATCH_WORKER_LIMITS):
            return start.timeouts
        self._limits_asked = True
        return await self._runtime.job_limits()

    async def _stop(self, job: asyncio.Task[AgentState]) -> None:
        job.cancel()
        await workflow.wait([job])

    async def _settle(self, job: asyncio.Task[AgentState], start: AgentWorkflowInput) -> JobResult:
        state = self._state
        if job.cancelled() and self._cancel_reason is not None:
            state.reason = self._cancel_reason  # the signal's reason, not the loop's generic one
        if not job.cancelled():
            failure = job.exception()
            if isinstance(failure, ToolFailure):
                self._last_error = str(failure)
                self._end()
                raise ApplicationError(
                    state.reason or str(failure),
                    result_of(state).model_dump(mode="json"),
                    type="JobFailed",
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
                type="JobFailed",
                non_retryable=True,
            )
        return result_of(state)

    def _carried(self, start: AgentWorkflowInput) -> AgentWorkflowInput:
        return start.model_copy(
            update={
                "state": self._state,
                "inbox": tuple(self._session.inbox),
                "events": tuple(self._events)[-EVENTS_CARRIED:],
                "events_total": self._events_total,
                "runs": start.runs + 1,
                # Asked once per job; a run recorded before the patch leaves it to the next.
                "limits": self._limits if self._limits_asked else None,
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
        self._events_total += 1
        if event.kind == "answered":
            self._answer_turn = self._state.turn
            for index in sorted(self._waiting):
                if index <= self._session.taken:
                    self._replies.setdefault(index, self._reply(text=self._state.answer))
        # Every step, in the words of every other view (markdown-escaped: it is run text).
        self._last_step = event_line(event).markdown()
        if not self._fewer_events:
            self._upsert_current()
        workflow.set_current_details(self._details())

    def _set_phase(self, phase: Phase) -> None:
        self._phase = phase
        if not (self._fewer_events and phase in _INSTANT_PHASES):
            self._upsert_current()
        workflow.set_current_details(self._details())

    def _started_with(self) -> dict[str, Any]:
        """The search attributes this run started with, by the names :meth:`_upsert` uses."""
        attributes = workflow.info().typed_search_attributes
        names = {"agent": SA_AGENT, "phase": SA_PHASE, "turns": SA_TURNS, "tokens": SA_TOKENS}
        found: dict[str, Any] = {
            name: attributes.get(key)
            for name, key in names.items()
            if attributes.get(key) is not None
        }
        skills = attributes.get(SA_ACTIVE_SKILLS)
        if skills is not None:
            found["skills"] = sorted(skills)
        return found

    def _upsert_current(self) -> None:
        state = self._state
        values = {
            **self._agent,
            "phase": self._phase,
            "turns": state.turn,
            "tokens": state.usage.total_tokens,
            "skills": sorted(state.active),
        }
        if self._counts_in_tens and not self._due(values):
            return
        self._upsert(**values)

    def _due(self, values: dict[str, Any]) -> bool:
        """Whether an upsert is due: anything but the counts changed (the phase, the active
        skills, the agent's name), or the counts are `COUNTS_EVERY_TURNS` turns old."""
        written = self._upserted
        if any(written.get(name) != values[name] for name in values.keys() - {"turns", "tokens"}):
            return True
        return bool(values["turns"] >= written.get("turns", 0) + COUNTS_EVERY_TURNS)

    def _upsert(self, **values: Any) -> None:
        keys = {
            "agent": SA_AGENT,
            "phase": SA_PHASE,
            "turns": SA_TURNS,
            "tokens": SA_TOKENS,
            "skills": SA_ACTIVE_SKILLS,
        }
        changed = {
            name: value for name, value in values.items() if self._upserted.get(name) != value
        }
        if changed:
            workflow.upsert_search_attributes(
                [keys[k].value_set(v) for k, v in changed.items()]  # type: ignore[attr-defined]
            )
            self._upserted.update(changed)

    def _details(self) -> str:
        state = self._state
        lines = [
            f"**{self._phase}** · turn {state.turn} of {state.budgets.max_turns} · "
            f"{counted(state.usage.total_tokens, 'token')} · "
            f"{counted(state.script_runs, 'script run')}"
            + (f" · run {self._start.runs}" if self._start.runs > 1 else ""),
        ]
        if state.active:
            skills = ", ".join(
                f"`{name}` @ {skill.version[:_VERSION_CHARS]}"
                for name, skill in state.active.items()
            )
            lines.append(f"**Active skills:** {skills}")
        if self._last_step:
            lines.append(f"**Last step:** {self._last_step}")
        if self._session.awaiting is not None:
            ask = self._session.awaiting
            lines.append(f"**Waiting for approval:** {ask.describe()}")
        if state.outputs:
            lines.append(f"**Outputs:** {counted(len(state.outputs), 'artifact')}")
        if self._last_error or (state.finished and state.reason):
            lines.append(f"**Reason:** {self._last_error or state.reason}")
        return "\n\n".join(lines)

    def _reply(self, *, text: str | None) -> Reply:
        state = self._state
        return Reply(
            job_id=state.job_id,
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
    def status(self) -> JobView:
        state = self._state
        return JobView(
            job_id=state.job_id,
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
            events_total=self._events_total,
            runs=self._start.runs,
            outputs=len(state.outputs),
            limits=self._limits,
        )

    @workflow.query(name=QUERY_EVENTS)
    def events(self, after: int = 0) -> EventPage:
        first = self._events_total - len(self._events)
        start = max(after, first)
        window = list(self._events)[start - first :]
        return EventPage(
            events=tuple(window),
            next=self._events_total,
            dropped=max(0, first - after),
            finished=self._state.finished,
        )
