"""Ctrl-C (and, for a service, SIGTERM) cancels the running task, so that what it opened
closes in order.

uvicorn, under an in-process manager, takes SIGINT for itself and would stop the manager under
the running job; these handlers come later, so the signal cancels the task instead (the job
first, then the manager after it). Used by jobs (:func:`~skillweave.cli.job.run_job`), the
demo's ``--keep``, ``skillweave dev`` and ``skillweave worker``.
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
