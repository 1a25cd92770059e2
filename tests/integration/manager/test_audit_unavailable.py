"""A run never fails with a 500 over its audit record (issue 42, item 2). The decision: an
execution whose ``execution`` audit record cannot be stored is refused before anything runs,
503 ``audit_unavailable`` with a Retry-After and one line naming the store's error code; its id
stays free, and once the store is back the same request runs once and is recorded once.

Real managers on loopback over the real local store, whose writes under ``audit/`` fail while
the test says so (:class:`AuditDown`), with real sandboxes. Scripts run without isolation so
that each run appends a line to a marker file outside its sandbox: the file says whether and
how often a script ran. Every door a run takes is tried: ``POST /sandbox/execute`` over HTTP,
the sandbox client (a run's script step), the run's wait (``skillweave.sandbox.queue``), and
the MCP front door (its activations are recorded too)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr

from mcp_manager.mcp_server import UNAVAILABLE
from skillweave.config import Settings
from skillweave.engines.retries import classify
from skillweave.errors import AuditUnavailableError, StorageError
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.packages import publish_library
from skillweave.sandbox.problems import PROBLEM_JSON
from skillweave.sandbox.queue import queued
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.audit import AuditEvent, AuditLog, AuditRecord
from skillweave.storage.local import LocalArtifactStore
from skillweave.waiting import WAITING, Waiting
from tests.conftest import write_skill
from tests.integration.harness import Manager, eventually

pytestmark = pytest.mark.timeout(120)

TOKEN = "audit-unavailable-token"
_JSON = {"Content-Type": "application/json"}
DISK_FULL = "No space left on device"
CAUSE = "(the artifact store answered ENOSPC)"
"""What a refusal names of the store's error: its code, never its message (which names keys)."""
MARK = textwrap.dedent(
    """
    import pathlib, sys
    with open(sys.argv[1], 'a') as marker:
        marker.write('ran\\n')
    pathlib.Path('outputs').mkdir(exist_ok=True)
    pathlib.Path('outputs/mark.txt').write_text('ran')
    print('ran')
    """
)


class AuditDown(LocalArtifactStore):
    """The real local store, whose writes under ``audit/`` fail while `down` is set (a full
    disk under the log, a bucket policy refusing its prefix); every other key works."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.down = False
        self.refused = 0

    def _refuse(self, key: str) -> None:
        if self.down and key.startswith(keys.AUDIT_PREFIX):
            self.refused += 1
            raise StorageError(f"cannot write {key!r}: {DISK_FULL}", key=key, code="ENOSPC")

    async def put_bytes(self, key: str, data: bytes, **options: Any) -> Any:
        self._refuse(key)
        return await super().put_bytes(key, data, **options)

    async def put_if_absent(self, key: str, data: bytes, **options: Any) -> Any:
        self._refuse(key)
        return await super().put_if_absent(key, data, **options)

    async def put_file(self, key: str, path: str, **options: Any) -> Any:
        self._refuse(key)
        return await super().put_file(key, path, **options)


@pytest.fixture
def marker() -> Iterator[Path]:
    """Where each run appends a line: in a folder of its own that the scripts' user (not the
    test's) may write to, outside every sandbox."""
    folder = Path(tempfile.mkdtemp(prefix="skillweave-witness-"))
    folder.chmod(0o777)
    try:
        yield folder / "marker"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _library(tmp_path: Path) -> Path:
    library = tmp_path / "library"
    write_skill(
        library / "audited",
        description="Marks each run in a file outside its sandbox. Use when testing audits.",
        files={"scripts/mark.py": MARK},
    )
    return library


def _settings(tmp_path: Path, library: Path, *, queue_seconds: float = 600.0) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(TOKEN),
            "manager_id": "manager-audited",
            "isolation": "none",  # the marker file outside the sandbox is the witness
            "pool_target": 1,
            "pool_max": 2,
            "queue_seconds": queue_seconds,
        },
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
        storage={"local_dir": str(tmp_path / "store")},
    )


@contextlib.asynccontextmanager
async def _manager(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[Manager, AuditDown]]:
    library = _library(tmp_path)
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    store = AuditDown(tmp_path / "store")
    await publish_library(store, registry)
    settings = _settings(tmp_path, library, **options)
    async with Manager.serving(settings, store=store, registry=registry) as manager:
        yield manager, store


def _request(manager: Manager, marker: Path, execution_id: str) -> ExecuteRequest:
    return manager.request(
        "scripts/mark.py",
        skill="audited",
        execution_id=execution_id,
        run_id="run-audited",
        args=[str(marker)],
    )


def _runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


async def _records(store: LocalArtifactStore, event: AuditEvent) -> list[AuditRecord]:
    return [r async for r in AuditLog(store).read(skill="audited", event=event)]


async def test_a_start_the_log_cannot_store_is_refused_503_and_runs_once_when_it_can(
    tmp_path: Path, marker: Path
) -> None:
    execution_id = "skillweave-run-run-audited/script-1"
    async with _manager(tmp_path) as (manager, store):
        request = _request(manager, marker, execution_id)
        store.down = True
        answer = await manager.http.post(
            "/sandbox/execute", content=request.model_dump_json(), headers=_JSON
        )
        # Refused, typed, before anything ran: not a 500.
        assert answer.status_code == 503, answer.text
        assert answer.headers["content-type"] == PROBLEM_JSON
        assert answer.headers["retry-after"] == "2"
        problem = answer.json()
        assert problem["type"] == "urn:skillweave:problem:audit_unavailable"
        assert problem["error"] == "audit_unavailable"
        assert problem["retry_after"] == 2
        detail = problem["detail"]
        assert "\n" not in detail
        assert detail == (
            f"the audit log cannot record this run {CAUSE}, so the script was not started;"
            " try again in 2 s, or once the store takes writes again"
        )
        assert store.refused >= 1
        assert _runs(marker) == 0  # the script did not run
        assert await store.list("executions/") == []  # no claim, no result: the id is free
        assert await manager.execution(execution_id) is None
        assert await store.list(keys.run_prefix("run-audited")) == []  # no output kept

        # A run's script step: the client raises the wait's error, never a result.
        with pytest.raises(AuditUnavailableError) as caught:
            await manager.client.execute(request)
        assert str(caught.value).startswith(f"the MCP manager at {manager.url}: the audit log")
        assert CAUSE in str(caught.value)
        assert caught.value.retry_after == 2
        assert classify(caught.value).again  # past the wait: the engine's retries
        assert _runs(marker) == 0

        store.down = False
        ran = await manager.client.execute(request)
        again = await manager.client.execute(request)  # the stored result, not a second run

    assert (ran.status, ran.stdout) == ("succeeded", "ran\n"), ran.stderr
    assert [output.path for output in ran.outputs] == ["mark.txt"]
    assert again == ran
    assert _runs(marker) == 1
    [start] = await _records(store, "execution")
    assert (start.actor, start.details["execution_id"]) == ("manager-audited", execution_id)
    [repeat] = await _records(store, "execution_repeat")
    assert repeat.details["answered"] == "stored"
    report = await AuditLog(store).verify()
    assert report.intact, report.problems
    assert report.unanchored == 0  # the manager's shutdown anchored its last records


async def test_a_run_step_waits_for_the_store_and_runs_once_when_it_is_back(
    tmp_path: Path, marker: Path
) -> None:
    said: list[Waiting | None] = []
    async with _manager(tmp_path) as (manager, store):
        request = _request(manager, marker, "skillweave-run-run-audited/script-2")
        store.down = True
        reporting = WAITING.set(said.append)
        try:  # the task copies the context: it reports to `said`
            step = asyncio.ensure_future(
                queued(
                    lambda: manager.client.execute(request),
                    queue_seconds=60,
                    call="script audited/scripts/mark.py",
                )
            )
        finally:
            WAITING.reset(reporting)

        waiting = await eventually(lambda: said and said[0], what="the step told its wait")
        assert isinstance(waiting, Waiting)
        assert (waiting.on, waiting.call) == ("store", "script audited/scripts/mark.py")
        assert waiting.detail.startswith(f"the MCP manager at {manager.url}: the audit log")
        line = waiting.line()
        assert "waiting for the artifact store since" in line
        assert CAUSE in line
        await eventually(lambda: store.refused >= 8, what="the step asked again")  # 2 tries
        assert not step.done()
        assert _runs(marker) == 0

        store.down = False
        result: ExecutionResult = await asyncio.wait_for(step, 30)

    assert (result.status, result.stdout) == ("succeeded", "ran\n")
    assert _runs(marker) == 1
    assert said[-1] is None  # the wait is over
    assert [s for s in said if s is not None] == [waiting]  # one wait, one cause
    assert len(await _records(store, "execution")) == 1
    assert (await AuditLog(store).verify()).intact


@contextlib.asynccontextmanager
async def _mcp(manager: Manager) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
        Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
    ):
        yield client


def _refusal(caught: pytest.ExceptionInfo[MCPError], what: str) -> None:
    """The front door's typed refusal: its code, the problem as data, one line."""
    error = caught.value
    assert error.code == UNAVAILABLE
    assert error.data["type"] == "urn:skillweave:problem:audit_unavailable"
    assert error.data["error"] == "audit_unavailable"
    assert error.data["retry_after"] == 2
    assert error.message == error.data["detail"]
    assert "\n" not in error.message
    assert error.message.startswith("the audit log cannot record this ")
    assert CAUSE in error.message
    assert what in error.message


async def test_the_mcp_front_door_refuses_what_it_cannot_record_and_claims_nothing(
    tmp_path: Path, marker: Path
) -> None:
    async with _manager(tmp_path, queue_seconds=1.0) as (manager, store), _mcp(manager) as mcp:
        store.down = True
        with pytest.raises(MCPError) as refused:
            await mcp.call_tool("activate_skill", {"name": "audited"})
        _refusal(refused, "'audited' was not activated")
        inactive = await mcp.call_tool("read_skill_resource", {"skill": "audited", "path": "x"})
        assert inactive.is_error  # not active: the refused activation left no trace

        store.down = False
        activated = await mcp.call_tool("activate_skill", {"name": "audited"})
        assert not activated.is_error
        assert "already active" not in str(activated.content)

        store.down = True  # waited for up to SANDBOX__QUEUE_SECONDS (1 s), then refused
        run = {"skill": "audited", "script": "scripts/mark.py", "args": [str(marker)]}
        with pytest.raises(MCPError) as unrun:
            await mcp.call_tool("run_skill_script", run)
        _refusal(unrun, "the script was not started")
        assert _runs(marker) == 0

        store.down = False
        ran = await mcp.call_tool("run_skill_script", run)
        assert not ran.is_error, ran.content

    assert _runs(marker) == 1
    assert len(await _records(store, "activation")) == 1
    assert len(await _records(store, "execution")) == 1
    report = await AuditLog(store).verify()
    assert report.intact, report.problems
    assert report.unanchored == 0  # the front door's log was closed too
