"""The executions running in this manager now: a repeat of one joins its future (layer 2 of
the package's docstring), and cancelling one stops its sandbox's process tree.

:class:`InflightRuns` is kept by ``ExecutionService``; the runner (``_runner``) records in an
:class:`InflightRun` which sandbox it runs in, and checks whether it was cancelled before its
script began.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from mcp_manager.backends import Sandbox
from mcp_manager.executor_client import ExecutorClient
from skillweave.sandbox import ExecuteRequest, ExecutionResult

__all__ = ["InflightRun", "InflightRuns"]


@dataclass(eq=False)
class InflightRun:
    """One execution running here: its request, the future its repeats await, its sandbox
    once it has one, whether it was cancelled, and when it began."""

    request: ExecuteRequest
    future: asyncio.Future[ExecutionResult]
    sandbox: Sandbox | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.perf_counter)


class InflightRuns:
    """The executions running here, by execution id.

    Args:
        executor: stops a cancelled run's process tree in its sandbox.
    """

    def __init__(self, executor: ExecutorClient) -> None:
        self._executor = executor
        self._runs: dict[str, InflightRun] = {}

    def __contains__(self, execution_id: object) -> bool:
        return execution_id in self._runs

    def ids(self) -> list[str]:
        """The ids running now (a copy: cancelling does not change it)."""
        return list(self._runs)

    def get(self, execution_id: str) -> InflightRun | None:
        """The run of `execution_id` going on here; None: none is."""
        return self._runs.get(execution_id)

    def begin(self, request: ExecuteRequest) -> InflightRun:
        """A run of `request`, going on from now until :meth:`end`."""
        run = InflightRun(request, asyncio.get_running_loop().create_future())
        self._runs[request.execution_id] = run
        return run

    def end(self, execution_id: str) -> None:
        """The run of `execution_id` is over (its future is settled)."""
        self._runs.pop(execution_id, None)

    async def cancel(self, execution_id: str) -> bool:
        """Stop a running execution (its whole process tree); False when it is not running."""
        run = self._runs.get(execution_id)
        if run is None:
            return False
        run.cancelled = True
        if run.sandbox is not None:
            await self._executor.cancel(run.sandbox)
        return True
