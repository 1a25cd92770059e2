"""Compaction: keep the transcript a model call carries under the run's budget.

When the visible transcript passes ``budgets.transcript_chars``, the oldest tool outputs
(resource reads, script results, other tool results) are elided: the model then sees their
one-line summary, which names the artifact refs, instead of the text, and can read an artifact
again if it needs it. Never elided: activation payloads (skill content), user messages, the
model's own messages, loop notes, and the latest ``budgets.keep_recent_outputs`` outputs.
Nothing is deleted: the full entries stay in the store. Because outputs are elided oldest first,
the elided set is always "every elidable output below ``state.elide_before``", which is all a
model call needs to rebuild the view. Duplicate activations never reach the
transcript in the first place (the loop answers "already active").
"""

from __future__ import annotations

from skillweave.agent.state import COMPACTABLE, AgentState, TranscriptEntry, elidable

__all__ = ["COMPACTABLE", "compact"]


def compact(state: AgentState) -> int:
    """Elide the oldest tool outputs until the visible transcript fits; how many were elided."""
    budget = state.budgets.transcript_chars
    visible = state.visible_chars()
    if visible <= budget:
        return 0
    # The folded outputs are the oldest: they go first, as one block.
    saving = state.pending_saving
    elided = state.elide_pending()
    visible -= saving
    candidates = [
        i for i, e in enumerate(state.transcript) if e.kind in COMPACTABLE and not e.elided
    ]
    keep = state.budgets.keep_recent_outputs
    if keep:
        candidates = candidates[:-keep]
    for index in candidates:
        if visible <= budget:
            break
        entry: TranscriptEntry = state.transcript[index]
        if entry.deferred:
            # A read the next model call does: its size is not known yet, and the elided set
            # must stay a prefix, so nothing past it is elided either.
            break
        if not elidable(entry):
            continue
        state.transcript[index] = entry.model_copy(update={"elided": True})
        state.elide_before = entry.seq + 1
        visible -= entry.chars - len(entry.summary)
        elided += 1
    return elided
