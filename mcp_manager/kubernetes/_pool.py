"""The pool of sandbox pods one replica claims from: :class:`KubernetesPool` (the behaviour
is told in the package's docstring).

It claims, gives back and releases pods, renews the leases of the pods it holds, and keeps its
collaborators in step: the view of the pool's pods (``_view``) that the watch (``_watch``)
feeds, the supply (``_supply``) that creates and deletes pods and runs the reaper, and the
demand estimate (``_demand``). Made by the manager's app (``mcp_manager.app``) when
``SANDBOX__BACKEND=kubernetes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable, Coroutine
from typing import Any

from kubernetes.client.exceptions import ApiException

from mcp_manager.backends import Sandbox
from mcp_manager.kubernetes._api import PodApi, PodGoneError, api_client
from mcp_manager.kubernetes._demand import Demand
from mcp_manager.kubernetes._pod import (
    LABEL_POOL,
    field,
    label_value,
    name_of,
    token_of,
    version_of,
)
from mcp_manager.kubernetes._supply import PodSupply
from mcp_manager.kubernetes._template import PodTemplate
from mcp_manager.kubernetes._view import PodView
from mcp_manager.kubernetes._watch import PodWatch
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import PoolStatus
from skillweave.config import IsolationChoice, KubernetesSettings
from skillweave.errors import PoolExhaustedError

__all__ = ["KubernetesPool"]

logger = logging.getLogger("skillweave.manager.kubernetes")


class KubernetesPool:
    """A warm pool of sandbox pods (see the package docstring).

    Args:
        settings: the backend's settings (namespace, pool, template, lease, reaper, ...).
        target: warm pods this replica keeps of its own (more, while its claim rate needs
            pods in creation ahead of the claims).
        maximum: pods this replica may have alive (its unclaimed pods, starting ones, and the
            ones it holds).
        claim_timeout: how long a claim waits when no pod is warm.
        start_timeout: how long a pod may take to become ready before it is replaced.
        metrics: where claim latencies, pool size and reaped pods are reported.
        api: the pod API (default: from the settings' kubeconfig or the in-cluster config).
        manager_id: this replica's id, on the pods it owns and claims (the manager passes
            its one id, ``SandboxSettings.manager_identity``, as a label value); default the
            settings' ``manager_id``, else the host name.
    """

    one_shot = True

    def __init__(
        self,
        settings: KubernetesSettings,
        *,
        target: int,
        maximum: int,
        claim_timeout: float,
        start_timeout: float,
        metrics: ManagerMetrics,
        api: PodApi | None = None,
        manager_id: str | None = None,
    ) -> None:
        self.settings = settings
        self.template = PodTemplate.load(settings)
        self.target = min(target, maximum)
        self.maximum = maximum
        self.claim_timeout = claim_timeout
        self.start_timeout = start_timeout
        self.manager_id = label_value(manager_id or settings.manager_id or socket.gethostname())
        self.selector = f"{LABEL_POOL}={settings.pool}"
        self.api = api or PodApi(settings)
        self._metrics = metrics
        self._demand = Demand()
        self._view = PodView(
            manager_id=self.manager_id,
            digest=self.template.digest,
            max_age_seconds=settings.max_age_seconds,
            demand=self._demand,
        )
        self._supply = PodSupply(
            self.api,
            view=self._view,
            demand=self._demand,
            template=self.template,
            settings=settings,
            target=self.target,
            maximum=maximum,
            start_timeout=start_timeout,
            metrics=metrics,
            track=self._track,
            report=self._report,
        )
        self._watch = PodWatch(self.api, self.selector, on_event=self._on_event)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @staticmethod
    def check(settings: KubernetesSettings, *, isolation: IsolationChoice = "auto") -> None:
        """Fail fast on what would stop the pool at start-up: the template, the isolation its
        executors are configured with (it must be one `isolation` allows: a manager never
        runs scripts under a weaker mode than it announces) and the client's configuration
        (so ``skillweave manager`` says what is wrong before it serves).

        Raises:
            ConfigError: the template is unusable, its isolation is not allowed, or no cluster
                configuration is found.
        """
        PodTemplate.load(settings).check_isolation(isolation)
        api_client(settings).close()

    # --- life cycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """List the pool's pods, reap what needs reaping, start the watch, fill up."""
        self._supply.open = True
        items, version = await asyncio.to_thread(self.api.list_now, self.selector)
        self._view.replace(items)
        logger.info(
            "kubernetes pool %s/%s: %d pods found, %d of them warm and ours",
            self.settings.namespace,
            self.settings.pool,
            len(items),
            len(self._view.own_warm()),
        )
        await self._supply.reap()
        self._watch.start(version)
        self._track(self._every(self.settings.reap_interval_seconds, self._supply.reap))
        self._track(self._every(self.settings.lease_seconds / 3, self._renew_leases))
        self._supply.refill()

    async def close(self) -> None:
        """Stop watching and refilling; delete the pods this replica holds. Its warm pods stay,
        for a restart of the same replica to adopt (others may claim them meanwhile)."""
        self._closed = True
        self._supply.open = False
        self._watch.stop()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        held = list(self._view.claimed)
        self._view.claimed.clear()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(self._supply.delete(name, "manager stopped") for name in held))
        self._view.wake()
        self.api.close()

    async def wait_ready(self, timeout: float) -> None:
        """Wait until this replica has its target of warm pods (for tests and benchmarks)."""
        async with asyncio.timeout(timeout):
            while len(self._view.own_warm(ready_only=True)) < self.target:
                await self._view.wait_change()

    def status(self) -> PoolStatus:
        return PoolStatus(
            backend="kubernetes",
            target=self.target,
            maximum=self.maximum,
            ready=len(self._view.warm()),
            starting=self._view.starting(),
            busy=len(self._view.claimed),
        )

    # --- claims --------------------------------------------------------------------------------

    async def claim(self) -> tuple[Sandbox, bool]:
        """Claim a warm pod; returns its sandbox and whether one was warm when asked.

        Raises:
            PoolExhaustedError: no pod became warm within the claim timeout.
        """
        started = time.perf_counter()
        warm = bool(self._view.warm())
        deadline = time.monotonic() + self.claim_timeout
        self._demand.claimed(time.monotonic())
        self._view.waiting += 1
        try:
            sandbox = await self._claim_until(deadline)
        finally:
            self._view.waiting -= 1
        self._metrics.claim_seconds.labels(kind="warm" if warm else "cold").observe(
            time.perf_counter() - started
        )
        self._report()
        self._supply.refill()  # the claimed pod's replacement, no longer counting this claim
        return sandbox, warm

    async def _claim_until(self, deadline: float) -> Sandbox:
        while True:
            if self._closed:
                raise PoolExhaustedError("the sandbox pool is shutting down", retry_after=5)
            for pod in self._view.warm():
                sandbox = await self._try_claim(pod)
                if sandbox is not None:
                    return sandbox
            self._supply.refill()  # a pod on its way for this claim, if none is yet
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PoolExhaustedError(
                    f"no sandbox pod warm within {self.claim_timeout:g} s "
                    f"({self._view.alive()} of {self.maximum} alive in this replica)",
                    retry_after=max(1, round(self.claim_timeout)),
                )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._view.wait_change()

    async def _try_claim(self, pod: dict[str, Any]) -> Sandbox | None:
        name = name_of(pod)
        self._view.trying.add(name)
        try:
            updated = await self.api.claim(
                pod, by=self.manager_id, lease_seconds=self.settings.lease_seconds
            )
        except PodGoneError:
            self._view.forget(name)
            return None
        finally:
            self._view.trying.discard(name)
        if updated is None:  # someone else's claim (or any change) came first
            self._view.stale[name] = version_of(pod)
            self._metrics.claim_conflicts.inc()
            return None
        self._view.remember(updated)
        token = token_of(updated, self.template.container)
        ip = field(updated, "status", "podIP")
        sandbox = Sandbox(id=name, url=f"http://{ip}:{self.template.port}", token=token or "")
        self._view.claimed[name] = sandbox
        return sandbox

    async def unclaim(self, sandbox: Sandbox) -> None:
        """Give back a claimed pod in which nothing ran: warm again (deleted if that fails)."""
        self._view.claimed.pop(sandbox.id, None)
        try:
            updated = await self.api.give_back(sandbox.id)
        except (PodGoneError, ApiException, OSError):
            updated = None
        if updated is None:
            self._track(self._supply.delete(sandbox.id, "could not be given back"))
        else:
            self._view.remember(updated)
        self._report()

    async def release(self, sandbox: Sandbox, *, clean: bool = False) -> None:
        """A used pod: deleted (in the background), however its execution ended (`clean`
        is for pools that keep a sandbox); its owner starts a replacement at once."""
        self._view.claimed.pop(sandbox.id, None)
        self._view.deleting.add(sandbox.id)
        self._track(self._supply.delete(sandbox.id, None))
        self._report()
        self._supply.refill()

    async def _renew_leases(self) -> None:
        until = time.time() + self.settings.lease_seconds
        for name in list(self._view.claimed):
            with contextlib.suppress(PodGoneError, ApiException, OSError):
                updated = await self.api.renew(name, until=until)
                if updated is not None:
                    self._view.remember(updated)

    # --- keeping in step -----------------------------------------------------------------------

    def _on_event(self, kind: str, obj: Any) -> None:
        """A change the watch saw (on the event loop)."""
        if not self._closed and self._view.apply(kind, obj):
            self._report()
            self._supply.refill()

    async def _every(self, seconds: float, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        while not self._closed:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception:
                logger.exception("kubernetes pool housekeeping failed")

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _report(self) -> None:
        self._metrics.pool_ready.set(len(self._view.warm()))
        self._metrics.pool_busy.set(len(self._view.claimed))
