"""``skillweave skills rollback`` and ``skillweave run`` with a pinned agent spec as a user
types them (issue 45, part 4): subprocesses on a store under `tmp_path`, the direct engine
starting its own manager with a local warm pool. After a rollback, a spec that pins the newer
version (by a prefix) runs it, one that names the skill runs the older, and a pin the store
cannot satisfy refuses the run in one line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.skills import build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: edition-probe}}]
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: edition-probe, script: scripts/version.py}}
  - say: "{{last_result}}"
    expect: {tool_results: [{not_error: true}]}
"""


def skillweave(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    (tmp_path / "library").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **base,
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        },
        timeout=240,
        check=False,
    )


def two_editions(tmp_path: Path) -> tuple[str, str]:
    async def store() -> tuple[str, str]:
        stored = StoredSkills(LocalArtifactStore(tmp_path / "store"))
        found = []
        for edition in ("one", "two"):
            folder = write_skill(
                tmp_path / edition / "edition-probe",
                description=f"Says its edition ({edition}). Use when asked for the edition.",
                files={"scripts/version.py": f"print('EDITION-{edition.upper()}')\n"},
            )
            found.append((await stored.add_package(build_package(folder))).latest)
        return found[0], found[1]

    return asyncio.run(store())


def run_with(tmp_path: Path, skills: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "model.yaml").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(
        f"name: probe\nskills: [{skills}]\nmodel: scripted:model.yaml\n", encoding="utf-8"
    )
    return skillweave(
        tmp_path, "run", "Which edition?", "--engine", "direct", "--agent", "agent.yaml"
    )


def test_a_rolled_back_skill_runs_older_unless_the_spec_pins_the_newer(tmp_path: Path) -> None:
    older, newer = two_editions(tmp_path)
    rolled = skillweave(tmp_path, "skills", "rollback", "edition-probe")
    assert rolled.returncode == 0, rolled.stderr
    assert f"to {older[:12]}" in rolled.stdout

    pinned = run_with(tmp_path, f"edition-probe@{newer[:10]}")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    assert "EDITION-TWO" in pinned.stdout

    unpinned = run_with(tmp_path, "edition-probe")
    assert unpinned.returncode == 0, unpinned.stdout + unpinned.stderr
    assert "EDITION-ONE" in unpinned.stdout

    missing = run_with(tmp_path, "edition-probe@deadbeef")
    assert missing.returncode == 1, missing.stdout + missing.stderr
    [line] = [line for line in missing.stderr.splitlines() if line.startswith("error:")]
    assert "has no stored version 'deadbeef'" in line
    assert "agent.yaml" in line
