"""A held install's evals, where its approver reads them: ``skills versions`` and ``skills
approve`` (each as a user types it, in a process of its own), the API's skill detail and the
enabling that approves it (over real HTTP on loopback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillweave.skills import build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.api.conftest import Api, _serve, _settings
from tests.conftest import write_skill

EVALS = json.dumps(
    {
        "evals": [
            {"id": 1, "prompt": "Take notes of this meeting", "expectations": ["It has notes"]},
            {"id": 2, "prompt": "Note the actions", "expectations": ["It lists actions"]},
        ]
    }
)
LINE = (
    "evals: 2 (2 checks and expectations), never run (skillweave skills eval notes, once approved)"
)


def _notes(root: Path, *, evals: bool = True) -> bytes:
    files = {"evals/evals.json": EVALS} if evals else {}
    folder = write_skill(
        root / "notes", description="Takes meeting notes. Use for meetings.", files=files
    )
    return build_package(folder)


async def _held(store: LocalArtifactStore, package: bytes) -> str:
    async def hold(name: str, version: str, data: bytes) -> bool:
        return True

    record = await StoredSkills(store).add_package(package, check=hold)
    assert record.held
    return record.latest


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLS__", "STORAGE__"))}
    env |= {
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
        "COLUMNS": "250",
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "skills", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


async def test_versions_and_approve_show_a_held_versions_evals(tmp_path: Path) -> None:
    write_skill(tmp_path / "library" / "house-style", description="House style. Use it.")
    await _held(LocalArtifactStore(tmp_path / "store"), _notes(tmp_path / "src"))

    listed = _cli(tmp_path, "versions", "notes")
    assert listed.returncode == 0, listed.stderr
    assert "held until approved" in listed.stdout
    assert f"\n{LINE}; triggers: recall " in listed.stdout
    as_json = json.loads(_cli(tmp_path, "versions", "notes", "--json").stdout)
    assert as_json["evals"].startswith(LINE)

    approved = _cli(tmp_path, "approve", "notes")
    assert approved.returncode == 0, approved.stderr
    assert LINE in approved.stdout
    assert "approved notes version" in approved.stdout

    listed = _cli(tmp_path, "versions", "notes")  # no longer held: not repeated
    assert "evals:" not in listed.stdout


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    async for served in _serve(_settings(tmp_path), LocalArtifactStore(tmp_path / "store")):
        yield served


async def test_the_api_shows_a_held_versions_evals_and_the_approval_answers_them(
    api: Api, tmp_path: Path
) -> None:
    await _held(api.store, _notes(tmp_path / "src"))  # type: ignore[arg-type]

    detail = (await api.client.get("/v1/skills/notes")).json()
    assert detail["enabled"] is False, detail
    assert detail["evals"].startswith(LINE)
    approved = await api.client.patch("/v1/skills/notes", json={"enabled": True})
    assert approved.status_code == 200, approved.text
    assert approved.json()["evals"].startswith(LINE)
    assert (await api.client.get("/v1/skills/notes")).json()["evals"] is None  # not held


async def test_a_held_version_without_evals_has_none(api: Api, tmp_path: Path) -> None:
    await _held(api.store, _notes(tmp_path / "src", evals=False))  # type: ignore[arg-type]
    assert (await api.client.get("/v1/skills/notes")).json()["evals"] is None
