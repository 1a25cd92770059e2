"""The warm pool: ready sandboxes waiting to be claimed, refilled as they are used up.

The pool keeps ``target`` sandboxes ready and at most ``maximum`` alive (ready, starting or
busy). A claim takes a ready one at once (warm); when none is ready it starts one if the maximum
allows (cold) and otherwise waits for one, up to ``claim_timeout``, after which it raises
:class:`~skillweave.errors.PoolExhaustedError` (the API answers 503 with Retry-After). Waiting
claims are served first come, first served. A used
sandbox of a one-shot backend is destroyed and a replacement starts at once, unless it may serve
more executions (``Sandbox.reuses_left``, the local backend's
``SANDBOX__EXECUTIONS_PER_EXECUTOR``): then it is ready again, its executor already making the
next execution's fresh workspace and sandbox.
A sandbox that fails to start is counted and retried on the next refill with a short backoff.

The replacement for a claimed sandbox starts when its execution ends or ``refill_delay``
after the claim, whichever comes first: most skill scripts run for milliseconds, and an
executor's start-up (an interpreter and its imports, the warm sandbox) would share the CPU
with them on a small host; a long execution still has its replacement warming 0.1 s in.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import itertools
import logging
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Final, Protocol

from mcp_manager.backends import Sandbox, SandboxBackend
from mcp_manager.containment import Containment
from mcp_manager.metrics import ManagerMetrics
from skillweave.errors import PoolExhaustedError, SandboxStartError

__all__ = ["PoolStatus", "SandboxPool", "WarmPool", "after_answer"]

logger = logging.getLogger("skillweave.manager.pool")

_START_BACKOFF_SECONDS: Final = 0.5
_REFUSED_BACKOFF_SECONDS: Final = 30.0
_REFILL_DELAY_SECONDS: Final = 0.1
_HELD_AT_MOST_SECONDS: Final = 1.0


class PoolStatus(dict[str, int | str]):
    """``GET /sandbox/pool``: backend, target, maximum, ready, starting, busy."""


_held: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "skillweave_pool_held", default=None
)


@contextlib.contextmanager
def after_answer() -> Iterator[Callable[[], None]]:
    """Within the block, what releasing a sandbox leaves to do (destroying it, starting its
    replacement) waits; the function yielded does it, once, when the caller's answer is out.
    Leaving the block by an exception does it at once; a caller that never calls the
    function has it done after `_HELD_AT_MOST_SECONDS` anyway.
    """
    held: list[Callable[[], None]] = []
    token = _held.set(held)
    done = False

    def run() -> None:
        nonlocal done
        if done:
            return
        done = True
        for work in held:
            work()

    try:
        yield run
    except BaseException:
        run()
        raise
    finally:
        _held.reset(token)
    if held:
        asyncio.get_running_loop().call_later(_HELD_AT_MOST_SECONDS, run)


class SandboxPool(Protocol):
    """Where the execution service gets sandboxes: :class:`WarmPool` over a process backend
    (local, static) or :class:`~mcp_manager.kubernetes.KubernetesPool`, whose state lives in
    the cluster and is shared by every manager replica of the pool."""

    target: int
    maximum: int

    async def start(self) -> None:
        """Begin filling the pool."""
        ...

    async def claim(self) -> tuple[Sandbox, bool]:
        """Take a sandbox; returns it and whether it was warm (raises PoolExhaustedError)."""
        ...

    async def unclaim(self, sandbox: Sandbox) -> None:
        """Give back a claimed sandbox in which nothing ran."""
        ...

    async def release(self, sandbox: Sandbox, *, clean: bool = False) -> None:
        """Give back a used sandbox: it is destroyed (one-shot) and replaced, unless it ran
        its execution to a script's end (`clean`) and may serve again."""
        ...

    async def wait_ready(self, timeout: float) -> None:
        """Wait until the pool holds its target of ready sandboxes."""
        ...

    def status(self) -> PoolStatus:
        """How many sandboxes are in each state."""
        ...

    async def close(self) -> None:
        """Stop refilling and destroy what this manager holds."""
        ...


class WarmPool:
    """Ready sandboxes from one backend.

    Args:
        backend: where sandboxes come from.
        target: how many to keep ready.
        maximum: how many may be alive at once.
        claim_timeout: how long a claim waits when the pool is exhausted.
        metrics: where claim latencies, pool size and evictions are reported.
        refill_delay: how long after a warm claim its replacement starts, unless the
            execution ended first.
        containment: told the isolation each new sandbox reports (the mode in force).
    """

    def __init__(
        self,
        backend: SandboxBackend,
        *,
        target: int,
        maximum: int,
        claim_timeout: float,
        metrics: ManagerMetrics,
        refill_delay: float = _REFILL_DELAY_SECONDS,
        containment: Containment | None = None,
    ) -> None:
        self._containment = containment
        if not backend.one_shot:
            target, maximum = min(target, 1) or 1, 1  # one shared development executor
        self.backend = backend
        self.target = min(target, maximum)
        self.maximum = maximum
        self.claim_timeout = claim_timeout
        self.refill_delay = refill_delay
        self._metrics = metrics
        self._ready: list[Sandbox] = []
        self._busy: set[Sandbox] = set()
        self._spent: list[Sandbox] = []  # used, to be destroyed once the answer is out
        self._starting = 0
        self._changed = asyncio.Condition()
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self._watchers: set[asyncio.Task[None]] = set()
        self._queue: collections.deque[int] = collections.deque()  # waiting claims, in order
        self._tickets = itertools.count()
        self._closed = False
        self._failures = 0
        self._refusal: SandboxStartError | None = None

    def status(self) -> PoolStatus:
        """How many sandboxes are in each state."""
        return PoolStatus(
            backend=self.backend.name,
            target=self.target,
            maximum=self.maximum,
            ready=len(self._ready),
            starting=self._starting,
            busy=len(self._busy),
        )

    @property
    def _alive(self) -> int:
        return len(self._ready) + len(self._busy) + self._starting

    async def start(self) -> None:
        """Begin filling the pool to its target."""
        self._refill()

    async def wait_ready(self, timeout: float) -> None:
        """Wait until the pool holds its target of ready sandboxes (for tests and benchmarks)."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self._ready) >= self.target)

    async def claim(self) -> tuple[Sandbox, bool]:
        """Take a sandbox; returns it and whether it was warm (ready when asked for).

        Raises:
            PoolExhaustedError: none became available within the claim timeout.
            SandboxStartError: sandboxes refuse to start here (``permanent``); nothing ran.
        """
        started = time.perf_counter()
        deadline = time.monotonic() + self.claim_timeout
        async with self._changed:
            warm = bool(self._ready) and not self._queue
            ticket = next(self._tickets)
            self._queue.append(ticket)
            try:
                # First come, first served: a claim takes a ready sandbox only when it is the
                # oldest one waiting, so that a steady stream of new claims cannot starve those
                # that came first.
                while not (self._ready and self._queue[0] == ticket):
                    if self._refusal is not None and not self._ready:
                        # Sandboxes refuse to start here: say why now, not after the timeout.
                        raise SandboxStartError(
                            f"sandboxes cannot start: {self._refusal}", permanent=True
                        )
                    if self._closed:
                        raise PoolExhaustedError("the sandbox pool is shutting down", retry_after=5)
                    if self._alive < self.maximum:
                        self._start_one()
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise PoolExhaustedError(
                            f"no sandbox free within {self.claim_timeout:g} s "
                            f"({self._alive} of {self.maximum} alive, "
                            f"{len(self._queue)} claims waiting)",
                            retry_after=max(1, round(self.claim_timeout)),
                        )
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(remaining):
                            await self._changed.wait()
                sandbox = self._ready.pop(0)
                self._busy.add(sandbox)
            finally:
                self._queue.remove(ticket)
                self._changed.notify_all()  # the next in line may go
        self._metrics.claim_seconds.labels(kind="warm" if warm else "cold").observe(
            time.perf_counter() - started
        )
        self._report()
        self._refill_later()
        return sandbox, warm

    def _refill_later(self) -> None:
        def fire() -> None:
            self._timers.discard(timer)
            self._refill()

        timer = asyncio.get_running_loop().call_later(self.refill_delay, fire)
        self._timers.add(timer)

    async def unclaim(self, sandbox: Sandbox) -> None:
        """Give back a claimed sandbox in which nothing ran: it is ready again, as it was."""
        async with self._changed:
            self._busy.discard(sandbox)
            if self._closed:
                self._track(self.backend.destroy(sandbox))
            else:
                self._ready.insert(0, sandbox)
                self._trim()
            self._changed.notify_all()
        self._report()

    async def release(self, sandbox: Sandbox, *, clean: bool = False) -> None:
        """Give a used sandbox back: destroyed (one-shot backends) or made ready again. A
        one-shot backend's sandbox is ready again only after an execution that ended `clean`
        (its script ran to an end the executor answered: never a request dropped part-way, a
        lost sandbox or an executor's error) while it has executions left.

        Destruction and the replacement run in the background, off the request's path; within
        `after_answer`, only once its caller says the answer is out, so that the two do not
        share the host. The pool counts the sandbox as gone from here on.
        """
        async with self._changed:
            self._busy.discard(sandbox)
            if self.backend.one_shot and not (clean and self._serves_again(sandbox)):
                self._spent.append(sandbox)
            elif not self._closed:
                if self.backend.one_shot:
                    sandbox.reuses_left -= 1  # its watcher, from its start, still watches
                self._ready.append(sandbox)
            self._changed.notify_all()
        self._report()
        held = _held.get()
        if held is not None:
            held.append(self._after_release)
        else:
            self._after_release()

    def _serves_again(self, sandbox: Sandbox) -> bool:
        """Whether a used sandbox of a one-shot backend may take another execution: it has
        some left, and its process lives (a lost one is never handed out again)."""
        process = sandbox.process
        alive = process is None or process.returncode is None
        return sandbox.reuses_left > 0 and alive and not self._closed

    def _after_release(self) -> None:
        spent, self._spent = self._spent, []
        for sandbox in spent:
            self._track(self.backend.destroy(sandbox))
        self._refill()

    def _track(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Destroy every sandbox and stop refilling."""
        self._closed = True
        for timer in self._timers:
            timer.cancel()
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)  # starts and destroys finish
        async with self._changed:
            doomed = [*self._ready, *self._busy, *self._spent]
            self._ready.clear()
            self._busy.clear()
            self._spent.clear()
            self._changed.notify_all()
        await asyncio.gather(*(self.backend.destroy(s) for s in doomed), return_exceptions=True)
        await self.backend.close()

    def _refill(self) -> None:
        if self._closed:
            return
        # A busy sandbox that will serve again comes back: no replacement starts for it.
        returning = sum(1 for sandbox in self._busy if sandbox.reuses_left > 0)
        missing = self.target - len(self._ready) - self._starting - returning
        for _ in range(max(0, min(missing, self.maximum - self._alive))):
            self._start_one()

    def _start_one(self) -> None:
        self._starting += 1
        self._track(self._create())

    async def _create(self) -> None:
        sandbox: Sandbox | None = None
        failed = False
        try:
            if self._failures:
                # A refusal (a setting, a missing requirement) is asked again rarely.
                ceiling = _REFUSED_BACKOFF_SECONDS if self._refusal else 5.0
                await asyncio.sleep(min(_START_BACKOFF_SECONDS * self._failures, ceiling))
            sandbox = await self.backend.create()
            if self._containment is not None:
                self._containment.observe(sandbox.isolation)
            self._failures = 0
            self._refusal = None
        except SandboxStartError as exc:
            failed = True
            self._failures += 1
            if exc.permanent:
                if self._refusal is None or str(self._refusal) != str(exc):
                    logger.error("sandboxes cannot start: %s", exc)
                self._refusal = exc
            else:
                logger.warning("a sandbox failed to start: %s", exc)
        finally:
            async with self._changed:
                self._starting -= 1
                if sandbox is not None:
                    if self._closed:
                        await self.backend.destroy(sandbox)
                    else:
                        self._ready.append(sandbox)
                        self._watch(sandbox)
                        self._trim()
                self._changed.notify_all()
            self._report()
            if failed and not self._closed:
                self._refill()  # a start that failed is tried again (after the backoff)

    def _trim(self) -> None:
        """Destroy ready sandboxes over the target that no claim waits for (a claimed one
        given back unused while its replacement was starting). Called holding the lock."""
        while len(self._ready) > self.target and not self._queue:
            self._metrics.evictions.labels(reason="surplus").inc()
            self._track(self.backend.destroy(self._ready.pop()))

    def _watch(self, sandbox: Sandbox) -> None:
        """Forget a ready sandbox whose process exits (killed, crashed) and start another,
        rather than hand it to a claim."""
        process = sandbox.process
        if process is None:
            return

        async def watch() -> None:
            await process.wait()
            async with self._changed:
                if sandbox not in self._ready:
                    return  # claimed first: its execution reports the loss
                self._ready.remove(sandbox)
                self._changed.notify_all()
            logger.warning("a warm sandbox exited (code %s); replacing it", process.returncode)
            self._metrics.evictions.labels(reason="exited").inc()
            self._track(self.backend.destroy(sandbox))
            self._report()
            self._refill()

        task = asyncio.create_task(watch())
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def _report(self) -> None:
        self._metrics.pool_ready.set(len(self._ready))
        self._metrics.pool_busy.set(len(self._busy))
