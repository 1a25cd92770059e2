"""The sandbox executor: one one-shot HTTP server per sandbox, run by the MCP manager.

It receives a skill package, input files and an ``ExecutorRequest``; runs the script once,
isolated (bubblewrap when it works here, else rlimits only) and limited; answers an
``ExecutorResult``; serves stdout, stderr and outputs; then waits to be destroyed.
See ``app`` for the endpoints, ``isolation`` and ``limits`` for the boundary.
"""

from sandbox_executor.app import CancelResult, Health, create_app
from sandbox_executor.errors import (
    ExecutorBusyError,
    ExecutorError,
    IsolationUnavailableError,
    RequestRejectedError,
)
from sandbox_executor.executor import Executor
from sandbox_executor.server import run_executor
from sandbox_executor.settings import ExecutorSettings

__all__ = [
    "CancelResult",
    "Executor",
    "ExecutorBusyError",
    "ExecutorError",
    "ExecutorSettings",
    "Health",
    "IsolationUnavailableError",
    "RequestRejectedError",
    "create_app",
    "run_executor",
]
