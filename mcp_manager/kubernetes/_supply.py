"""The comings and goings of one replica's pods: :class:`PodSupply` creates the pods the
replica wants and deletes the pods it is done with or the reaper (``_reaper``) names.

Called by the pool (``_pool``) when a claim, a release or a watch event changes what it wants,
and by its housekeeping (the reaper's rounds).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any

from kubernetes.client.exceptions import ApiException

from mcp_manager.kubernetes._api import RETRY_SECONDS, PodApi
from mcp_manager.kubernetes._demand import Demand
from mcp_manager.kubernetes._pod import field
from mcp_manager.kubernetes._reaper import Reaper
from mcp_manager.kubernetes._template import PodTemplate
from mcp_manager.kubernetes._view import PodView
from mcp_manager.metrics import ManagerMetrics
from skillweave.config import KubernetesSettings

__all__ = ["PodSupply"]

logger = logging.getLogger("skillweave.manager.kubernetes")


class PodSupply:
    """Keeps of this replica's own, warm or starting, the pods it wants (:meth:`wanted`),
    created at once and side by side, up to its maximum; deletes pods (used, reaped, not
    given back) in the background.

    Args:
        api: the pod API.
        view: the pool's pods as this replica sees them (its counts are kept up here).
        demand: the pods the claim rate needs in creation; told of each creation.
        template: what the pods are made from.
        settings: the backend's settings (namespace, pool, reaper, start timeout).
        target: warm pods this replica keeps of its own.
        maximum: pods this replica may have alive.
        start_timeout: how long a pod may take to become ready.
        metrics: where reaped pods are counted.
        track: runs a coroutine in the background, cancelled when the pool closes.
        report: reports the pool's size after a change.
    """

    def __init__(
        self,
        api: PodApi,
        *,
        view: PodView,
        demand: Demand,
        template: PodTemplate,
        settings: KubernetesSettings,
        target: int,
        maximum: int,
        start_timeout: float,
        metrics: ManagerMetrics,
        track: Callable[[Coroutine[Any, Any, None]], None],
        report: Callable[[], None],
    ) -> None:
        self.open = False
        """Whether pods are created: from the pool's start to its close."""
        self._api = api
        self._view = view
        self._demand = demand
        self._template = template
        self._settings = settings
        self._target = target
        self._maximum = maximum
        self._start_timeout = start_timeout
        self._metrics = metrics
        self._track = track
        self._report = report
        self._reaper = Reaper(view, settings, start_timeout=start_timeout)
        self._failures = 0

    # --- creating ------------------------------------------------------------------------------

    def wanted(self) -> int:
        """Unclaimed pods (warm, starting, being created) this replica wants of its own: the
        target, the pods its claim rate needs in creation, and one for each of its waiting
        claims that no warm pod will serve (so a starved replica grows its pipeline at once,
        up to the maximum, instead of waiting for its rate to show the demand)."""
        view = self._view
        unserved = view.waiting - len(view.warm()) - len(view.trying)
        return self._target + self._demand.ahead(time.monotonic()) + max(0, unserved)

    def refill(self) -> None:
        """Start the pods missing from :meth:`wanted`, at once and side by side, as many as
        the maximum allows."""
        if not self.open:
            return
        view = self._view
        missing = self.wanted() - len(view.own_warm()) - view.creating
        for _ in range(max(0, min(missing, self._maximum - view.alive()))):
            self._start_one()

    def _start_one(self) -> None:
        self._view.creating += 1
        self._track(self._create())

    async def _create(self) -> None:
        settings = self._settings
        name = f"sw-{settings.pool}-{secrets.token_hex(5)}"
        body = self._template.render(
            name=name,
            namespace=settings.namespace,
            pool=settings.pool,
            owner=self._view.manager_id,
            token=secrets.token_urlsafe(32),
        )
        created: dict[str, Any] | None = None
        try:
            if self._failures:
                await asyncio.sleep(min(RETRY_SECONDS * self._failures, 5.0))
            self._demand.creating(name, time.monotonic())
            created = await self._api.create(body)
            self._failures = 0
        except (ApiException, OSError, ValueError) as exc:
            self._failures += 1
            reason = exc.reason if isinstance(exc, ApiException) else repr(exc)
            logger.warning("creating sandbox pod %s failed: %s", name, reason)
        finally:
            self._view.creating -= 1
        if created is not None and created.get("metadata"):
            self._view.remember(created)
        else:
            self._demand.gone(name)
        self._report()
        if created is None and self.open:
            self._track(self._refill_soon())

    async def _refill_soon(self) -> None:
        await asyncio.sleep(RETRY_SECONDS)
        self.refill()

    # --- deleting ------------------------------------------------------------------------------

    async def delete(self, name: str, reason: str | None, version: str | None = None) -> None:
        """Delete a pod (`reason`, when given, is logged and counted); the reaper passes the
        version it judged, so a pod claimed or renewed since is left alone (and judged again
        on the next round)."""
        view = self._view
        view.deleting.add(name)
        try:
            deleted = await self._api.delete(name, version)
        except (ApiException, OSError) as exc:
            view.deleting.discard(name)  # the reaper tries again
            logger.warning("deleting sandbox pod %s failed: %r", name, exc)
            return
        if version is not None and not deleted and name in view.pods:
            view.deleting.discard(name)  # it changed under us: judged again next round
            return
        if reason is not None:
            logger.info("deleting sandbox pod %s: %s", name, reason)
            self._metrics.reaped.labels(reason=reason.split(" (")[0]).inc()

    async def reap(self) -> None:
        """Delete what the reaper names, each at the version it was judged at; then refill."""
        now = time.time()
        view = self._view
        self._demand.forget_before(time.monotonic() - self._start_timeout)
        doomed = self._reaper.choose(now, wanted=self.wanted())
        for name, _ in doomed:
            view.deleting.add(name)
        versions = {
            name: field(view.pods.get(name), "metadata", "resourceVersion") for name, _ in doomed
        }
        await asyncio.gather(*(self.delete(n, why, versions[n]) for n, why in doomed))
        if doomed:
            self.refill()
