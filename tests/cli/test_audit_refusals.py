"""``skillweave skills install``, ``remove`` and ``approve`` record each change in the audit log
before making it: while the log cannot be written each exits 1 with one line naming the cause,
and changes nothing, neither the store nor the lock (issue 42, item 2). Run as a user types
them, each in a process of its own, on a local store whose ``audit/`` is a file (so no record
can be written under it, whoever runs the test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.skills.failing_audit import everything_but_the_log

HELD = Path(__file__).parents[1] / "data" / "scan" / "malicious" / "hosts-manager"
CAUSE = "the artifact store answered KeyConflict"

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    (tmp_path / "no-library").mkdir()  # an empty library: the store's skills are all
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLS__", "STORAGE__"))}
    env |= {
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-library")]),
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


def break_the_log(store: Path) -> None:
    """Make every write under ``audit/`` fail: the folder becomes a file."""
    store.mkdir(parents=True, exist_ok=True)
    if (store / "audit").is_dir():
        (store / "audit").rename(store / "audit.kept")
    (store / "audit").write_text("not a folder\n")


def mend_the_log(store: Path) -> None:
    (store / "audit").unlink()
    if (store / "audit.kept").is_dir():
        (store / "audit.kept").rename(store / "audit")


def refused(done: subprocess.CompletedProcess[str], change: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    # The one wording of every door (skillweave.sandbox.audit_refusal), the store's error by its
    # code.
    assert line.startswith("error: the audit log cannot record this change ("), line
    assert CAUSE in line
    assert f"so nothing was {change};" in line, line
    assert line.endswith("or once the store takes writes again"), line


async def test_install_remove_and_approve_change_nothing_while_the_log_cannot_be_written(
    cli: Cli, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    source = tmp_path / "source"
    shutil.copytree(HELD, source / "hosts-manager")  # its scan holds it until approved
    write_skill(source / "plain-tool", description="A tool. Use it to test installs.")

    break_the_log(store)
    refused(cli("install", str(source)), "installed")
    assert await everything_but_the_log(LocalArtifactStore(store)) == {}
    assert not (tmp_path / "skills.lock").exists()

    mend_the_log(store)
    installed = cli("install", str(source))
    assert installed.returncode == 0, installed.stderr
    lock = (tmp_path / "skills.lock").read_text()
    assert {"hosts-manager", "plain-tool"} <= set(json.loads(lock)["skills"])

    break_the_log(store)
    before = await everything_but_the_log(LocalArtifactStore(store))
    refused(cli("remove", "plain-tool", "hosts-manager"), "removed")
    refused(cli("approve", "hosts-manager", "--note", "read it"), "approved")
    assert await everything_but_the_log(LocalArtifactStore(store)) == before
    assert (tmp_path / "skills.lock").read_text() == lock

    mend_the_log(store)
    assert cli("approve", "hosts-manager").returncode == 0
    removed = cli("remove", "plain-tool")
    assert removed.returncode == 0, removed.stderr
    assert set(json.loads((tmp_path / "skills.lock").read_text())["skills"]) == {"hosts-manager"}
