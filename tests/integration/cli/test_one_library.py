"""One skill library through the doors that run things (issue 39), as a user types them: a
skill installed from a folder with `skills install` is activated and its script run by
`skillweave run --engine direct` and `skillweave sandbox run`; a skill uploaded to the store
while `skillweave mcp` runs reaches it within the reload period, and leaves it when switched
off."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

pytestmark = pytest.mark.timeout(240)

RELOAD = 0.2
SEEN_WITHIN = 15.0  # seconds: generous for a loaded machine; a reload is every 0.2 s

HELLO = "import sys\nprint('hello from greeter:', ' '.join(sys.argv[1:]))\n"


def _env(tmp_path: Path) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    (tmp_path / "library").mkdir(exist_ok=True)
    return {
        **base,
        "HOME": str(tmp_path),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "SKILLS__RELOAD_SECONDS": str(RELOAD),
    }


def _skillweave(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=200,
        check=False,
    )


def test_an_installed_skill_is_activated_and_run_by_run_and_sandbox_run(tmp_path: Path) -> None:
    write_skill(
        tmp_path / "my-skills" / "greeter",
        description="Greets people. Use when someone says hello.",
        body="# Greeter\n\nRun scripts/hello.py with the person's name.\n",
        files={"scripts/hello.py": HELLO},
    )
    installed = _skillweave(tmp_path, "skills", "install", "./my-skills/greeter")
    assert installed.returncode == 0, installed.stderr
    listed = json.loads(_skillweave(tmp_path, "skills", "list", "--json").stdout)
    assert [(e["name"], e["source"], e["state"]) for e in listed] == [
        ("greeter", "installed", "enabled")
    ]

    script = tmp_path / "script.yaml"
    script.write_text(
        """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
  - expect: {tool_results: [{contains: '<skill_content name="greeter">', not_error: true}]}
    tool_calls:
      - name: run_skill_script
        arguments: {skill: greeter, script: scripts/hello.py, args: [Ada]}
  - expect: {tool_results: [{contains: 'hello from greeter: Ada', not_error: true}]}
    say: "Greeted Ada."
""",
        encoding="utf-8",
    )
    done = _skillweave(
        tmp_path, "run", "Say hello to Ada", "--engine", "direct", "--json",
        "--model", f"scripted:{script}",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "completed", result
    assert result["active_skills"] == {"greeter": listed[0]["version"]}
    assert result["answer"] == "Greeted Ada."

    ran = _skillweave(tmp_path, "sandbox", "run", "greeter", "scripts/hello.py", "--", "Grace")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "hello from greeter: Grace" in ran.stdout


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def _listed_eventually(client: Client, holds: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + SEEN_WITHIN
    while True:
        catalog = _text(await client.call_tool("list_skills", {}))
        if holds(catalog):
            return catalog
        if time.monotonic() > deadline:
            raise AssertionError(f"the library did not change in time; catalog:\n{catalog}")
        await asyncio.sleep(0.05)


async def test_a_skill_uploaded_while_mcp_runs_reaches_it_within_the_reload_period(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path / "library" / "style-guide", description="House style. Use to write.")
    env = _env(tmp_path)
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "skillweave.cli", "mcp"], env=env, cwd=str(tmp_path)
    )
    stored = StoredSkills(LocalArtifactStore(tmp_path / "store"))
    async with Client(command) as client:
        first = _text(await client.call_tool("list_skills", {}))
        assert "style-guide" in first
        assert "greeter" not in first

        # Another process uploads (the API, `skills install`): the running server sees it.
        started = time.monotonic()
        await stored.add_content(
            "greeter",
            "Greets people. Use when someone says hello.",
            "---\nname: greeter\ndescription: Greets people. Use when someone says hello.\n"
            "---\n# Greeter\n\nSay hello back.\n",
        )
        await _listed_eventually(client, lambda text: "greeter" in text)
        seen_after = time.monotonic() - started
        activated = _text(await client.call_tool("activate_skill", {"name": "greeter"}))
        assert "Say hello back." in activated

        await stored.set_enabled("greeter", False)
        await _listed_eventually(client, lambda text: "greeter" not in text)
    assert seen_after < SEEN_WITHIN
