"""What a call to the MCP front door gives back when it is not a plain success.

A refusal the client (and its model) can act on is a :class:`ToolError`, returned as an
error result; a script that ran and failed is a :class:`ScriptFailedError`, its rendered
result and outputs as the error result; a call refused for now, nothing done, is the
:data:`UNAVAILABLE` JSON-RPC error that :func:`unavailable` builds. :func:`text` is a text
content block. The door's tool, activation, run and prompt handlers use them.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from skillweave.sandbox import Problem, ProblemCode

__all__ = ["UNAVAILABLE", "ScriptFailedError", "ToolError", "text", "unavailable"]

UNAVAILABLE: Final = -32050
"""The JSON-RPC error code of a call refused for now, nothing done (an implementation-defined
server error, in -32000..-32099): its ``data`` is the problem, typed by its ``error`` code
(``audit_unavailable``), with ``retry_after``. Ask again after it."""


class ToolError(Exception):
    """A refusal the client (and its model) can act on: returned as an error result."""


class ScriptFailedError(ToolError):
    """A failed script: its rendered result and outputs, as an error result."""

    def __init__(self, content: list[Any]) -> None:
        super().__init__(content[0].text)
        self.content = content


def unavailable(detail: str, *, retry_after: float) -> MCPError:
    """The :data:`UNAVAILABLE` refusal: the audit log cannot be written, nothing was done."""
    problem = Problem.coded(
        ProblemCode.AUDIT_UNAVAILABLE,
        status=503,
        title="Audit log unavailable",
        detail=detail,
        retry_after=retry_after,
    )
    return MCPError(UNAVAILABLE, detail, data=problem.body())


def text(value: str) -> types.TextContent:
    """`value` as a text content block."""
    return types.TextContent(type="text", text=value)
