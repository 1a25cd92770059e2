"""The audit log counts truth (issue 41, item 6): one ``execution`` record per script start,
its actor the manager's id, and every request of the same id that started nothing recorded as
an ``execution_repeat`` saying how it was answered (``joined`` this manager's run, the
``stored`` result, or ``in_progress`` at another manager). Real managers on loopback, sharing
one store, with real sandboxes; the log is read back through the library and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.errors import AuditUnavailableError, ExecutionInProgressError
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.audit import AuditLog, AuditRecord
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import REPO, write_skill
from tests.integration.harness import Manager, eventually

pytestmark = pytest.mark.timeout(120)

SLOW = "import sys, time\ntime.sleep(float(sys.argv[1]))\nprint('done')\n"


async def _library(tmp_path: Path) -> tuple[SkillRegistry, LocalArtifactStore]:
    write_skill(tmp_path / "library" / "slow", files={"scripts/slow.py": SLOW})
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "library"]).scan())
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, registry)
    return registry, store


def _settings(manager_id: str) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr("t" * 16), "manager_id": manager_id},
    )


def _request(registry: SkillRegistry, execution_id: str, seconds: float) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=execution_id,
        run_id="run-counted",
        skill="slow",
        version=registry.get("slow").version,
        script="scripts/slow.py",
        args=[str(seconds)],
    )


async def _records(store: LocalArtifactStore) -> list[AuditRecord]:
    return [record async for record in AuditLog(store).read(skill="slow")]


def _kinds(records: list[AuditRecord]) -> list[tuple[str, str | None, object]]:
    return [(r.event, r.actor, r.details.get("answered")) for r in records]


async def test_one_start_one_record_and_each_repeat_as_what_it_was(tmp_path: Path) -> None:
    registry, store = await _library(tmp_path)
    execution_id = "skillweave-run-run-counted/script-1"
    async with Manager.serving(_settings("manager-a"), store=store, registry=registry) as manager:
        first, joined = await asyncio.gather(
            manager.client.execute(_request(registry, execution_id, 1.0)),
            manager.client.execute(_request(registry, execution_id, 1.0)),
        )
        again = await manager.client.execute(_request(registry, execution_id, 1.0))

    assert first.stdout == joined.stdout == again.stdout == "done\n"
    records = await _records(store)
    assert _kinds(records) == [
        ("execution", "manager-a", None),
        ("execution_repeat", "manager-a", "joined"),
        ("execution_repeat", "manager-a", "stored"),
    ]
    assert {r.details["execution_id"] for r in records} == {execution_id}
    assert "args_digest" in records[0].details
    assert (await AuditLog(store).verify()).intact


async def test_a_run_held_by_another_manager_is_in_progress_not_a_start(tmp_path: Path) -> None:
    registry, store = await _library(tmp_path)
    execution_id = "skillweave-run-run-counted/script-2"
    async with (
        Manager.serving(_settings("manager-a"), store=store, registry=registry) as a,
        Manager.serving(_settings("manager-b"), store=store, registry=registry) as b,
    ):
        running = asyncio.ensure_future(a.client.execute(_request(registry, execution_id, 4.0)))

        async def started() -> bool:
            return any(r.event == "execution" for r in await _records(store))

        await eventually(started, what="manager-a's start recorded")
        with pytest.raises(ExecutionInProgressError):
            await b.client.execute(_request(registry, execution_id, 4.0))
        result = await running
        stored = await b.client.execute(_request(registry, execution_id, 4.0))

    assert result.stdout == stored.stdout == "done\n"
    assert _kinds(await _records(store)) == [
        ("execution", "manager-a", None),
        ("execution_repeat", "manager-b", "in_progress"),
        ("execution_repeat", "manager-b", "stored"),
    ]
    # Through the CLI, as an operator reads it: the chain verifies, the kinds filter.
    env = {**os.environ, "STORAGE__BACKEND": "local", "STORAGE__LOCAL_DIR": str(store.root)}
    env.pop("AUDIT__KEY", None)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillweave.cli", "audit", *args],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    verified, shown = await asyncio.gather(
        asyncio.to_thread(cli, "verify"),
        asyncio.to_thread(cli, "show", "--event", "execution_repeat", "--json"),
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("audit log: 3 records from "), verified.stdout
    assert ", intact (SHA-256)\n" in verified.stdout
    assert shown.returncode == 0, shown.stderr
    answered = [json.loads(line)["details"]["answered"] for line in shown.stdout.splitlines()]
    assert answered == ["in_progress", "stored"]


async def test_a_start_the_log_cannot_record_does_not_run_and_leaves_the_id_free(
    tmp_path: Path,
) -> None:
    registry, store = await _library(tmp_path)
    execution_id = "skillweave-run-run-counted/script-3"
    blocker = store.root / "audit" / "chains"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder: no record can be written under it\n")
    async with Manager.serving(_settings("manager-a"), store=store, registry=registry) as manager:
        # Refused before it ran (503 audit_unavailable), naming the store's error code.
        with pytest.raises(AuditUnavailableError, match="the audit log cannot record this run"):
            await manager.client.execute(_request(registry, execution_id, 0.0))
        assert await store.list("executions/") == []  # no result, no claim: the id is free
        blocker.unlink()
        ran = await manager.client.execute(_request(registry, execution_id, 0.0))

    assert ran.stdout == "done\n"
    assert _kinds(await _records(store)) == [("execution", "manager-a", None)]
