"""``skillweave audit show`` and ``verify`` with the execution kinds (issue 41, item 6): a start
(``execution``) and a request answered without one (``execution_repeat``, with ``answered``)
are told apart, filtered by kind and verified in their writer's chain; a log of starts only
verifies as well."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.config import get_settings
from skillweave.storage import LocalArtifactStore
from skillweave.storage.audit import AUDIT_EVENTS, AuditLog

runner = CliRunner()
START = datetime(2030, 1, 1, tzinfo=UTC)


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    env = {"STORAGE__BACKEND": "local", "STORAGE__LOCAL_DIR": str(root), "AUDIT__KEY": None}
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, ["audit", *args], env=env)
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stdout, result.stderr


def write(root: Path, *, repeats: bool) -> None:
    async def run() -> None:
        ticks = iter(range(100))
        log = AuditLog(
            LocalArtifactStore(root, fsync=False),
            clock=lambda: START + timedelta(minutes=next(ticks)),
            checkpoint_seconds=3600,  # anchored on its first block and when closed, no more
        )
        common = {"skill": "alpha", "run": "run-1", "actor": "manager-a", "script": "go.py"}
        await log.record("execution", args=["x"], execution_id="run-1/script-1", **common)
        if repeats:
            for answered in ("joined", "in_progress", "stored"):
                await log.record(
                    "execution_repeat", execution_id="run-1/script-1", answered=answered, **common
                )
        await log.aclose()

    asyncio.run(run())


def test_the_repeat_kind_is_listed_filtered_and_verified(tmp_path: Path) -> None:
    assert "execution_repeat" in AUDIT_EVENTS
    write(tmp_path, repeats=True)
    code, stdout, _ = cli(tmp_path, "verify")
    assert (code, stdout.splitlines()[0]) == (
        0,
        "audit log: 4 records from 1 writer, 2 checkpoints, intact (SHA-256)",
    )
    code, stdout, _ = cli(tmp_path, "show", "--event", "execution", "--json")
    assert code == 0
    [start] = [json.loads(line) for line in stdout.splitlines()]
    assert (start["actor"], start["details"]["execution_id"]) == ("manager-a", "run-1/script-1")
    code, stdout, _ = cli(tmp_path, "show", "--event", "execution_repeat", "--json")
    answered = [json.loads(line)["details"]["answered"] for line in stdout.splitlines()]
    assert answered == ["joined", "in_progress", "stored"]
    code, stdout, _ = cli(tmp_path, "show")
    assert code == 0
    assert stdout.count("execution_repeat") == 3
    assert "answered=in_progress" in stdout


def test_a_log_of_starts_only_still_verifies(tmp_path: Path) -> None:
    write(tmp_path, repeats=False)
    code, stdout, _ = cli(tmp_path, "verify")
    assert (code, stdout.splitlines()[0]) == (
        0,
        "audit log: 1 record from 1 writer, 1 checkpoint, intact (SHA-256)",
    )
    code, _, stderr = cli(tmp_path, "show", "--event", "bogus")
    assert code == 2
    assert "execution_repeat" in stderr
