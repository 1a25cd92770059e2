"""The MCP front door over streamable HTTP, with the official ``mcp`` client against a real
manager (real sandboxes, real store): tools, catalog, a tree activated parent then child, a
resource, a script whose output file comes back, refusals, sessions kept apart, 401s."""

from __future__ import annotations

import asyncio

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.integration.mcp.conftest import FrontDoor

pytestmark = pytest.mark.timeout(120)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_tools_catalog_tree_resource_and_a_script_with_its_output(
    front_door: FrontDoor,
) -> None:
    async with front_door.connect() as client:
        assert client.protocol_version != "2026-07-28"  # a session, for activations
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {
            "list_skills",
            "activate_skill",
            "read_skill_resource",
            "run_skill_script",
            "search_skills",
        }
        enum = tools["activate_skill"].input_schema["properties"]["name"]["enum"]
        assert set(enum) == {"text-tools", "style-guide"}  # a sub-skill: once its parent is

        catalog = text_of(await client.call_tool("list_skills", {}))
        assert 'name="text-tools"' in catalog
        assert 'name="style-guide"' in catalog
        assert 'name="reverser"' not in catalog  # a sub-skill: listed once its parent is active

        refused = await client.call_tool("activate_skill", {"name": "reverser"})
        assert refused.is_error
        assert "A sub-skill becomes available once its parent skill is active" in text_of(refused)

        parent = text_of(await client.call_tool("activate_skill", {"name": "text-tools"}))
        assert "<skill_content" in parent
        assert "reverser" in parent  # the sub-skill's catalog entry
        assert 'name="reverser"' in text_of(await client.call_tool("list_skills", {}))
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["activate_skill"].input_schema["properties"]["name"]["enum"] == [
            "style-guide",
            "reverser",
        ]
        child = text_of(await client.call_tool("activate_skill", {"name": "reverser"}))
        assert "# Reverser" in child

        ran = await client.call_tool(
            "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
        )
        assert not ran.is_error, text_of(ran)
        assert "status: succeeded (exit code 0" in text_of(ran)
        assert "wrote 20 characters" in text_of(ran)
        [output] = [c for c in ran.content if isinstance(c, types.EmbeddedResource)]
        assert output.resource.uri.endswith("/outputs/reversed.txt")
        assert output.resource.text == "hello from the child"[::-1]

        # The output is an artifact of this session: it can be read back and fed to a script.
        again = await client.read_resource(output.resource.uri)
        assert again.contents[0].text == output.resource.text
        chained = await client.call_tool(
            "run_skill_script",
            {
                "skill": "reverser",
                "script": "scripts/reverse.py",
                "args": ["reversed.txt"],
                "inputs": [output.resource.uri],
            },
        )
        [back] = [c for c in chained.content if isinstance(c, types.EmbeddedResource)]
        assert back.resource.text == "hello from the child"

        style = await client.call_tool("activate_skill", {"name": "style-guide"})
        assert not style.is_error
        rules = await client.call_tool(
            "read_skill_resource", {"skill": "style-guide", "path": "references/rules.md"}
        )
        assert text_of(rules) == "Short sentences. No jargon.\n"
        escape = await client.call_tool(
            "read_skill_resource", {"skill": "style-guide", "path": "../text-tools/SKILL.md"}
        )
        assert escape.is_error

        found = text_of(await client.call_tool("search_skills", {"query": "reverse text"}))
        assert 'name="reverser"' in found


async def test_skill_files_are_resources_and_the_catalog_is_a_prompt(
    front_door: FrontDoor,
) -> None:
    async with front_door.connect() as client:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "skill://style-guide/SKILL.md" in listed
        assert "skill://reverser/SKILL.md" in listed
        rules = await client.read_resource("skill://style-guide/references/rules.md")
        assert rules.contents[0].text == "Short sentences. No jargon.\n"
        script = await client.read_resource("skill://reverser/scripts/reverse.py")
        assert "outputs/reversed.txt" in script.contents[0].text
        with pytest.raises(MCPError, match="no skill"):
            await client.read_resource("skill://nope/SKILL.md")
        with pytest.raises(MCPError):
            await client.read_resource("skill://style-guide/../../etc/passwd")
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["skill_catalog"]
        prompt = await client.get_prompt("skill_catalog")
        assert 'name="style-guide"' in prompt.messages[0].content.text


async def test_a_script_of_an_inactive_skill_is_refused(front_door: FrontDoor) -> None:
    async with front_door.connect() as client:
        refused = await client.call_tool(
            "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
        )
        assert refused.is_error
        assert "Skill 'reverser' is not active" in text_of(refused)
        assert "skills that can be activated now" in text_of(refused)  # a sub-skill
    assert await front_door.store.list("runs/") == []  # nothing ran


async def test_two_concurrent_sessions_keep_their_own_activations(
    front_door: FrontDoor,
) -> None:
    async with front_door.connect() as first, front_door.connect() as second:
        await first.call_tool("activate_skill", {"name": "text-tools"})
        await first.call_tool("activate_skill", {"name": "reverser"})

        refused, ran = await asyncio.gather(
            second.call_tool(
                "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
            ),
            first.call_tool(
                "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
            ),
        )
        assert refused.is_error
        assert "Skill 'reverser' is not active" in text_of(refused)
        assert not ran.is_error
        child = await second.call_tool("activate_skill", {"name": "reverser"})
        assert child.is_error  # its parent is active in the other session only

        # An artifact of one session is not an input the other can pass.
        [output] = [c for c in ran.content if isinstance(c, types.EmbeddedResource)]
        await second.call_tool("activate_skill", {"name": "text-tools"})
        await second.call_tool("activate_skill", {"name": "reverser"})
        stolen = await second.call_tool(
            "run_skill_script",
            {"skill": "reverser", "script": "scripts/reverse.py", "inputs": [output.resource.uri]},
        )
        assert stolen.is_error
        assert "not an artifact of this session" in text_of(stolen)
        with pytest.raises(MCPError, match="not an artifact of this session"):
            await second.read_resource(output.resource.uri)


async def test_no_token_or_a_wrong_one_is_401(front_door: FrontDoor) -> None:
    async with httpx.AsyncClient() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
            response = await http.post(
                front_door.url,
                headers={**headers, "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
    with pytest.raises(ExceptionGroup) as refused:  # the SDK's task group around its error
        async with front_door.connect(token="wrong") as client:
            await client.list_tools()
    assert refused.group_contains(MCPError, match="error response", depth=None)


async def test_bad_arguments_are_error_results_naming_the_problem(front_door: FrontDoor) -> None:
    async with front_door.connect() as client:
        cases = [
            ("activate_skill", {}, "activate_skill needs 'name'"),
            (
                "activate_skill",
                {"name": "no-such-skill"},
                "Skills that can: style-guide, text-tools",
            ),
            ("read_skill_resource", {"skill": "style-guide"}, "needs 'path'"),
            ("run_skill_script", {"skill": "style-guide", "script": "x.py", "args": "-v"}, "list"),
            ("search_skills", {"query": "text", "top_k": 0}, "top_k"),
            ("search_skills", {"query": "text", "top_k": True}, "top_k"),
        ]
        await client.call_tool("activate_skill", {"name": "style-guide"})
        for tool, arguments, needle in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert needle in text_of(result), (tool, text_of(result))
        missing = await client.call_tool(
            "run_skill_script", {"skill": "style-guide", "script": "scripts/none.py"}
        )
        assert missing.is_error
        assert "none.py" in text_of(missing)
        with pytest.raises(MCPError, match="no tool"):
            await client.call_tool("rm_rf", {})
