"""Executable skills' tools, found and called through a sandbox (DESIGN §3).

At activation each tool script of an executable skill is run once with ``--help-json``
(:func:`discover_tool_schemas`); what it prints is parsed by
``skillweave.skills.parse_tool_schemas``. A tool call runs the script with
``--run-json '<arguments>'`` (:func:`run_json_args`). The help runs are recorded under the run
:data:`TOOL_SCHEMA_RUN_ID` with the execution id ``help-json/{skill}/{version}/{script}``, so
the manager's stored result caches a skill version's schemas for every run and MCP session.

Used by the agent's services (``skillweave.engines``) and by the MCP front door
(``mcp_manager.mcp_server``); the tool names and specs are ``skillweave.agent.disclosure``'s.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from skillweave.errors import ToolSchemaError
from skillweave.sandbox.models import ExecuteRequest, ExecutionLimits, ExecutionResult
from skillweave.skills import ToolSchema, parse_tool_schemas

__all__ = [
    "HELP_JSON_TIMEOUT_SECONDS",
    "TOOL_SCHEMA_RUN_ID",
    "discover_tool_schemas",
    "help_json_request",
    "run_json_args",
]

TOOL_SCHEMA_RUN_ID: Final = "skill-tool-schemas"
"""The run under which ``--help-json`` executions are recorded; their execution id is
``help-json/{skill}/{version}/{script}``, so the manager's stored result is the cache of a
skill version's schemas for every run."""

HELP_JSON_TIMEOUT_SECONDS: Final = 30
_WHY_CHARS: Final = 200

Execute = Callable[[ExecuteRequest], Awaitable[ExecutionResult]]


def help_json_request(*, skill: str, version: str, script: str) -> ExecuteRequest:
    """The execution that asks `script` of `skill` at `version` for its tool schemas."""
    return ExecuteRequest(
        execution_id=f"help-json/{skill}/{version}/{script}",
        run_id=TOOL_SCHEMA_RUN_ID,
        skill=skill,
        version=version,
        script=script,
        args=["--help-json"],
        limits=ExecutionLimits(timeout_seconds=HELP_JSON_TIMEOUT_SECONDS),
    )


async def discover_tool_schemas(
    execute: Execute, *, skill: str, version: str, script: str
) -> tuple[ToolSchema, ...] | str:
    """The tools `script` declares, or one line saying why there are none.

    Args:
        execute: runs one request in a sandbox (queueing on a full pool is the caller's).

    Raises:
        whatever `execute` raises (infrastructure failures).
    """
    result = await execute(help_json_request(skill=skill, version=version, script=script))
    if result.status != "succeeded":
        why = (result.stderr or result.error or "").strip()
        if len(why) > _WHY_CHARS:
            why = why[: _WHY_CHARS - 1] + "…"
        return f"{script} --help-json {result.status} (exit {result.exit_code}): {why}"
    try:
        return parse_tool_schemas(result.stdout, script=script)
    except ToolSchemaError as exc:
        return str(exc)


def run_json_args(tool: str, arguments: Mapping[str, Any], *, shared_script: bool) -> list[str]:
    """The command line of a tool call: ``--run-json ARGUMENTS``, and ``--tool NAME`` when
    the script offers several tools."""
    args = ["--run-json", json.dumps(arguments)]
    if shared_script:
        args += ["--tool", tool]
    return args
