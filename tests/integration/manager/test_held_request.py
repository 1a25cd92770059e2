"""A run's request is sent while its claim is written, all but its end: against a real executor,
the script starts only once the end is sent, and a request dropped before it runs nothing.

The manager sends the request (package, inputs, the run's description) to the sandbox while it
writes the execution's claim, holding back the last bytes of the body until the claim is
durable (`ExecutorClient.run`'s ``go``). The executor fills the workspace meanwhile and starts
nothing before the body has ended, so a run can never start unclaimed; a request dropped before
its end leaves nothing of itself behind.
"""

from __future__ import annotations

import asyncio
import io
import time
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mcp_manager import LocalBackend, Sandbox
from mcp_manager.executor_client import ExecutorClient, Handover, SandboxRun
from skillweave.sandbox.models import ExecuteRequest, ExecutorRequest
from skillweave.storage.local import LocalArtifactStore
from skillweave.telemetry.masker import SecretMasker
from tests.integration.harness import eventually

pytestmark = pytest.mark.timeout(120)

WHEN = "import time\nprint(time.monotonic_ns())\n"
FILLED = "import os\nprint(os.stat('inputs/in.txt').st_mtime_ns)\n"
LISTS = "import os\nprint(sorted(os.listdir('inputs')))\n"


def _package() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("probe/SKILL.md", "---\nname: probe\ndescription: Held runs.\n---\n")
        archive.writestr("probe/scripts/when.py", WHEN)
        archive.writestr("probe/scripts/filled.py", FILLED)
        archive.writestr("probe/scripts/lists.py", LISTS)
    return buffer.getvalue()


def _run(n: int, script: str = "scripts/when.py", input_name: str = "in.txt") -> SandboxRun:
    request = ExecuteRequest(
        execution_id=f"held/{n}", run_id="run-1", skill="probe", version="a" * 64,
        script=script,
    )  # fmt: skip
    return SandboxRun(
        request=request,
        body=ExecutorRequest(script=script),
        package=_package(),
        inputs=[(input_name, b"x" * 4096)],
    )


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    backend = LocalBackend(start_timeout=30.0)
    made = await backend.create()
    try:
        yield made
    finally:
        await backend.destroy(made)
        await backend.close()


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[ExecutorClient]:
    executor = ExecutorClient(store=LocalArtifactStore(tmp_path / "store"), masker=SecretMasker([]))
    try:
        yield executor
    finally:
        await executor.aclose()


async def _status(sandbox: Sandbox) -> str:
    async with httpx.AsyncClient() as http:
        status: str = (await http.get(f"{sandbox.url}/healthz")).json()["status"]
    return status


async def _becomes(sandbox: Sandbox, status: str) -> None:
    async def reached() -> bool:
        return await _status(sandbox) == status

    await eventually(reached, what=f"the executor {status}")


async def test_the_script_starts_only_once_go_is_set(
    sandbox: Sandbox, client: ExecutorClient
) -> None:
    go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    handover = Handover()
    sending = asyncio.ensure_future(client.run(sandbox, _run(1), handover=handover, go=go))

    # The executor has taken the request (busy) and waits for the rest of it.
    await _becomes(sandbox, "busy")
    await asyncio.sleep(0.5)
    assert not sending.done()
    assert not handover.sent

    released = time.monotonic_ns()
    go.set_result(None)
    result = await sending

    assert result.status == "succeeded", result
    assert handover.sent
    assert int(result.stdout) > released  # the script ran after the end was sent, not before


async def test_a_request_dropped_before_go_runs_nothing(
    sandbox: Sandbox, client: ExecutorClient
) -> None:
    go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    handover = Handover()
    sending = asyncio.ensure_future(client.run(sandbox, _run(2), handover=handover, go=go))
    await _becomes(sandbox, "busy")

    sending.cancel()
    await asyncio.wait([sending])

    assert not handover.sent
    # Nothing ran: the one-shot executor is ready again, and still takes (its one) execution.
    await _becomes(sandbox, "ready")
    result = await client.run(sandbox, _run(3), handover=Handover())
    assert result.status == "succeeded", result
    assert await _status(sandbox) == "done"


async def test_the_workspace_is_filled_before_go(sandbox: Sandbox, client: ExecutorClient) -> None:
    go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    sending = asyncio.ensure_future(
        client.run(sandbox, _run(4, "scripts/filled.py"), handover=Handover(), go=go)
    )
    await _becomes(sandbox, "busy")
    await asyncio.sleep(0.5)

    released = time.time_ns()
    go.set_result(None)
    result = await sending

    assert result.status == "succeeded", result
    # The input was written while the claim would be written, not after the end was sent.
    assert int(result.stdout) < released


async def test_a_dropped_request_leaves_no_file_for_the_next(
    sandbox: Sandbox, client: ExecutorClient
) -> None:
    go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    sending = asyncio.ensure_future(
        client.run(sandbox, _run(5, input_name="dropped.txt"), handover=Handover(), go=go)
    )
    await _becomes(sandbox, "busy")
    await asyncio.sleep(0.5)  # long enough to fill the workspace

    sending.cancel()
    await asyncio.wait([sending])
    await _becomes(sandbox, "ready")

    result = await client.run(sandbox, _run(6, "scripts/lists.py"), handover=Handover())
    assert result.status == "succeeded", result
    assert result.stdout.strip() == "['in.txt']"
