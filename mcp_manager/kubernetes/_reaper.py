"""Which pods of the pool to delete, and why: :class:`Reaper`.

A judgement on the view (``_view``), no I/O: the supply of pods (``_supply``) asks it at
start-up and every ``reap_interval_seconds``, deletes what it names (each at the version it was
judged at) and counts the reasons.
"""

from __future__ import annotations

from typing import Any

from mcp_manager.kubernetes._pod import (
    CLAIMED,
    LABEL_OWNER,
    LABEL_STATE,
    LABEL_TEMPLATE,
    NOTE_CLAIMED_AT,
    NOTE_CLAIMED_BY,
    NOTE_LEASE,
    as_float,
    created_at,
    has_ended,
    is_ready,
    is_terminating,
    labels_of,
    name_of,
    notes_of,
)
from mcp_manager.kubernetes._view import PodView
from skillweave.config import KubernetesSettings

__all__ = ["Reaper"]


class Reaper:
    """Names the pods to delete: claimed pods whose claimer's lease expired (the manager is
    gone) or held longer than ``claim_max_seconds``; pods this replica claimed in an earlier
    life (same manager id, so a restart reaps them at once); pods that exited; pods past
    ``max_age_seconds`` and, of its own, pods made from another template or that never became
    ready; and, once no claim waits, its own unclaimed pods over what it wants (a burst starts
    pods cold and ahead). Warm pods of a replica that restarted with the same id are adopted as
    they are.

    Args:
        view: the pool's pods as this replica sees them.
        settings: the backend's settings (lease, claim limit, maximum age).
        start_timeout: how long a pod may take to become ready.
    """

    def __init__(
        self, view: PodView, settings: KubernetesSettings, *, start_timeout: float
    ) -> None:
        self._view = view
        self._settings = settings
        self._start_timeout = start_timeout

    def doomed(self, pod: dict[str, Any], now: float) -> str | None:
        """Why `pod` is to be deleted, or None."""
        view = self._view
        labels, notes, name = labels_of(pod), notes_of(pod), name_of(pod)
        if is_terminating(pod) or name in view.deleting or name in view.trying:
            return None
        mine = labels.get(LABEL_OWNER) == view.manager_id
        if labels.get(LABEL_STATE) == CLAIMED:
            if notes.get(NOTE_CLAIMED_BY) == view.manager_id and name not in view.claimed:
                return "orphaned claim"
            if name in view.claimed:
                return None
            if as_float(notes.get(NOTE_LEASE), 0.0) < now:
                return "lease expired"
            if now - as_float(notes.get(NOTE_CLAIMED_AT), now) > self._settings.claim_max_seconds:
                return "claimed too long"
            return None
        if has_ended(pod):
            return "exited"
        if now - created_at(pod) > self._settings.max_age_seconds:
            return "rotated (max age)"
        if mine and labels.get(LABEL_TEMPLATE) != view.digest:
            return "rotated (template changed)"
        if mine and not is_ready(pod) and now - created_at(pod) > self._start_timeout:
            return "did not start"
        return None

    def choose(self, now: float, *, wanted: int) -> list[tuple[str, str]]:
        """The pods to delete now, each with why: the doomed ones and, when no claim waits,
        this replica's unclaimed pods beyond `wanted` (the newest and the not yet ready
        first)."""
        view = self._view
        doomed = [(n, why) for n, pod in view.pods.items() if (why := self.doomed(pod, now))]
        if not view.waiting:  # pods a burst started cold or ahead go back, newest first
            gone = {name for name, _ in doomed}
            own = [p for p in view.own_warm() if name_of(p) not in gone]
            own.sort(key=lambda p: (is_ready(p), -created_at(p)))
            surplus = own[: max(0, len(own) - wanted)]
            doomed += [(name_of(p), "over target") for p in surplus]
        return doomed
