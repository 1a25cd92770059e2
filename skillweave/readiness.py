"""Start-up in any order: one waiting policy for a service's dependencies, and the readiness
state its health endpoint reads.

A long-running process (``skillweave worker``, ``skillweave manager``, ``skillweave api``) may
start before what it needs (Temporal, the store): :func:`until_ready` tries a dependency, and
while it fails in a way that may pass by itself (nothing listens yet, no answer, a 5xx) says
so in ONE warning line, retries with back-off (:data:`START_BACKOFF`: 1 s doubling to 15 s,
jittered) and says in one line when it came up. A failure that can never pass without an
operator (an address that is no address, a namespace or bucket that does not exist, wrong
credentials) goes through at once, as the one-line error it already is: the caller decides
which is which (`transient`).

:class:`Readiness` is what the process is waiting for, and since when (a
:class:`~skillweave.waiting.Waiting` per dependency): the worker's ``/healthz``
(``skillweave.engines.worker_metrics``), the manager's (``mcp_manager.app``) and the API's
(``skillweave.api.app``) answer 503 ``{"ready": false, "waiting_for": [...]}`` from it until
the process serves, then 200. :meth:`Readiness.serving` runs a server's set-up in the
background, so that the server answers (503) while its set-up waits.

Callers: ``skillweave.cli.startup`` (Temporal and the store of the worker and the API),
``skillweave.storage.reachable`` (the store's rule), ``mcp_manager.app``, ``skillweave.api.app``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from skillweave.waiting import Waiting

__all__ = [
    "START_BACKOFF",
    "Readiness",
    "StartBackoff",
    "all_ready",
    "until_ready",
]

_T = TypeVar("_T")

logger = logging.getLogger("skillweave.readiness")

_ATTEMPT_TIMEOUT_SECONDS: Final = 10.0
"""One attempt that has not answered in this long counts as "no answer": tried again."""


@dataclass(frozen=True)
class StartBackoff:
    """The waits between attempts at a dependency that is not up yet.

    Attributes:
        initial: seconds before the second attempt.
        maximum: no wait is longer.
        jitter: each wait is drawn within ± this fraction of its nominal value, so that
            processes started together do not knock together.
    """

    initial: float = 1.0
    maximum: float = 15.0
    jitter: float = 0.2

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1: the first)."""
        nominal = min(self.maximum, self.initial * 2 ** max(0, attempt - 1))
        return nominal * random.uniform(1 - self.jitter, 1 + self.jitter)


START_BACKOFF: Final = StartBackoff()


class Readiness:
    """Whether a process serves yet, and what it is waiting for since when.

    Read by health endpoints (from any thread: the worker's health server has its own), told
    by :func:`until_ready` and by whoever finishes the set-up (:meth:`mark_ready`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, Waiting] = {}
        self._ready = False
        self._failure: BaseException | None = None
        self._began: asyncio.Event | None = None  # a wait began, or the set-up is done
        self._on_failure: list[Callable[[BaseException], None]] = []

    @property
    def ready(self) -> bool:
        """Whether the process serves."""
        return self._ready

    @property
    def failure(self) -> BaseException | None:
        """What stopped the set-up for good after it had begun to wait, if anything did."""
        return self._failure

    def waiting_for(self) -> list[Waiting]:
        """The dependencies waited for now, oldest first."""
        with self._lock:
            return sorted(self._waiting.values(), key=lambda wait: wait.since)

    def waits(self, on: str, detail: str) -> None:
        """`on` is not up: `detail` says why (its first wait is kept, `since` with it)."""
        with self._lock:
            known = self._waiting.get(on)
            since = known.since if known is not None else None
            wait = Waiting.now(on, detail)
            self._waiting[on] = wait if since is None else wait.model_copy(update={"since": since})
        if self._began is not None:
            self._began.set()

    def came_up(self, on: str) -> None:
        """`on` answers now."""
        with self._lock:
            self._waiting.pop(on, None)

    def mark_ready(self) -> None:
        """The process serves."""
        with self._lock:
            self._waiting.clear()
            self._ready = True
        if self._began is not None:
            self._began.set()

    def on_failure(self, handler: Callable[[BaseException], None]) -> None:
        """Call `handler` (on the event loop) when the set-up fails for good after it began
        to wait: whoever runs the server stops it then, and says the failure in one line."""
        self._on_failure.append(handler)

    def failed(self, exc: BaseException) -> None:
        """The set-up failed for good while the server was answering 503: the handlers are
        told, or, with none, it is logged (the process stays not ready)."""
        self._failure = exc
        if not self._on_failure:
            logger.error("cannot start: %s", exc)
        for handler in self._on_failure:
            handler(exc)

    def health(self) -> dict[str, object]:
        """``{"ready": …, "waiting_for": [{"on", "since", "detail"}, …]}`` (and ``failed``,
        the one line that stopped the set-up, when one did)."""
        body: dict[str, object] = {
            "ready": self._ready,
            "waiting_for": [
                {"on": wait.on, "since": wait.since.isoformat(), "detail": wait.detail}
                for wait in self.waiting_for()
            ],
        }
        if self._failure is not None:
            body["failed"] = str(self._failure)
        return body

    def retry_after(self) -> int:
        """Seconds a client refused while not ready should wait (what the back-off waits)."""
        return int(START_BACKOFF.initial * 2)

    @contextlib.asynccontextmanager
    async def serving(
        self, setup: contextlib.AbstractAsyncContextManager[object]
    ) -> AsyncIterator[None]:
        """Enter `setup` (a server's start-up: it waits with :func:`until_ready`) in a task of
        its own, and let the server answer while it waits: this context is entered once the
        set-up is done (ready) or has begun to wait, and exited after `setup` is.

        A set-up that fails before it waits raises here (as it would without this). One that
        fails after it began to wait goes to :meth:`failed`.
        """
        stop = asyncio.Event()
        stopping = False
        # An event of this loop: one app may be served on several loops in turn (tests).
        self._began = began_waiting = asyncio.Event()
        self._ready = False
        self._failure = None

        async def run() -> None:
            async with setup:
                self.mark_ready()
                await stop.wait()

        def ended(task: asyncio.Task[None]) -> None:
            if not stopping and not task.cancelled() and (exc := task.exception()) is not None:
                self.failed(exc)

        task = asyncio.create_task(run(), name="set-up")
        began = asyncio.create_task(began_waiting.wait())
        try:
            await asyncio.wait({task, began}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        finally:
            began.cancel()
        if task.done():
            task.result()  # what failed before any wait, raised here
        task.add_done_callback(ended)
        try:
            yield
        finally:
            stopping = True
            ended_already = task.done()  # a failure then was told to the handlers
            stop.set()
            if not self._ready:
                task.cancel()  # still waiting: no set-up to undo
            if not ended_already:
                with contextlib.suppress(asyncio.CancelledError):
                    await task  # a failing shutdown is raised, as it would be without this


async def until_ready(
    what: str,
    attempt: Callable[[], Awaitable[_T]],
    *,
    on: str,
    transient: Callable[[BaseException], str | None],
    readiness: Readiness | None = None,
    backoff: StartBackoff = START_BACKOFF,
    timeout: float = _ATTEMPT_TIMEOUT_SECONDS,
) -> _T:
    """`attempt`'s result, tried until it comes: while it fails transiently, warn once
    (``waiting for Temporal at HOST:PORT (connection refused): start it; retrying with
    back-off``), wait with `backoff` and try again; once it comes after a wait, say so
    (``Temporal at HOST:PORT is up after 12 s``).

    Args:
        what: the dependency, as an operator names it (``Temporal at 127.0.0.1:7233``).
        attempt: one try; its result is returned.
        on: the dependency's name in `readiness` (``temporal``, ``store``).
        transient: the reason, in a few words, when a failure may pass by itself (not up
            yet); None when it never will: it is raised at once.
        readiness: told what is waited for, and when it came up.
        backoff: the waits between attempts.
        timeout: an attempt with no answer in this long is a transient failure.

    Raises:
        Exception: the first failure that `transient` says will not pass by itself.
    """
    started = time.monotonic()
    tries = 0
    while True:
        tries += 1
        try:
            result = await asyncio.wait_for(attempt(), timeout)
        except TimeoutError:
            reason: str | None = f"no answer in {timeout:g} s"
        except Exception as exc:
            reason = transient(exc)
            if reason is None:
                raise
        else:
            if tries > 1:
                logger.warning("%s is up after %.0f s", what, time.monotonic() - started)
            if readiness is not None:
                readiness.came_up(on)
            return result
        if tries == 1:
            logger.warning("waiting for %s (%s): start it; retrying with back-off", what, reason)
        if readiness is not None:
            readiness.waits(on, f"{what}: {reason}")
        await asyncio.sleep(backoff.delay(tries))


async def all_ready(*waits: Awaitable[object]) -> list[object]:
    """Every one of `waits` (:func:`until_ready` calls) at once, so that each dependency is
    waited for, and shown, side by side; the first that fails for good cancels the others and
    is raised."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        return [task.result() for task in tasks]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
