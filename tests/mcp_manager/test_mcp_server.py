"""``SkillMcp`` in process (the SDK's in-memory client; scripts run by a fake manager): the
catalog honours the catalog mode, search results become activatable, activation pins the
version, executable skills register their tools, and a full pool is waited for."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_manager.mcp_server import SkillMcp
from skillweave.config import Settings
from skillweave.errors import PoolExhaustedError
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.tool_schemas import TOOL_SCHEMA_RUN_ID
from skillweave.skills import SkillLibrary
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.mcp.conftest import write_library

SHOUT_SCHEMA = {
    "name": "shout",
    "description": "Upper-case a word.",
    "input_schema": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
}


async def _never(request: ExecuteRequest) -> ExecutionResult:
    raise AssertionError("no script runs in this test")


def _result(request: ExecuteRequest, stdout: str) -> ExecutionResult:
    return ExecutionResult(
        execution_id=request.execution_id,
        run_id=request.run_id,
        skill=request.skill,
        version=request.version,
        script=request.script,
        status="succeeded",
        exit_code=0,
        stdout=stdout,
    )


class FakeManager:
    """Answers ``--help-json`` with the shout schema and any other run with its arguments;
    the first `full` requests find the pool full."""

    def __init__(self, *, full: int = 0) -> None:
        self.full = full
        self.requests: list[ExecuteRequest] = []

    async def __call__(self, request: ExecuteRequest) -> ExecutionResult:
        self.requests.append(request)
        if len(self.requests) <= self.full:
            raise PoolExhaustedError("no sandbox free within 10 s", retry_after=0)
        if request.args == ["--help-json"]:
            return _result(request, json.dumps(SHOUT_SCHEMA))
        return _result(request, f"ran {request.args}")


def front_door(
    tmp_path: Path,
    run_script: Callable[[ExecuteRequest], Awaitable[ExecutionResult]] = _never,
    *,
    sandbox: dict[str, Any] | None = None,
    **skills: object,
) -> SkillMcp:
    library = write_library(tmp_path)
    write_skill(
        library / "shouter",
        description="Shouts words. Use when a word must be loud.",
        extra="metadata:\n  type: executable",
        files={"scripts/shout.py": "print('a tool')\n"},
    )
    settings = Settings(
        _env_file=None,
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded"), **skills},
        sandbox=sandbox or {},
    )
    return SkillMcp(
        settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=LocalArtifactStore(tmp_path / "store"),
        run_script=run_script,
    )


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def tool_names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def test_auto_mode_lists_the_best_matches_for_the_query(tmp_path: Path) -> None:
    mcp = front_door(tmp_path, catalog_mode="auto", catalog_top_k=1)
    async with Client(mcp.server) as client:
        listed = text_of(await client.call_tool("list_skills", {"query": "house writing style"}))
        assert 'name="style-guide"' in listed
        assert 'name="text-tools"' not in listed


async def test_a_search_result_becomes_activatable(tmp_path: Path) -> None:
    mcp = front_door(tmp_path)
    async with Client(mcp.server) as client:
        before = await client.call_tool("activate_skill", {"name": "reverser"})
        assert before.is_error
        found = text_of(await client.call_tool("search_skills", {"query": "reverse text"}))
        assert 'name="reverser"' in found
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "reverser" in tools["activate_skill"].input_schema["properties"]["name"]["enum"]
        after = await client.call_tool("activate_skill", {"name": "reverser"})
        assert not after.is_error, text_of(after)


async def test_a_repeated_activation_gets_the_already_active_note(tmp_path: Path) -> None:
    mcp = front_door(tmp_path)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        again = await client.call_tool("activate_skill", {"name": "style-guide"})
        assert again.is_error
        assert (
            text_of(again) == "Skill 'style-guide' is already active; its instructions are above."
        )


async def test_reads_use_the_version_pinned_at_activation(tmp_path: Path) -> None:
    mcp = front_door(tmp_path)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        pinned = mcp.registry.get("style-guide").version
        rules = tmp_path / "library" / "style-guide" / "references" / "rules.md"
        rules.write_text("Long sentences now.\n")
        mcp.use_registry(SkillLibrary(mcp.settings.skills).refresh())
        assert mcp.registry.get("style-guide").version != pinned
        read = await client.call_tool(
            "read_skill_resource", {"skill": "style-guide", "path": "references/rules.md"}
        )
        assert not read.is_error, text_of(read)
        assert text_of(read) == "Short sentences. No jargon.\n"  # the version it activated


async def test_runs_use_the_version_pinned_at_activation(tmp_path: Path) -> None:
    manager = FakeManager()
    mcp = front_door(tmp_path, manager)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        pinned = mcp.registry.get("style-guide").version
        (tmp_path / "library" / "style-guide" / "references" / "rules.md").write_text("new\n")
        mcp.use_registry(SkillLibrary(mcp.settings.skills).refresh())
        ran = await client.call_tool(
            "run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}
        )
        assert not ran.is_error, text_of(ran)
    assert [request.version for request in manager.requests] == [pinned]


async def test_a_pinned_version_that_is_gone_is_a_clear_tool_error(tmp_path: Path) -> None:
    mcp = front_door(tmp_path)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        pinned = mcp.registry.get("style-guide").version
        (tmp_path / "library" / "style-guide" / "references" / "rules.md").write_text("new\n")
        mcp.use_registry(SkillLibrary(mcp.settings.skills).refresh())
        await mcp.store.delete(keys.skill_package_key("style-guide", pinned))
        for tool, arguments in [
            ("read_skill_resource", {"skill": "style-guide", "path": "references/rules.md"}),
            ("run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}),
        ]:
            gone = await client.call_tool(tool, arguments)
            assert gone.is_error
            assert "is no longer available" in text_of(gone), text_of(gone)
            assert "Start a new session" in text_of(gone)


async def test_an_executable_skill_registers_its_tools_in_the_session(tmp_path: Path) -> None:
    manager = FakeManager()
    mcp = front_door(tmp_path, manager)
    changed: list[object] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message)

    async with Client(mcp.server, message_handler=on_message) as client:
        assert "shout" not in await tool_names(client)
        activated = text_of(await client.call_tool("activate_skill", {"name": "shouter"}))
        assert "Tools registered by this skill: shout." in activated
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["shout"].input_schema
        assert schema["required"] == ["word"]
        assert set(schema["properties"]) == {"word", "input_artifacts", "input_files"}
        assert tools["shout"].annotations.read_only_hint is False
        assert tools["activate_skill"].annotations.read_only_hint is True

        ran = await client.call_tool("shout", {"word": "hi"})
        assert not ran.is_error, text_of(ran)
        assert "ran ['--run-json', '{\"word\": \"hi\"}']" in text_of(ran)
    help_run, tool_run = manager.requests
    assert help_run.run_id == TOOL_SCHEMA_RUN_ID
    assert help_run.execution_id == f"help-json/shouter/{help_run.version}/scripts/shout.py"
    assert tool_run.script == "scripts/shout.py"
    assert tool_run.version == help_run.version
    assert changed  # the client heard that its tools changed


async def test_a_skill_tool_is_unknown_until_its_skill_is_active(tmp_path: Path) -> None:
    mcp = front_door(tmp_path, FakeManager())
    async with Client(mcp.server) as client:
        with pytest.raises(Exception, match="There is no tool named 'shout'"):
            await client.call_tool("shout", {"word": "hi"})


async def test_tool_schemas_are_asked_once_per_skill_version(tmp_path: Path) -> None:
    manager = FakeManager()
    mcp = front_door(tmp_path, manager)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "shouter"})
    mcp.sessions.clear()  # a new session activates it again
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "shouter"})
    assert [request.args for request in manager.requests] == [["--help-json"]]


async def test_a_full_pool_is_waited_for(tmp_path: Path) -> None:
    manager = FakeManager(full=2)
    mcp = front_door(tmp_path, manager, sandbox={"queue_seconds": 30})
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        ran = await client.call_tool(
            "run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}
        )
        assert not ran.is_error, text_of(ran)
    assert len(manager.requests) == 3


async def test_past_the_queue_budget_a_full_pool_is_a_tool_error(tmp_path: Path) -> None:
    manager = FakeManager(full=100)
    mcp = front_door(tmp_path, manager, sandbox={"queue_seconds": 0})
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        ran = await client.call_tool(
            "run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}
        )
        assert ran.is_error
        assert "no sandbox free" in text_of(ran)
    assert len(manager.requests) == 1


async def test_the_signature_policy_applies_at_activation_and_activations_are_audited(
    tmp_path: Path,
) -> None:
    """As a run's activation: an unsigned skill under ``unsigned: refuse`` is a tool error, not
    an activation; an activation is recorded in the audit log."""
    from skillweave.skills.signing import generate_keypair
    from skillweave.storage.audit import AuditLog

    _, public = generate_keypair()
    strict = front_door(tmp_path / "strict", trust={"keys": {"ops": public}, "unsigned": "refuse"})
    async with Client(strict.server) as client:
        refused = await client.call_tool("activate_skill", {"name": "style-guide"})
    assert refused.is_error
    assert text_of(refused).startswith("The skill 'style-guide' cannot be used: ")

    mcp = front_door(tmp_path / "open")
    async with Client(mcp.server) as client:
        done = await client.call_tool("activate_skill", {"name": "style-guide"})
    assert not done.is_error, text_of(done)
    records = [r async for r in AuditLog(mcp.store).read(event="activation")]
    assert [(r.skill, r.version) for r in records] == [
        ("style-guide", mcp.registry.get("style-guide").version)
    ]
    assert records[0].actor is not None
    assert records[0].actor.startswith("mcp@")
