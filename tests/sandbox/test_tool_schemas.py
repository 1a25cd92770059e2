"""Discovering an executable skill's tools through a sandbox, and calling one."""

from __future__ import annotations

import json

from skillweave.sandbox.models import ExecuteRequest, ExecutionResult, ExecutionStatus
from skillweave.sandbox.tool_schemas import (
    TOOL_SCHEMA_RUN_ID,
    discover_tool_schemas,
    run_json_args,
)

V1 = "1" * 64
TOOL = {"name": "shout", "description": "Shout.", "input_schema": {"type": "object"}}


def manager(stdout: str, *, status: ExecutionStatus = "succeeded", stderr: str = ""):
    requests: list[ExecuteRequest] = []

    async def execute(request: ExecuteRequest) -> ExecutionResult:
        requests.append(request)
        return ExecutionResult(
            execution_id=request.execution_id,
            run_id=request.run_id,
            skill=request.skill,
            version=request.version,
            script=request.script,
            status=status,
            exit_code=0 if status == "succeeded" else 2,
            stdout=stdout,
            stderr=stderr,
        )

    return execute, requests


async def test_help_json_runs_under_a_stable_id_and_is_parsed() -> None:
    execute, requests = manager(json.dumps([TOOL, {**TOOL, "name": "whisper"}]))
    found = await discover_tool_schemas(execute, skill="loud", version=V1, script="s.py")
    assert not isinstance(found, str)
    assert [schema.name for schema in found] == ["shout", "whisper"]
    (request,) = requests
    assert request.execution_id == f"help-json/loud/{V1}/s.py"
    assert request.run_id == TOOL_SCHEMA_RUN_ID
    assert request.args == ["--help-json"]


async def test_a_failed_or_invalid_help_is_a_note() -> None:
    execute, _ = manager("", status="failed", stderr="boom " * 100)
    note = await discover_tool_schemas(execute, skill="loud", version=V1, script="s.py")
    assert isinstance(note, str)
    assert note.startswith("s.py --help-json failed (exit 2): boom")
    assert len(note) < 260
    execute, _ = manager("not json")
    note = await discover_tool_schemas(execute, skill="loud", version=V1, script="s.py")
    assert isinstance(note, str)
    assert "did not print JSON" in note


def test_a_tool_call_is_run_json_and_names_the_tool_when_the_script_has_several() -> None:
    assert run_json_args("shout", {"word": "hi"}, shared_script=False) == [
        "--run-json",
        '{"word": "hi"}',
    ]
    assert run_json_args("shout", {}, shared_script=True) == [
        "--run-json",
        "{}",
        "--tool",
        "shout",
    ]
