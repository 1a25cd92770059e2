"""``SkillMcp`` in process (the SDK's in-memory client; scripts never run here): the catalog
honours the catalog mode, search results become activatable, a changed skill must be
activated again."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from mcp import Client

from mcp_manager.mcp_server import SkillMcp
from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.skills import SkillLibrary
from skillweave.storage.local import LocalArtifactStore
from tests.integration.mcp.conftest import write_library


async def _never(request: ExecuteRequest) -> ExecutionResult:
    raise AssertionError("no script runs in these tests")


def front_door(tmp_path: Path, **skills: object) -> SkillMcp:
    library = write_library(tmp_path)
    settings = Settings(_env_file=None, skills={"dirs": [str(library)], **skills})
    return SkillMcp(
        settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=LocalArtifactStore(tmp_path / "store"),
        run_script=_never,
    )


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


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
        after = await client.call_tool("activate_skill", {"name": "reverser"})
        assert not after.is_error, text_of(after)


async def test_a_skill_changed_since_activation_must_be_activated_again(tmp_path: Path) -> None:
    mcp = front_door(tmp_path)
    async with Client(mcp.server) as client:
        await client.call_tool("activate_skill", {"name": "style-guide"})
        rules = tmp_path / "library" / "style-guide" / "references" / "rules.md"
        rules.write_text("Long sentences now.\n")
        mcp.use_registry(SkillLibrary(mcp.settings.skills).refresh())
        stale = await client.call_tool(
            "read_skill_resource", {"skill": "style-guide", "path": "references/rules.md"}
        )
        assert stale.is_error
        assert "activate it again" in text_of(stale)
        await client.call_tool("activate_skill", {"name": "style-guide"})
        fresh = await client.call_tool(
            "read_skill_resource", {"skill": "style-guide", "path": "references/rules.md"}
        )
        assert text_of(fresh) == "Long sentences now.\n"
