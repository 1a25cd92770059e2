"""`Journal`: what a run records as its loop runs, and tells whoever watches.

It appends the run's transcript entries (a tool result the runtime stored, a message the loop
wrote itself and keeps unsaved until the next model call or the end of the run carries it, or a
resource read deferred to the next model call, which does it and answers its size), emits
each :class:`~skillweave.agent.events.AgentEvent` with the runtime's time, and finishes the run
once with a status and a reason. The agent loop (``skillweave.agent.loop``) and its collaborators
(the tool dispatch, approvals, drafts) write through one journal per run. Pure: no I/O; the time
comes from the runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillweave.agent.effect_models import ReadResourceInput, ToolOutcome, TranscriptWrite
from skillweave.agent.events import AgentEvent, EventKind
from skillweave.agent.state import AgentState, EntryKind, RunStatus, TranscriptEntry
from skillweave.llm.messages import Message

__all__ = ["Journal"]


class Journal:
    """One run's transcript bookkeeping and events.

    Args:
        now: the runtime's clock (``Runtime.now``), stamped on each event.
        on_event: called with each event, in order (must not block); None drops them.
    """

    def __init__(
        self, now: Callable[[], float], on_event: Callable[[AgentEvent], None] | None
    ) -> None:
        self._now = now
        self._on_event = on_event
        self._unsaved: list[TranscriptWrite] = []
        self._reads: list[ReadResourceInput] = []

    def take_unsaved(self) -> tuple[TranscriptWrite, ...]:
        """The messages the loop wrote since the last take, for the runtime to store."""
        writes, self._unsaved = tuple(self._unsaved), []
        return writes

    def drop_unsaved(self) -> None:
        """Forget what is unsaved and the deferred reads (the run is being discarded, not
        ended)."""
        self._unsaved.clear()
        self._reads.clear()

    def defer_read(self, state: AgentState, request: ReadResourceInput, *, chars: int) -> None:
        """Answer a resource read at the next position, to be done by the next model call:
        its entry counts `chars` (the most it can answer) and is ``deferred`` until
        :meth:`settle_reads` gives its size."""
        if request.seq != state.next_seq:
            raise RuntimeError(f"read deferred at seq {request.seq}, expected {state.next_seq}")
        self._reads.append(request)
        state.transcript.append(
            TranscriptEntry(
                seq=request.seq, role="tool", kind="resource", chars=chars, deferred=True
            )
        )

    def take_reads(self) -> tuple[ReadResourceInput, ...]:
        """The reads deferred since the last take, for the runtime to do."""
        reads, self._reads = tuple(self._reads), []
        return reads

    def settle_reads(
        self,
        state: AgentState,
        reads: tuple[ReadResourceInput, ...],
        outcomes: tuple[ToolOutcome, ...],
    ) -> None:
        """Give the deferred entries of `reads` the sizes and summaries of their `outcomes`
        (what the runtime stored for them, in their order).

        Raises:
            RuntimeError: the outcomes are not those of `reads` (a runtime that did not do
                them: the run cannot go on with holes in its transcript).
        """
        if tuple(o.seq for o in outcomes) != tuple(r.seq for r in reads):
            raise RuntimeError(
                f"the model call answered reads at seqs {[o.seq for o in outcomes]}, "
                f"asked for {[r.seq for r in reads]}"
            )
        for outcome in outcomes:
            index = outcome.seq - state.folded
            entry = state.transcript[index] if 0 <= index < len(state.transcript) else None
            if entry is None or entry.seq != outcome.seq or not entry.deferred:
                raise RuntimeError(f"no deferred read at seq {outcome.seq}")
            state.transcript[index] = entry.model_copy(
                update={"chars": outcome.chars, "summary": outcome.summary, "deferred": False}
            )

    @property
    def has_unsaved(self) -> bool:
        """Whether the loop wrote messages the runtime has not stored yet."""
        return bool(self._unsaved)

    def append_outcome(self, state: AgentState, outcome: ToolOutcome, *, kind: EntryKind) -> None:
        """Record the tool result the runtime stored at the next position."""
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

    def append_own(self, state: AgentState, message: Message, *, kind: EntryKind) -> None:
        """Record a message the loop wrote itself (kept unsaved until the runtime stores it)."""
        seq = state.next_seq
        self._unsaved.append(TranscriptWrite(seq=seq, message=message))
        state.transcript.append(
            TranscriptEntry(seq=seq, role=message.role, kind=kind, chars=len(message.text))
        )

    def finish(self, state: AgentState, status: RunStatus, reason: str) -> None:
        """End the run with `status` and `reason` (once: a finished run stays as it ended)."""
        if state.finished:
            return
        state.status = status
        state.reason = reason
        self.emit(state, "run_finished", status=status, detail=reason, usage=state.usage)

    def emit(self, state: AgentState, kind: EventKind, **fields: Any) -> None:
        """Tell the watcher about `kind` (with `fields`), at the runtime's time."""
        if self._on_event is not None:
            event = AgentEvent(
                kind=kind, run_id=state.run_id, turn=state.turn, at=self._now(), **fields
            )
            self._on_event(event)
