"""`Waiting`: what a step is waiting for, and since when, as every view tells it.

A step that cannot go on yet (its manager does not answer or refuses this worker's token, the
pool has no free sandbox, another manager runs the same execution, the store does not answer)
waits instead of failing. Whoever makes it wait says so through :data:`WAITING`, the reporter
of the current context:

- in a Temporal activity (``activities.agent``), the reporter puts the wait in the activity's
  heartbeat details (its :meth:`Waiting.line`, then its fields), which the server keeps on the
  pending activity: the UI shows them, and the engine's followers read them
  (``skillweave.engines.temporal``);
- on the direct engine, the reporter hands it to the run's followers as it happens.

``None`` told to the reporter means the wait is over. The policy of *how long* to wait is the
caller's (``skillweave.sandbox.queue`` for the manager); this module only says what a wait is.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["WAITING", "WaitFor", "Waiting", "tell_waiting"]

WaitFor = Literal["manager", "sandbox", "execution", "store", "model", "worker", "dependency"]
"""What a step waits for: the MCP manager (down, or refusing this worker's token), a free
sandbox in a full pool, an execution another manager runs, the artifact store, the model
endpoint, a worker to take the step, any other dependency."""

_LABELS: Final[dict[str, str]] = {
    "manager": "the MCP manager",
    "sandbox": "a free sandbox",
    "execution": "the same execution elsewhere",
    "store": "the artifact store",
    "model": "the model endpoint",
    "worker": "a worker",
    "dependency": "a dependency",
}


class Waiting(BaseModel):
    """A wait in progress.

    Attributes:
        on: what the step waits for (a kind this version does not know is shown by its name).
        detail: why, in one line (``401: the manager refuses this worker's token``).
        since: when this wait began (UTC).
        call: the step that waits, in a few words (``script pdf/scripts/x.py``), if known.
    """

    model_config = ConfigDict(frozen=True)

    on: WaitFor | str
    detail: str = Field(max_length=2000)
    since: datetime
    call: str = ""

    @classmethod
    def now(cls, on: WaitFor, detail: str, *, call: str = "") -> Waiting:
        """A wait beginning now."""
        return cls(on=on, detail=detail, since=datetime.now(UTC), call=call)

    def seconds(self, *, now: datetime | None = None) -> float:
        """How long it has lasted."""
        return max(0.0, ((now or datetime.now(UTC)) - self.since).total_seconds())

    def line(self, *, now: datetime | None = None) -> str:
        """``script x/y.py: waiting for the MCP manager since 07:31:02 UTC (40 s): 401 …``."""
        label = _LABELS.get(self.on, self.on)
        at = self.since.astimezone(UTC).strftime("%H:%M:%S UTC")
        call = f"{self.call}: " if self.call else ""
        lasted = self.seconds(now=now)
        return f"{call}waiting for {label} since {at} ({lasted:.0f} s): {self.detail}"


WAITING: ContextVar[Callable[[Waiting | None], None] | None] = ContextVar(
    "skillweave_waiting", default=None
)
"""Who hears what a step waits for in this context (``None``: the wait is over); unset, no one
does."""


def tell_waiting(waiting: Waiting | None) -> None:
    """Tell the current context's reporter, if any, that a wait began, goes on or ended."""
    report = WAITING.get()
    if report is not None:
        report(waiting)
