"""Ctrl-C (and, for a service, SIGTERM) cancels the running task, so that what it opened
closes in order.

An in-process manager takes no signal (``mcp_manager.server.LoopbackServer``), so the signal
cancels the task (the run first, then the manager after it). Once the context ends, the same
signals are ignored while the event loop lasts: what is stopping goes on stopping in order
(a worker's drain, the manager's sandboxes) instead of breaking off with a KeyboardInterrupt
and its tracebacks; the loop's end restores the defaults. Used by runs
(:func:`~skillweave.cli.agent_run.run_agent`), the demo's ``--keep``, ``skillweave dev`` and
``skillweave worker``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

__all__ = ["interrupt_cancels", "stop_signals_cancel"]


def interrupt_cancels(task: asyncio.Task[object] | None) -> AbstractContextManager[None]:
    """Ctrl-C cancels `task` while the context lasts."""
    return _signals_cancel(task, (signal.SIGINT,))


def stop_signals_cancel(task: asyncio.Task[object] | None) -> AbstractContextManager[None]:
    """Ctrl-C and SIGTERM cancel `task` while the context lasts: a service stopped by its
    supervisor shuts down in order."""
    return _signals_cancel(task, (signal.SIGINT, signal.SIGTERM))


@contextmanager
def _signals_cancel(
    task: asyncio.Task[object] | None, signals: tuple[signal.Signals, ...]
) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    try:
        if task is None:
            raise NotImplementedError
        for number in signals:
            loop.add_signal_handler(number, task.cancel)
            installed.append(number)
    except (NotImplementedError, RuntimeError, ValueError):  # no signals here (thread, OS)
        pass
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)
            loop.add_signal_handler(number, _stopping_already)


def _stopping_already() -> None:
    """A signal while the process stops: it is stopping already (see the module docstring)."""
