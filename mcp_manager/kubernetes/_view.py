"""What one replica knows of its pool's pods: :class:`PodView`, fed by the watch (``_watch``)
and by the answers to its own calls, and what the replica is doing to them (claiming, holding,
creating, deleting).

Plain state on the event loop, no I/O. The pool (``_pool``), its supply of pods (``_supply``)
and the reaper (``_reaper``) read it; the pool and the supply change it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mcp_manager.backends import Sandbox
from mcp_manager.kubernetes._demand import Demand
from mcp_manager.kubernetes._pod import (
    CLAIMED,
    LABEL_OWNER,
    LABEL_STATE,
    LABEL_TEMPLATE,
    WARM,
    created_at,
    has_ended,
    is_newer,
    is_ready,
    is_terminating,
    labels_of,
    name_of,
    version_of,
)

__all__ = ["PodView"]


class PodView:
    """The pool's pods by name, as last seen, and this replica's work on them.

    Args:
        manager_id: this replica's id (the owner label of the pods it creates).
        digest: the current template's digest (pods of another template are not claimed).
        max_age_seconds: the age past which a warm pod is no longer claimed.
        demand: told when one of the replica's new pods is seen Ready.

    Attributes:
        pods: every pod of the pool, by name.
        claimed: the sandboxes of the pods this replica holds, by pod name.
        trying: pods this replica is claiming right now.
        stale: pods whose claim lost, with the version that lost: not tried again at it.
        deleting: pods this replica is deleting.
        creating: pods whose create call is on its way.
        waiting: claims waiting for a pod.
    """

    def __init__(
        self, *, manager_id: str, digest: str, max_age_seconds: float, demand: Demand
    ) -> None:
        self.manager_id = manager_id
        self.digest = digest
        self.max_age_seconds = max_age_seconds
        self.pods: dict[str, dict[str, Any]] = {}
        self.claimed: dict[str, Sandbox] = {}
        self.trying: set[str] = set()
        self.stale: dict[str, int | None] = {}
        self.deleting: set[str] = set()
        self.creating = 0
        self.waiting = 0
        self._demand = demand
        self._changed = asyncio.Event()

    # --- reading ------------------------------------------------------------------------------

    def warm(self) -> list[dict[str, Any]]:
        """Claimable pods, oldest first (pods of replicas gone are used up before new ones)."""
        now = time.time()
        found = [
            pod
            for pod in self.pods.values()
            if labels_of(pod).get(LABEL_STATE) == WARM
            and labels_of(pod).get(LABEL_TEMPLATE) == self.digest
            and is_ready(pod)
            and not is_terminating(pod)
            and name_of(pod) not in self.trying
            and name_of(pod) not in self.deleting
            and self.stale.get(name_of(pod), -1) != version_of(pod)
            and now - created_at(pod) < self.max_age_seconds
        ]
        return sorted(found, key=lambda p: (created_at(p), name_of(p)))

    def own(self) -> list[dict[str, Any]]:
        """This replica's pods, but those being deleted."""
        return [
            pod
            for pod in self.pods.values()
            if labels_of(pod).get(LABEL_OWNER) == self.manager_id
            and not is_terminating(pod)
            and name_of(pod) not in self.deleting
        ]

    def own_warm(self, *, ready_only: bool = False) -> list[dict[str, Any]]:
        """This replica's unclaimed pods of the current template, ready or starting."""
        return [
            pod
            for pod in self.own()
            if labels_of(pod).get(LABEL_STATE) == WARM
            and labels_of(pod).get(LABEL_TEMPLATE) == self.digest
            and not has_ended(pod)
            and (is_ready(pod) or not ready_only)
        ]

    def starting(self) -> int:
        """This replica's pods on their way: being created, or created and not yet Ready."""
        return self.creating + sum(1 for pod in self.own_warm() if not is_ready(pod))

    def alive(self) -> int:
        """Pods counted against this replica's maximum: its unclaimed pods, the ones it is
        creating, and the ones it holds or is claiming (whoever created them)."""
        unclaimed = {name_of(p) for p in self.own() if labels_of(p).get(LABEL_STATE) != CLAIMED}
        return len(unclaimed | set(self.claimed) | self.trying) + self.creating

    # --- changing ------------------------------------------------------------------------------

    def remember(self, pod: dict[str, Any]) -> None:
        """A pod as the API last returned it (kept unless older than what the view holds)."""
        name = name_of(pod)
        if is_newer(pod, self.pods.get(name)):
            self.pods[name] = pod
            if self.stale.get(name, -1) != version_of(pod):
                self.stale.pop(name, None)
            if is_ready(pod):
                self._demand.ready(name, time.monotonic())
        self.wake()

    def forget(self, name: str) -> None:
        """A pod is gone."""
        self._demand.gone(name)
        self.pods.pop(name, None)
        self.stale.pop(name, None)
        self.deleting.discard(name)
        self.wake()

    def replace(self, items: list[dict[str, Any]]) -> None:
        """The pool's pods as a fresh list shows them."""
        self.pods = {name_of(pod): pod for pod in items}
        self.deleting &= set(self.pods)
        self.stale = {k: v for k, v in self.stale.items() if k in self.pods}
        self.wake()

    def apply(self, kind: str, obj: Any) -> bool:
        """A watch event (``RELIST`` with every pod, ``DELETED``, ``ADDED`` or ``MODIFIED`` with
        one); False for a kind it does not know (nothing changed)."""
        if kind == "RELIST":
            self.replace(obj)
        elif kind == "DELETED":
            self.forget(name_of(obj))
        elif kind in ("ADDED", "MODIFIED"):
            self.remember(obj)
        else:
            return False
        return True

    def wake(self) -> None:
        """Wake whoever waits for a change."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self) -> None:
        """Wait until the view changes."""
        await self._changed.wait()
