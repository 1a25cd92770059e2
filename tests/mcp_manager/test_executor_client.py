"""ExecutorClient: one run sent once, outputs checked and stored, and each failure ending the
way executions rely on (a terminal result, or a lost sandbox)."""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from mcp_manager.backends import Sandbox
from mcp_manager.executor_client import ExecutorClient, Handover, SandboxRun
from skillweave.errors import SandboxLostError
from skillweave.sandbox.leftovers import FETCH_FILE_PREFIX, sweep_leftovers
from skillweave.sandbox.models import ExecuteRequest, ExecutorRequest
from skillweave.storage.local import LocalArtifactStore
from skillweave.telemetry.masker import SecretMasker

SECRET = "tok-8f2d9c1a-secret"
SANDBOX = Sandbox(id="sb-1", url="http://sandbox", token="sandbox-token")
REQUEST = ExecuteRequest(
    execution_id="wf/script-1", run_id="run-1", skill="s", version="a" * 64, script="x.py"
)
RUN = SandboxRun(
    request=REQUEST,
    body=ExecutorRequest(script="x.py"),
    package=b"PK",
    inputs=[("in.txt", b"abc")],
)
OUTPUT = b"report"
LOG = f"started\n{SECRET}\n".encode()


def _answer(**fields: object) -> dict[str, object]:
    answer: dict[str, object] = {
        "exit_code": 0,
        "stdout": "ok",
        "stderr": "",
        "duration_ms": 5,
        "isolation": "bubblewrap",
    }
    return {**answer, **fields}


def _file(name: str, data: bytes) -> dict[str, object]:
    return {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


Handler = Callable[[httpx.Request], httpx.Response]


def _client(store: LocalArtifactStore, handler: Handler) -> ExecutorClient:
    return ExecutorClient(
        store=store, masker=SecretMasker([SECRET]), transport=httpx.MockTransport(handler)
    )


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


async def test_a_run_is_sent_with_its_token_and_its_outputs_are_stored(
    store: LocalArtifactStore,
) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST":
            return httpx.Response(
                200,
                json=_answer(
                    outputs=[_file("outputs/report.txt", OUTPUT)],
                    full_stdout=_file("stdout", LOG),
                ),
            )
        return httpx.Response(200, content=OUTPUT if request.url.path.endswith("txt") else LOG)

    handover = Handover()
    async with contextlib.aclosing(_client(store, handler)) as client:
        result = await client.run(SANDBOX, RUN, handover=handover)
    assert handover.sent
    assert result.status == "succeeded"
    assert all(r.headers["Authorization"] == "Bearer sandbox-token" for r in seen)
    assert b'name="package"' in seen[0].content
    assert b'name="inputs"' in seen[0].content
    [output] = result.outputs
    assert output.path == "report.txt"
    assert await store.get_bytes(output.ref) == OUTPUT
    assert result.stdout_ref is not None
    log = await store.get_bytes(result.stdout_ref)
    assert SECRET.encode() not in log  # masked before it was stored


@pytest.mark.parametrize(
    ("status", "error"), [(400, "rejected: bad args"), (409, "executor: bad args")]
)
async def test_an_executor_refusal_is_a_terminal_error_result(
    store: LocalArtifactStore, status: int, error: str
) -> None:
    def handler(_: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"detail": "bad args"})

    handover = Handover()
    async with contextlib.aclosing(_client(store, handler)) as client:
        result = await client.run(SANDBOX, RUN, handover=handover)
    assert handover.sent
    assert (result.status, result.error) == ("error", error)


async def test_a_broken_connection_is_a_lost_sandbox(store: LocalArtifactStore) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("reset", request=request)

    async with contextlib.aclosing(_client(store, handler)) as client:
        with pytest.raises(SandboxLostError, match="ConnectError"):
            await client.run(SANDBOX, RUN, handover=Handover())


async def test_an_output_that_arrives_damaged_is_not_kept(store: LocalArtifactStore) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json=_answer(outputs=[_file("outputs/a.txt", OUTPUT)]))
        return httpx.Response(200, content=b"tampered")

    async with contextlib.aclosing(_client(store, handler)) as client:
        result = await client.run(SANDBOX, RUN, handover=Handover())
    assert result.status == "error"
    assert result.error is not None
    assert "arrived damaged" in result.error
    assert await store.list("runs/") == []


@pytest.mark.parametrize("failure", ["refused", "broken", "damaged"])
async def test_a_failed_fetch_leaves_no_temporary_file(
    store: LocalArtifactStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json=_answer(outputs=[_file("outputs/a.txt", OUTPUT)]))
        if failure == "refused":
            return httpx.Response(404, json={"detail": "gone"})
        if failure == "broken":
            raise httpx.ReadError("reset", request=request)
        return httpx.Response(200, content=b"tampered")

    async with contextlib.aclosing(_client(store, handler)) as client:
        try:
            result = await client.run(SANDBOX, RUN, handover=Handover())
        except SandboxLostError:
            pass  # a broken transfer may count as a lost sandbox: either way, nothing is left
        else:
            assert result.status == "error"
    assert list(scratch.iterdir()) == []
    assert await store.list("runs/") == []


async def test_a_fetch_in_flight_is_locked_against_a_sweep(
    store: LocalArtifactStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool starting while this manager fetches (several on one host) must not take the
    file: its lock is held until it is removed (``skillweave.sandbox.leftovers``)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    swept: list[list[Path]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json=_answer(outputs=[_file("outputs/a.txt", OUTPUT)]))
        assert [p.name[: len(FETCH_FILE_PREFIX)] for p in scratch.iterdir()] == [FETCH_FILE_PREFIX]
        swept.append(sweep_leftovers(scratch, (FETCH_FILE_PREFIX,), min_age=0))
        return httpx.Response(200, content=OUTPUT)

    async with contextlib.aclosing(_client(store, handler)) as client:
        result = await client.run(SANDBOX, RUN, handover=Handover())
    assert result.status == "succeeded", result
    assert swept == [[]]
    assert list(scratch.iterdir()) == []
