"""``skills update --gate`` and ``skills rollback --gate`` as a user types them, each in a process
of its own, on the direct engine with the scripted model (issue 46, part 6): the new version's
evals run against the current one; a version that keeps its pass rate becomes current, one that
loses it is refused (exit 1, one line with both pass rates and the report's place) and stays
stored, not current; each decision is in the audit log.

The playbook activates the skill and answers with what it read, so a version's answer is its
own instructions: ``hello`` passes the eval's check, ``goodbye`` fails it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.skills.stored import StoredSkills
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

EVALS = json.dumps(
    {
        "evals": [
            {
                "id": 1,
                "prompt": "Greet me",
                "checks": [{"type": "answer_contains", "text": "hello"}],
            }
        ]
    }
)
PLAYBOOK = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
  - say: "{{last_result}}"
"""


def _greeter(folder: Path, word: str) -> Path:
    return write_skill(
        folder,
        name="greeter",
        description="Greets people. Use when someone asks to be greeted.",
        body=f"# Greeter\n\nAlways answer: {word}.\n",
        files={"evals/evals.json": EVALS},
    )


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "library").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "WORKFLOW__EXECUTION_ENGINE": "direct",
        "COLUMNS": "250",
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "skills", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=400,
    )


def _current(tmp_path: Path) -> str:
    async def read() -> str:
        record = await StoredSkills(LocalArtifactStore(tmp_path / "store")).get("greeter")
        assert record is not None
        return record.latest

    return asyncio.run(read())


def _gates(tmp_path: Path) -> list[dict[str, object]]:
    async def read() -> list[dict[str, object]]:
        log = AuditLog(LocalArtifactStore(tmp_path / "store"))
        return [dict(record.details) async for record in log.read(event="eval_gate")]

    return asyncio.run(read())


def test_update_gate_refuses_a_version_that_loses_pass_rate_then_lets_one_through(
    tmp_path: Path,
) -> None:
    (tmp_path / "playbook.yaml").write_text(PLAYBOOK)
    model = f"scripted:{tmp_path / 'playbook.yaml'}"
    source = _greeter(tmp_path / "src" / "greeter", "hello")
    installed = _cli(tmp_path, "install", str(source))
    assert installed.returncode == 0, installed.stderr
    first = _current(tmp_path)
    _greeter(source, "goodbye")  # the source moves on, and loses what its evals check

    refused = _cli(tmp_path, "update", "greeter", "--gate", "--model", model)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    line = " ".join(refused.stderr.split())
    assert "was not made current: its evals pass 0% with " in line, line
    assert f"against 100% with the current {first[:12]}" in line, line
    assert "report: evals/greeter/eval-" in line, line
    assert "nothing was updated" not in line  # a refusal, not a failing audit log
    assert _current(tmp_path) == first
    [gate] = _gates(tmp_path)
    assert gate["decision"] == "refused"
    candidate = str(gate["to"])
    store = LocalArtifactStore(tmp_path / "store")
    assert asyncio.run(store.stat(keys.skill_package_key("greeter", candidate))) is not None

    tolerated = _cli(
        tmp_path, "update", "greeter", "--gate", "--model", model, "--gate-tolerance", "1"
    )

    assert tolerated.returncode == 0, tolerated.stdout + tolerated.stderr
    assert _current(tmp_path) == candidate
    assert [gate["decision"] for gate in _gates(tmp_path)] == ["refused", "passed"]


def test_rollback_gate_lets_a_better_version_back_and_refuses_a_worse_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "playbook.yaml").write_text(PLAYBOOK)
    model = f"scripted:{tmp_path / 'playbook.yaml'}"
    for word in ("hello", "goodbye"):
        done = _cli(tmp_path, "install", str(_greeter(tmp_path / word / "greeter", word)))
        assert done.returncode == 0, done.stderr
    worse = _current(tmp_path)

    back = _cli(tmp_path, "rollback", "greeter", "--gate", "--model", model)

    assert back.returncode == 0, back.stdout + back.stderr
    assert "rolled back greeter from" in back.stdout
    assert "gate: greeter" in back.stderr
    better = _current(tmp_path)
    assert better != worse

    refused = _cli(tmp_path, "rollback", "greeter", worse[:12], "--gate", "--model", model)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    line = " ".join(refused.stderr.split())
    assert f"greeter {worse[:12]} was not made current: its evals pass 0%" in line, line
    assert f"against 100% with the current {better[:12]}" in line, line
    assert _current(tmp_path) == better
    assert [gate["decision"] for gate in _gates(tmp_path)] == ["passed", "refused"]


def test_gate_options_need_the_gate(tmp_path: Path) -> None:
    done = _cli(tmp_path, "rollback", "greeter", "--gate-tolerance", "0.1")
    assert done.returncode == 2
    assert "go with --gate" in done.stderr
