"""The local backend's executor zygote, for real: one process per pool that forks executors.

What the backend relies on: each executor is its own process (own session, port, token,
command name) and never sees another's token; the zygote holds no token; exits are reported
and reaped; a killed zygote takes its executors along and the next sandbox gets a new zygote.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import httpx
import pytest

from mcp_manager import LocalBackend
from sandbox_executor.zygote import EXECUTOR_NAME, ZYGOTE_NAME
from skillweave.sandbox.zygote_protocol import TOKEN_FILE
from tests.integration.harness import eventually

pytestmark = pytest.mark.timeout(120)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


async def test_forked_executors_are_separate_and_no_token_is_shared() -> None:
    backend = LocalBackend(start_timeout=60.0)
    try:
        sandboxes = await asyncio.gather(*(backend.create() for _ in range(3)))
        zygote = backend._zygote
        assert zygote is not None
        pids = {s.process.pid for s in sandboxes if s.process is not None}
        assert len(pids) == 3
        assert len({s.url for s in sandboxes}) == len({s.token for s in sandboxes}) == 3
        for sandbox in sandboxes:
            assert sandbox.process is not None
            assert sandbox.workdir is not None
            assert _comm(sandbox.process.pid) == EXECUTOR_NAME
            assert os.getsid(sandbox.process.pid) == sandbox.process.pid  # its own session
            assert not (sandbox.workdir / TOKEN_FILE).exists()  # read, then removed
        assert _comm(zygote.process.pid) == ZYGOTE_NAME
        # The zygote, which every executor is a copy of, never held a token.
        zygote_environ = Path(f"/proc/{zygote.process.pid}/environ").read_bytes()
        assert b"EXECUTOR__TOKEN" not in zygote_environ
        assert not any(s.token.encode() in zygote_environ for s in sandboxes)
        # Each executor takes its own token only.
        first, second = sandboxes[0], sandboxes[1]
        async with httpx.AsyncClient() as client:
            refused = await client.get(
                f"{first.url}/files/stdout", headers={"Authorization": f"Bearer {second.token}"}
            )
            accepted = await client.get(
                f"{first.url}/files/stdout", headers={"Authorization": f"Bearer {first.token}"}
            )
        assert refused.status_code == 401
        assert accepted.status_code == 404  # authorized: nothing has run yet
        for sandbox in sandboxes:
            await backend.destroy(sandbox)
            assert sandbox.process is not None
            assert sandbox.process.returncode is not None  # reported and reaped
            assert not _alive(sandbox.process.pid)
            assert sandbox.workdir is not None
            assert not sandbox.workdir.exists()
        assert zygote.alive  # a signal for an executor it reaped is ignored, not fatal
        await zygote.signal(sandboxes[0].process, signal.SIGKILL)  # type: ignore[arg-type]
        assert zygote.alive
    finally:
        await backend.close()


async def test_a_killed_zygote_takes_its_executors_along_and_is_replaced() -> None:
    backend = LocalBackend(start_timeout=60.0)
    try:
        sandbox = await backend.create()
        zygote = backend._zygote
        assert zygote is not None
        assert sandbox.process is not None
        os.kill(zygote.process.pid, signal.SIGKILL)
        assert await asyncio.wait_for(sandbox.process.wait(), 30) == -signal.SIGKILL
        await eventually(lambda: not _alive(sandbox.process.pid), timeout=10)  # type: ignore[union-attr]
        replacement = await backend.create()
        assert backend._zygote is not None
        assert backend._zygote is not zygote
        async with httpx.AsyncClient() as client:
            health = await client.get(f"{replacement.url}/healthz")
        assert health.json()["status"] == "ready"
        await backend.destroy(sandbox)
        await backend.destroy(replacement)
    finally:
        await backend.close()


async def test_closing_the_backend_leaves_no_process() -> None:
    backend = LocalBackend(start_timeout=60.0)
    sandboxes = [await backend.create() for _ in range(2)]
    zygote = backend._zygote
    assert zygote is not None
    pids = [zygote.process.pid, *(s.process.pid for s in sandboxes if s.process is not None)]
    await backend.close()
    await eventually(lambda: not any(_alive(pid) for pid in pids), timeout=10)


async def test_a_sandbox_is_ready_without_an_http_call() -> None:
    """Its isolation comes from its ready file (what /healthz would answer), so making a
    sandbox costs the manager and the executor no HTTP exchange."""
    backend = LocalBackend(start_timeout=60.0)
    try:
        sandbox = await backend.create()
        assert sandbox.workdir is not None
        ready = json.loads((sandbox.workdir / "ready.json").read_text())
        assert sandbox.isolation == ready["isolation"] == backend._zygote.isolation  # type: ignore[union-attr]
        log = sandbox.workdir / "executor.err"
        assert "/healthz" not in log.read_text()  # nobody asked
        async with httpx.AsyncClient() as client:
            health = (await client.get(f"{sandbox.url}/healthz")).json()
        assert health == {"status": "ready", "isolation": sandbox.isolation}
        await eventually(lambda: "/healthz" in log.read_text())  # its access log says so
        await backend.destroy(sandbox)
    finally:
        await backend.close()
