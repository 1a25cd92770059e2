"""``skillweave skills versions`` and ``skills rollback`` as a user types them, each in a
process of its own (issue 45, part 4): every stored version listed newest first with its
origin, who brought it, its scan and signature; a rollback made, recorded, refused for an
unknown version (listing them), a no-op said plainly, refused for a directory skill, and
nothing changed while the audit log cannot be written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from skillweave.config import Settings
from skillweave.skills import Admissions, build_package
from skillweave.skills.install import LockedSkill, SkillsLock
from skillweave.skills.stored import SkillOrigin, StoredSkills
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.cli.test_audit_refusals import break_the_log, mend_the_log
from tests.conftest import write_skill

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    write_skill(tmp_path / "library" / "house-style", description="House style. Use it.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLS__", "STORAGE__"))}
    env |= {
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "COLUMNS": "200",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillweave.cli", "skills", *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )

    return run


async def two_versions(tmp_path: Path) -> tuple[str, str]:
    """`notes` installed from a folder by alice, then uploaded by the API."""
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    found = []
    for word, origin, event, actor in (
        ("one", SkillOrigin(source="/src/notes", kind="folder"), "install", "cli:alice@host"),
        ("two", None, "upload", "api@host"),
    ):
        folder = write_skill(tmp_path / word / "notes", description=f"Notes ({word}). Use it.")
        admissions = Admissions(Settings(_env_file=None).skills, store)
        record = await stored.add_package(
            build_package(folder), origin=origin, check=admissions.check
        )
        await admissions.keep("notes")
        log = AuditLog(store, actor=actor)
        await log.record(event, skill="notes", version=record.latest)  # type: ignore[arg-type]
        await log.aclose()
        found.append(record.latest)
    return found[0], found[1]


async def test_versions_lists_every_version_newest_first_with_who_brought_it(
    cli: Cli, tmp_path: Path
) -> None:
    older, newer = await two_versions(tmp_path)
    done = cli("versions", "notes")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"notes · uploaded · current {newer[:12]} · enabled"
    assert lines[1].startswith(f"* {newer[:12]}  stored ")
    assert lines[1].endswith(" UTC by api@host")
    assert [line.split(None, 1) for line in lines[2:5]] == [
        ["origin", "uploaded"],
        ["scan", "no findings (clean)"],
        ["signature", "unsigned"],
    ]
    assert lines[5].startswith(f"  {older[:12]}  stored ")
    assert lines[5].endswith(" by cli:alice@host")
    assert lines[6].split(None, 1) == ["origin", "/src/notes"]

    listed = json.loads(cli("versions", "notes", "--json").stdout)
    assert [v["version"] for v in listed["versions"]] == [newer, older]
    assert [v["current"] for v in listed["versions"]] == [True, False]
    assert listed["versions"][1]["origin"]["source"] == "/src/notes"

    directory = cli("versions", "house-style")
    assert directory.returncode == 0, directory.stderr
    assert "directory" in directory.stdout.splitlines()[0]
    assert "versioned by its folder" in directory.stdout
    missing = cli("versions", "ghost")
    assert (missing.returncode, missing.stderr.strip()) == (1, "error: unknown skill 'ghost'")


async def test_rollback_goes_back_records_it_and_refuses_what_it_cannot_do(
    cli: Cli, tmp_path: Path
) -> None:
    older, newer = await two_versions(tmp_path)
    store = LocalArtifactStore(tmp_path / "store")

    unknown = cli("rollback", "notes", "deadbeef")
    assert unknown.returncode == 1
    [line] = unknown.stderr.strip().splitlines()
    assert f"has no stored version 'deadbeef' (its versions: {newer[:12]}, {older[:12]})" in line
    short = cli("rollback", "notes", "abc")
    assert (short.returncode, "is not a valid version" in short.stderr) == (1, True)
    directory = cli("rollback", "house-style")
    assert directory.returncode == 1
    assert "versioned by its folder" in directory.stderr

    break_the_log(tmp_path / "store")
    refused = cli("rollback", "notes")
    assert refused.returncode == 1
    assert "so nothing was rolled back;" in refused.stderr
    record = await StoredSkills(store).get("notes")
    assert record is not None
    assert record.latest == newer
    mend_the_log(tmp_path / "store")

    locked = LockedSkill(name="notes", version=newer, source="/src/notes", kind="folder")
    SkillsLock(skills={"notes": locked}).save(tmp_path / "skills.lock")
    done = cli("rollback", "notes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"rolled back notes from {newer[:12]} to {older[:12]}"
    assert done.stderr.startswith(f"note: skills.lock still locks notes at {newer[:12]}")
    record = await StoredSkills(store).get("notes")
    assert record is not None
    assert record.latest == older
    [entry] = [r async for r in AuditLog(store).read(event="rollback")]
    assert entry.actor is not None
    assert entry.actor.startswith("cli:")
    assert (entry.details["from"], entry.details["to"]) == (newer, older)

    again = cli("rollback", "notes", older[:8])
    assert again.returncode == 0, again.stderr
    assert "nothing was rolled back" in again.stdout
    back = json.loads(cli("rollback", "notes", newer[:10], "--json").stdout)
    assert back == {
        "name": "notes",
        "from": older,
        "to": newer,
        "changed": True,
        "enabled": True,
        "held": False,
    }


async def test_a_version_whose_scan_needs_approval_is_rolled_back_held(
    cli: Cli, tmp_path: Path
) -> None:
    held = Path(__file__).parents[1] / "data" / "scan" / "malicious" / "hosts-manager"
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    folder = Path(shutil.copytree(held, tmp_path / "hosts-manager"))
    lenient = Admissions(
        Settings(_env_file=None, skills={"scan": {"policy": {"high": "warn"}}}).skills, store
    )
    risky = await stored.add_package(build_package(folder), check=lenient.check)
    await lenient.keep("hosts-manager")
    shutil.rmtree(folder / "scripts")
    await stored.add_package(build_package(folder), check=lenient.check)
    await lenient.keep("hosts-manager")

    done = cli("rollback", "hosts-manager", risky.latest[:8])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"to {risky.latest[:12]}")
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("hosts-manager is off until approved")
    assert "`skillweave skills approve hosts-manager`" in line
    shown = cli("versions", "hosts-manager")
    assert "held until approved" in shown.stdout.splitlines()[0]
    assert "(approve)" in shown.stdout
    assert cli("approve", "hosts-manager").returncode == 0
    record = await stored.get("hosts-manager")
    assert record is not None
    assert (record.latest, record.enabled) == (risky.latest, True)
