"""One skill library through the CLI's doors, as a user types the commands (issue 39):
installed, uploaded and agent-published skills are listed with directory skills, each with
its source and state; `skills show` shows a store skill; a SKILLS__DIRS root the user set
that does not exist is one line and exit 2."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.skills.stored import SkillOrigin, StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

pytestmark = pytest.mark.timeout(120)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("STORAGE__", "SKILLS__", "MODEL__", "WORKFLOW__"))
    }
    (tmp_path / "library").mkdir(exist_ok=True)
    return {
        **base,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        **extra,
    }


def _skillweave(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env or _env(tmp_path),
        timeout=100,
        check=False,
    )


def _listed(tmp_path: Path) -> dict[str, dict[str, object]]:
    done = _skillweave(tmp_path, "skills", "list", "--json")
    assert done.returncode == 0, done.stderr
    return {entry["name"]: entry for entry in json.loads(done.stdout)}


def test_an_installed_skill_is_listed_and_shown_beside_directory_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "library" / "style-guide", description="House style. Use to write.")
    write_skill(
        tmp_path / "my-skills" / "greeter",
        description="Greets people. Use when someone says hello.",
        body="# Greeter\n\nSay hello back, warmly.\n",
    )
    # Before: `skills show greeter` does not know it.
    unknown = _skillweave(tmp_path, "skills", "show", "greeter")
    assert unknown.returncode == 1
    assert "greeter" in unknown.stderr

    installed = _skillweave(tmp_path, "skills", "install", "./my-skills/greeter")
    assert installed.returncode == 0, installed.stderr

    listed = _listed(tmp_path)
    assert (listed["greeter"]["source"], listed["greeter"]["state"]) == ("installed", "enabled")
    assert (listed["style-guide"]["source"], listed["style-guide"]["state"]) == (
        "directory",
        "enabled",
    )
    table = _skillweave(tmp_path, "skills", "list")
    assert table.returncode == 0, table.stderr
    header = table.stdout.splitlines()[0].split()
    assert header[:4] == ["skill", "source", "state", "version"]
    row = next(line for line in table.stdout.splitlines() if line.startswith("greeter"))
    assert row.split()[1:3] == ["installed", "enabled"]

    shown = _skillweave(tmp_path, "skills", "show", "greeter")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith('<skill_content name="greeter">')
    assert "Say hello back, warmly." in shown.stdout
    version = str(listed["greeter"]["version"])
    assert f"greeter: source installed · state enabled · version {version[:12]}" in shown.stderr

    # `--dir` replaces SKILLS__DIRS; the store's skills stay part of the library.
    other = write_skill(tmp_path / "other" / "notes", description="Notes. Use for notes.")
    only = _skillweave(tmp_path, "skills", "list", "--json", "--dir", str(other.parent))
    names = {entry["name"]: entry["source"] for entry in json.loads(only.stdout)}
    assert names == {"notes": "directory", "greeter": "installed"}

    searched = _skillweave(tmp_path, "skills", "search", "hello", "--json")
    assert "greeter" in [hit["name"] for hit in json.loads(searched.stdout)]
    catalog = _skillweave(tmp_path, "skills", "catalog")
    assert '<skill name="greeter">' in catalog.stdout


async def _store_held_and_others(store_dir: Path) -> None:
    stored = StoredSkills(LocalArtifactStore(store_dir))

    async def hold(name: str, version: str, package: bytes) -> bool:
        return True  # as a scan policy of `approve` does

    def skill_md(name: str, what: str) -> str:
        return f"---\nname: {name}\ndescription: {what}\n---\n# {name}\n\nDo {what}\n"

    await stored.add_content(
        "risky", "Runs risky things.", skill_md("risky", "Runs risky things."), check=hold
    )
    await stored.add_content("posted", "Was posted.", skill_md("posted", "Was posted."))
    await stored.add_content("switched", "Is off.", skill_md("switched", "Is off."))
    await stored.set_enabled("switched", False)
    folder = store_dir.parent / "written" / "by-agent"
    write_skill(folder, description="An agent wrote it.")
    from skillweave.skills.package import build_package

    await stored.add_package(
        build_package(folder), origin=SkillOrigin(source="run run-1", kind="agent")
    )


def test_held_disabled_uploaded_and_agent_skills_say_their_source_and_state(
    tmp_path: Path,
) -> None:
    asyncio.run(_store_held_and_others(tmp_path / "store"))

    listed = _listed(tmp_path)
    assert {name: (e["source"], e["state"]) for name, e in listed.items()} == {
        "risky": ("uploaded", "held"),
        "posted": ("uploaded", "enabled"),
        "switched": ("uploaded", "disabled"),
        "by-agent": ("agent", "enabled"),
    }
    table = _skillweave(tmp_path, "skills", "list")
    assert "skills approve NAME" in table.stdout  # what "held" asks of the user

    # A held skill is not served, but shown for review, from the store.
    shown = _skillweave(tmp_path, "skills", "show", "risky")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("---\nname: risky")
    assert "risky: source uploaded · state held for approval" in shown.stderr
    assert "skillweave skills approve risky" in shown.stderr

    approved = _skillweave(tmp_path, "skills", "approve", "risky")
    assert approved.returncode == 0, approved.stderr
    assert _listed(tmp_path)["risky"]["state"] == "enabled"


@pytest.mark.parametrize(
    "args",
    [
        ("skills", "list"),
        ("skills", "show", "x"),
        ("run", "hello", "--engine", "direct"),
        ("sandbox", "run", "x", "scripts/x.py"),
        ("mcp",),
    ],
)
def test_a_skills_dirs_root_that_does_not_exist_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    missing = tmp_path / "typo"
    env = _env(tmp_path, SKILLS__DIRS=json.dumps(["bundled", str(missing)]))
    done = _skillweave(tmp_path, *args, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    said = f"error: SKILLS__DIRS: not a directory: {missing} (create it, or leave it out of"
    assert lines == [f"{said} SKILLS__DIRS)"]


def test_missing_default_roots_are_no_error(tmp_path: Path) -> None:
    env = _env(tmp_path)
    del env["SKILLS__DIRS"]  # the defaults: bundled, ./.agents/skills, ~/.skillweave/skills
    env["HOME"] = str(tmp_path)
    done = _skillweave(tmp_path, "skills", "list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert {entry["source"] for entry in json.loads(done.stdout)} == {"directory"}
