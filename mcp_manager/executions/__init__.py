"""Running scripts exactly once: :class:`ExecutionService`, behind ``/sandbox/execute``
(being split into private modules; see ``_service``)."""

from mcp_manager.executions._service import (
    ExecutionService,
    ExecutionState,
    PreparedEnvironment,
    RepeatAnswer,
    audit_cause,
)

__all__ = [
    "ExecutionService",
    "ExecutionState",
    "PreparedEnvironment",
    "RepeatAnswer",
    "audit_cause",
]
