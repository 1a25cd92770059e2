"""A skill's ``evals/`` is kept from the agent using it, the same way on both front doors: a run
on the direct engine's services and an MCP session list the same files at activation, refuse
``read_skill_resource`` of an eval with the same text, and the MCP ``skill://`` resources refuse
it too; a script still gets the whole package (``skills.resources.is_withheld``)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_manager.mcp_server import SkillMcp
from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.skills import SkillLibrary, SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import run_agent, write_skill

ANSWER = "exactly 3.107 miles"
PEEK = (
    "import pathlib\n"
    "print('package holds', sorted(p.name for p in pathlib.Path('skill/evals').iterdir()))\n"
)
READS = [
    {"skill": "converter", "path": "evals/evals.json"},
    {"skill": "converter", "path": "Evals/triggers.json"},
    {"skill": "converter", "path": "./evals/files/lengths.csv"},
]


def _library(root: Path) -> SkillRegistry:
    write_skill(
        root,
        "converter",
        "# Converter\nSee references/units.md.",
        files={
            "references/units.md": "# Units\n1 km = 0.621 miles.\n",
            "scripts/peek.py": PEEK,
            "evals/evals.json": (
                '{"evals": [{"id": 1, "prompt": "5 km in miles?", '
                f'"expected_output": "{ANSWER}", "expectations": ["{ANSWER}"]}}]}}'
            ),
            "evals/triggers.json": '[{"query": "bake bread", "should_trigger": false}]',
            "evals/files/lengths.csv": "km\n5\n",
        },
    )
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def _never(request: ExecuteRequest) -> ExecutionResult:
    raise AssertionError("no script runs through the MCP door in this test")


async def test_both_doors_keep_a_skills_evals_from_the_agent(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    reads = "\n".join(
        f"              - {{name: read_skill_resource, arguments: {arguments}}}"
        for arguments in [*READS, {"skill": "converter", "path": "references/units.md"}]
    )
    run = await run_agent(
        tmp_path / "run",
        f"""
        turns:
          - tool_calls: [{{name: activate_skill, arguments: {{name: converter}}}}]
          - tool_calls:
{reads}
              - {{name: run_skill_script, arguments: {{skill: converter, script: scripts/peek.py}}}}
          - say: done
        """,
        registry=_library(root),
    )
    assert run.result.status == "completed", run.result.reason
    activation = next(text for text in run.provider.texts(2) if "<skill_content" in text)
    assert "references/units.md\nscripts/peek.py\n</skill_resources>" in activation
    assert "evals" not in activation
    answers = run.provider.texts(3)[-(len(READS) + 2) :]
    run_refusals = answers[: len(READS)]
    assert all("evals are kept from the agent" in text for text in run_refusals), run_refusals
    assert not any(ANSWER in text or "bake bread" in text for text in answers)
    assert "1 km = 0.621 miles." in answers[len(READS)]
    # The sandbox is given the whole package: a script may read its own evals' files.
    assert "package holds ['evals.json', 'files', 'triggers.json']" in answers[-1]

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
        activated = _text(await client.call_tool("activate_skill", {"name": "converter"}))
        assert activated == activation
        mcp_refusals = []
        for arguments in READS:
            result = await client.call_tool("read_skill_resource", arguments)
            assert result.is_error, arguments
            mcp_refusals.append(_text(result))
        units = await client.call_tool(
            "read_skill_resource", {"skill": "converter", "path": "references/units.md"}
        )
        assert "1 km = 0.621 miles." in _text(units)
        for uri in (
            "skill://converter/evals/evals.json",
            "skill://converter/EVALS/triggers.json",
            "skill://converter/evals",
        ):
            with pytest.raises(MCPError, match="evals are kept from the agent"):
                await client.read_resource(uri)
        readme = await client.read_resource("skill://converter/references/units.md")
        assert readme.contents[0].text.startswith("# Units")
    assert mcp_refusals == run_refusals
