"""Both front doors, one set of rules: the same library served to an agent run and to an MCP
session offers the same tools with the same schemas, and answers the same mistakes with the
same texts (``skillweave.agent.disclosure``)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from mcp import Client

from mcp_manager.mcp_server import SkillMcp
from skillweave.agent import disclosure
from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.skills import SkillLibrary
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import run_agent, sample_library

SHARED = ("activate_skill", "read_skill_resource", "run_skill_script")

MISTAKES = [
    ("activate_skill", {"name": "toolkit"}),
    ("read_skill_resource", {"skill": "notes", "path": "x.md"}),
    ("run_skill_script", {"skill": "no-such-skill", "script": "x.py"}),
    ("activate_skill", {"name": "no-such-skill"}),
    ("activate_skill", {"name": ""}),
    ("run_skill_script", {"skill": "toolkit", "script": "x.py", "args": "-v"}),
]


async def _never(request: ExecuteRequest) -> ExecutionResult:
    raise AssertionError("no script runs in this test")


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_a_run_and_an_mcp_session_offer_the_same_tools_and_refusals(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    calls = "\n".join(
        f"              - {{name: {name}, arguments: {arguments}}}" for name, arguments in MISTAKES
    )
    run = await run_agent(
        tmp_path / "run",
        f"""
        turns:
          - tool_calls: [{{name: activate_skill, arguments: {{name: toolkit}}}}]
          - tool_calls:
{calls}
          - say: done
        """,
        registry=sample_library(root),
    )
    assert run.result.status == "completed", run.result.reason
    offered = {spec.name: spec for spec in run.provider.requests[1].tools}
    run_refusals = run.provider.texts(3)[-len(MISTAKES) :]

    settings = Settings(
        _env_file=None,
        skills={"dirs": [str(root)], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    mcp = SkillMcp(
        settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=LocalArtifactStore(tmp_path / "store"),
        run_script=_never,
    )
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "toolkit"})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        mcp_refusals = []
        for name, arguments in MISTAKES:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            mcp_refusals.append(_text(result))

    for name in SHARED:
        assert tools[name].description == offered[name].description, name
        schema = dict(tools[name].input_schema)
        if name == "run_skill_script":  # an MCP client's own files: the one addition
            properties = dict(schema["properties"])
            assert properties.pop(disclosure.INPUT_FILES)["maxItems"] == disclosure.INPUT_FILES_MAX
            schema["properties"] = properties
        assert schema == offered[name].input_schema, name
    assert mcp_refusals == run_refusals
    assert run_refusals[0] == disclosure.already_active("toolkit")


def test_the_front_door_adds_only_listing_a_top_k_and_own_files_to_a_runs_tools() -> None:
    run = disclosure.tool_specs(roots=("a", "b"), active={}, search=True)
    door = disclosure.front_door_specs(roots=("a", "b"), active={})
    assert [spec.name for spec in door] == ["list_skills", *(spec.name for spec in run)]
    for ours, theirs in zip(door[1:], run, strict=True):
        assert ours.description == theirs.description
        properties = dict(ours.input_schema["properties"])
        if ours.name == "search_skills":
            assert properties.pop("top_k")["maximum"] == disclosure.SEARCH_TOP_K_MAX
        if ours.name == "run_skill_script":
            files = properties.pop(disclosure.INPUT_FILES)
            assert "or a local path" not in files["description"]
            local = disclosure.front_door_specs(roots=("a",), active={}, local_paths=True)
            offered = next(s for s in local if s.name == "run_skill_script").input_schema
            assert "or a local path" in offered["properties"]["input_files"]["description"]
        assert properties == theirs.input_schema["properties"]
