"""`EventWindow`: the latest events of a run, for readers catching up (the ``events`` query).

A run keeps the last :data:`~skillweave.engines.contract.EVENT_WINDOW` events and counts every
event since the run started; continue-as-new carries the latest
:data:`~skillweave.engines.contract.EVENTS_CARRIED` and the count. Workflow code:
``AgentWorkflow`` holds one per run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from skillweave.agent.events import AgentEvent
    from skillweave.engines.contract import EVENT_WINDOW, EVENTS_CARRIED, EventPage

__all__ = ["EventWindow"]


class EventWindow:
    """The latest events of a run and how many there were.

    Args:
        events: the events carried over continue-as-new (none at a run's start).
        total: how many events the run had then.
    """

    def __init__(self, events: Iterable[AgentEvent], *, total: int) -> None:
        self._events: deque[AgentEvent] = deque(events, maxlen=EVENT_WINDOW)
        self.total = total

    def append(self, event: AgentEvent) -> None:
        """Keep `event`, the oldest one dropped beyond the window."""
        self._events.append(event)
        self.total += 1

    def carried(self) -> tuple[AgentEvent, ...]:
        """The latest events, for the input of the run that continues as new."""
        return tuple(self._events)[-EVENTS_CARRIED:]

    def page(self, after: int, *, finished: bool) -> EventPage:
        """The events after index `after` still in the window, and how many were dropped."""
        first = self.total - len(self._events)
        start = max(after, first)
        window = list(self._events)[start - first :]
        return EventPage(
            events=tuple(window),
            next=self.total,
            dropped=max(0, first - after),
            finished=finished,
        )
