"""`DirectEngine`: the agent loop in this process (``WORKFLOW__EXECUTION_ENGINE=direct``).

The same ``AgentLoop`` the Temporal engine runs, with :class:`DirectRuntime` calling
``AgentServices`` in-process: a side effect (``skillweave.agent.effects``) is the services'
method named as it, as for the worker's activities. Every input and result crosses a JSON
round-trip through the same pydantic models the Temporal engine's activities use, so a model that
does not survive serialization fails here first, not in production. Runs are asyncio tasks;
cancelling one cancels the runtime call in flight (the services cancel a script run at the
manager too).

Every call is retried by the rule the Temporal engine's activities follow
(:mod:`skillweave.engines.retries`): the same errors are tried again, after the server's
``Retry-After`` or the same exponential back-off, up to the same number of attempts
(``workflow.activity_max_attempts``); the rest fail the run at once. Each retry is told to the
run's followers as it happens (:meth:`DirectEngine.follow`: a ``retrying``
:class:`~skillweave.engines.notes.FollowNote` between the events, as the Temporal engine's
followers tell it) and logged at INFO.

What a call waits for (a manager that does not answer, a full pool: whoever makes it wait
tells :data:`~skillweave.waiting.WAITING`, which each call of a run sets to the run) is told
the same way, as a ``waiting`` note when it begins and again while it lasts
(:class:`~skillweave.engines.notes.WaitsTold`), and kept as the run's current wait until the
call goes on or ends (:meth:`DirectEngine.waiting`, which the API's run shows).

A run's transcript is written behind (:meth:`TranscriptRecorder.write_behind
<skillweave.engines.transcript.TranscriptRecorder.write_behind>`): each record is published at
once and made durable in the background, and the run tells its end (its ``run_finished``
event, its result) only once every record is on disk. A direct run lives in this process, so a
crash of the machine mid-run loses the run whatever was synced (the next API marks it failed);
what it told finished, it never loses. A record that cannot be made durable fails the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel

from skillweave.agent import (
    EFFECTS,
    AgentEvent,
    AgentLoop,
    AgentState,
    ApprovalDecision,
    ApprovalRequest,
    SideEffect,
    WaitInput,
    check_implemented,
    new_state,
)
from skillweave.config import CatalogMode
from skillweave.engines.base import RunRequest, RunResult, result_of
from skillweave.engines.notes import FollowNote, WaitsTold, events_only
from skillweave.engines.retries import Backoff, RetryNotice, retry_notice
from skillweave.engines.services import AgentServices
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.errors import AgentError
from skillweave.telemetry import bound, span
from skillweave.waiting import WAITING, Waiting

__all__ = ["DirectEngine", "DirectRuntime", "call_retrying", "check_services"]

_M = TypeVar("_M", bound=BaseModel)
_In = TypeVar("_In", bound=BaseModel)
_Out = TypeVar("_Out")
_T = TypeVar("_T")
_log = logging.getLogger(__name__)


async def call_retrying(
    call: Callable[[], Awaitable[_T]],
    *,
    backoff: Backoff,
    name: Callable[[], str] = lambda: "call",
    on_retry: Callable[[RetryNotice], None] | None = None,
) -> _T:
    """`call()`, tried again while :func:`~skillweave.engines.retries.classify` says so, up to
    ``backoff.attempts`` calls in all.

    Args:
        call: one attempt.
        backoff: the waits and the most attempts.
        name: what the call is, for its retry notices (asked only when one is made).
        on_retry: told each retry (:func:`~skillweave.engines.retries.retry_notice`) before
            its wait.
    """
    attempt = 1
    while True:
        try:
            return await call()
        except Exception as exc:
            notice = retry_notice(exc, call=name(), attempt=attempt, backoff=backoff)
            if notice is None:
                raise
        _log.info("%s", notice.line())
        if on_retry is not None:
            on_retry(notice)
        await asyncio.sleep(notice.wait_seconds or 0.0)
        attempt += 1


def _wire(model: _M) -> _M:
    """`model` after the JSON round-trip every activity input and result makes."""
    return type(model).model_validate_json(model.model_dump_json())


def check_services(services: AgentServices) -> None:
    """Check that `services` implement every side effect the direct engine makes (all but
    the worker's own, ``run_limits``).

    Raises:
        ConfigError: one has no implementation (the line names it).
    """
    check_implemented(
        services,
        [effect for effect in EFFECTS if effect.implemented_by == "services"],
        by=type(services).__name__,
    )


class DirectRuntime:
    """The ``Runtime`` port over in-process services, for one run.

    Args:
        services: the side effects: each is the method named as it
            (:func:`check_services`).
        backoff: how often and how long to retry a failed call; the Temporal engine's numbers
            (``workflow.activity_max_attempts``) unless given.
        on_retry: told each retry of a call, before its wait.
        on_waiting: the :data:`~skillweave.waiting.WAITING` reporter of each call (told
            what it waits for, and None once the call ends).

    Raises:
        ConfigError: `services` miss a side effect's implementation.
    """

    def __init__(
        self,
        services: AgentServices,
        *,
        backoff: Backoff | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        on_waiting: Callable[[Waiting | None], None] | None = None,
    ) -> None:
        check_services(services)
        self.services = services
        self.backoff = backoff or Backoff(attempts=services.settings.workflow.activity_max_attempts)
        self.on_retry = on_retry
        self.on_waiting = on_waiting
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.decisions: asyncio.Queue[ApprovalDecision] = asyncio.Queue()
        self.awaiting: ApprovalRequest | None = None

    async def call(self, effect: SideEffect[_In, _Out], request: _In) -> _Out:
        """One side effect, as its activity would make it: ``services.<effect.name>``, the
        request and the result crossing the wire models, a failure retried by the shared
        rule."""
        method: Callable[[_In], Awaitable[_Out]] = getattr(self.services, effect.name)
        wired = _wire(request)
        result = await self._retrying(
            lambda: method(wired), name=lambda: self.services.call_name(effect, wired)
        )
        return result if result is None else _wire(result)

    async def _retrying(self, call: Callable[[], Awaitable[_T]], *, name: Callable[[], str]) -> _T:
        """`call()` under the shared retry rule, what it waits for told to `on_waiting`."""
        report = self.on_waiting
        if report is None:
            return await call_retrying(
                call, backoff=self.backoff, name=name, on_retry=self.on_retry
            )
        reporting = WAITING.set(report)
        try:
            return await call_retrying(
                call, backoff=self.backoff, name=name, on_retry=self.on_retry
            )
        finally:
            WAITING.reset(reporting)
            report(None)  # whatever the call waited for, it waits no more

    def now(self) -> float:
        return time.time()

    def reads_ride_with_model_calls(self) -> bool:
        return True  # one process, one release: its model calls always do them

    async def wait_for_input(self, request: WaitInput) -> list[str]:
        messages: list[str] = []
        if self.inbox.empty() and request.timeout_seconds > 0:
            with contextlib.suppress(TimeoutError):
                messages.append(
                    await asyncio.wait_for(self.inbox.get(), timeout=request.timeout_seconds)
                )
        while not self.inbox.empty():
            messages.append(self.inbox.get_nowait())
        return messages

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.awaiting = _wire(request)
        try:
            return _wire(
                await asyncio.wait_for(self.decisions.get(), timeout=request.timeout_seconds)
            )
        except TimeoutError:
            return ApprovalDecision(
                approved=False, note=f"nobody decided within {request.timeout_seconds:g} s"
            )
        finally:
            self.awaiting = None


class _Run:
    def __init__(self, request: RunRequest, runtime: DirectRuntime, state: AgentState) -> None:
        self.request = request
        self.runtime = runtime
        self.state = state
        self.events: list[AgentEvent] = []
        # The events with the notes told between them, in the order they came.
        self.told: list[AgentEvent | FollowNote] = []
        # Replaced (and the old one set) on every change: a reader waits on the one it saw.
        self.changed = asyncio.Event()
        self.task: asyncio.Task[AgentState] | None = None
        # The run's end, told only once its transcript is on disk (:meth:`tell_end`).
        self.end: AgentEvent | None = None
        # What a call of the run waits for now (None: nothing), and which waits were told.
        self.waiting: Waiting | None = None
        self.waits = WaitsTold()

    def publish(self, event: AgentEvent) -> None:
        if event.kind == "run_finished":
            self.end = event
            return
        self.events.append(event)
        self.told.append(event)
        self.wake()

    def tell_end(self, failure: Exception | None) -> None:
        """Tell the run's end, held until its transcript is on disk; a `failure` to get it
        there fails the run instead."""
        end, self.end = self.end, None
        if failure is not None:
            reason = f"the transcript is not on disk: {type(failure).__name__}: {failure}"
            self.state.status, self.state.reason = "failed", reason
            if end is not None:
                end = end.model_copy(update={"status": "failed", "detail": reason})
        if end is not None:
            self.events.append(end)
            self.told.append(end)
            self.wake()

    def retrying(self, notice: RetryNotice) -> None:
        self.waiting = None  # the attempt that waited has failed
        self.told.append(FollowNote.retrying(self.request.run_id, notice))
        self.wake()

    def waited(self, waiting: Waiting | None) -> None:
        """A call of the run waits (`waiting`), or waits no more (None)."""
        self.waiting = waiting
        if waiting is not None and self.waits.due(waiting):
            self.told.append(FollowNote.waiting_on(self.request.run_id, waiting))
            self.wake()

    def wake(self, *_: object) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


async def _traced(loop: AgentLoop, run: _Run, transcript: TranscriptRecorder) -> AgentState:
    """Run a run inside its own span, its run id bound for every log line and span within
    (the Temporal engine gets the same from the SDK's interceptor and the activities); its
    end is told once its transcript is on disk."""
    state = run.state
    with span("agent run", fields={"run_id": state.run_id}), bound(run_id=state.run_id):
        try:
            return await loop.run(state)
        finally:
            try:
                await asyncio.shield(transcript.settle(state.run_id))
            except asyncio.CancelledError:
                run.tell_end(None)  # cancelled again meanwhile: the records settle on their own
                raise
            except Exception as exc:
                run.tell_end(exc)
            else:
                run.tell_end(None)


class DirectEngine:
    """Executes runs as asyncio tasks in this process.

    Args:
        services: the side effects (model, skills, store, sandbox manager).
        catalog_mode: the settings' catalog mode, for specs that do not set one.
        catalog_top_k: the settings' top-k for ``auto``.
        backoff: how failed calls are retried; the Temporal engine's numbers unless given.

    Raises:
        ConfigError: `services` miss a side effect's implementation (:func:`check_services`).
    """

    def __init__(
        self,
        services: AgentServices,
        *,
        catalog_mode: CatalogMode = "enabled",
        catalog_top_k: int = 8,
        backoff: Backoff | None = None,
    ) -> None:
        check_services(services)
        self.services = services
        self._backoff = backoff
        self._catalog_mode = catalog_mode
        self._top_k = catalog_top_k
        self._runs: dict[str, _Run] = {}

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id)
        if run is None:
            raise AgentError(f"no run {run_id!r} in this engine")
        return run

    async def start(self, request: RunRequest) -> str:
        request = _wire(request)
        if request.run_id in self._runs:
            raise AgentError(f"run {request.run_id!r} already exists")
        state = new_state(
            run_id=request.run_id,
            task=request.task,
            spec=request.agent,
            inputs=request.inputs,
            store_id=request.store_id,
        )
        runtime = DirectRuntime(self.services, backoff=self._backoff)
        run = _Run(request, runtime, state)
        runtime.on_retry = run.retrying
        runtime.on_waiting = run.waited
        loop = AgentLoop(
            run.runtime,
            request.agent,
            on_event=run.publish,
            catalog_mode=self._catalog_mode,
            catalog_top_k=self._top_k,
        )
        self.services.transcript.write_behind(request.run_id)
        run.task = asyncio.create_task(
            _traced(loop, run, self.services.transcript), name=f"agent-run-{request.run_id}"
        )
        run.task.add_done_callback(_settled)
        run.task.add_done_callback(run.wake)
        self._runs[request.run_id] = run
        return request.run_id

    async def events(self, run_id: str, *, after: int = 0) -> AsyncIterator[AgentEvent]:
        """Every event of the run after the first `after`, ending after ``run_finished``:
        :meth:`follow` without its notes."""
        async for event in events_only(self.follow(run_id, after=after)):
            yield event

    async def follow(
        self, run_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        """The run's events after the first `after`, with a ``retrying`` note between them
        for each retry of a call and a ``waiting`` note for each wait (those told before the
        `after`-th event are past).

        Args:
            run_id: the run.
            after: how many events to skip (0: from the run's start).
            until_finished: follow until the run finishes; False: stop after what there is.

        Raises:
            AgentError: there is no such run in this engine.
        """
        run = self._run(run_id)
        read = seen = 0
        while True:
            changed = run.changed
            while read < len(run.told):
                item = run.told[read]
                read += 1
                if isinstance(item, AgentEvent):
                    seen += 1
                    if seen <= after:
                        continue
                    yield item
                    if item.kind == "run_finished":
                        return
                elif seen >= after:
                    yield item
            assert run.task is not None
            if run.task.done() or not until_finished:
                return
            await changed.wait()

    async def send(self, run_id: str, text: str) -> None:
        run = self._run(run_id)
        if run.state.finished:
            raise AgentError(f"run {run_id!r} has ended ({run.state.status})")
        run.runtime.inbox.put_nowait(text)

    async def approve(self, run_id: str, decision: ApprovalDecision) -> None:
        run = self._run(run_id)
        if run.runtime.awaiting is None:
            raise AgentError(f"run {run_id!r} is not waiting for an approval")
        run.runtime.decisions.put_nowait(decision)

    async def cancel(self, run_id: str) -> None:
        run = self._run(run_id)
        assert run.task is not None
        run.task.cancel()
        await asyncio.wait({run.task})

    async def result(self, run_id: str) -> RunResult:
        run = self._run(run_id)
        assert run.task is not None
        # A run that failed or was cancelled says so in its state (status and reason); the
        # caller's own cancellation (or timeout) still propagates.
        await asyncio.wait({run.task})
        return result_of(run.state)

    async def waiting(self, run_id: str) -> list[Waiting]:
        """What the run's call waits for now (empty: nothing, or the run has ended).

        Raises:
            AgentError: there is no such run in this engine.
        """
        run = self._run(run_id)
        assert run.task is not None
        if run.waiting is None or run.task.done():
            return []
        return [run.waiting]

    def state(self, run_id: str) -> AgentState:
        """The live state of a run (for status views and tests)."""
        return self._run(run_id).state


def _settled(task: asyncio.Task[AgentState]) -> None:
    # A run's failure is recorded in its state (status ``failed`` and the reason); retrieving
    # the exception here marks it handled, so it is not reported again when the task is freed.
    if not task.cancelled():
        task.exception()
