"""The MCP manager end to end: real HTTP, real executor processes, a real store."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from mcp_manager.records import Fingerprint
from skillweave.config import Settings
from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    SandboxLostError,
)
from skillweave.sandbox.models import ExecutionLimits, ExecutionResult
from skillweave.storage import keys
from tests.integration.harness import Manager, StartManager, eventually
from tests.integration.manager.conftest import TrackingBackend

pytestmark = pytest.mark.timeout(180)


async def pool_back_at_target(manager: Manager) -> None:
    async def check() -> bool:
        pool = (await manager.http.get("/sandbox/pool")).json()
        settled = pool["ready"] == pool["target"] and pool["busy"] == 0 and pool["starting"] == 0
        return settled and getattr(manager.backend, "destroying", 0) == 0

    await eventually(check, timeout=30)


# --- the artifact chain -------------------------------------------------------------------


async def test_bundled_chain_csv_to_stats_to_report(start_manager: StartManager) -> None:
    manager = await start_manager(pool_target=2)
    csv = b"region,units,price\nnorth,3,9.5\nsouth,5,12.25\nnorth,2,9.5\n"
    data_ref = await manager.store.put_bytes(keys.run_input_key("chain", "sales.csv"), csv)
    profiled = await manager.client.execute(
        manager.request(
            "scripts/profile_csv.py",
            skill="csv-profiler",
            run_id="chain",
            execution_id="chain/1",
            inputs=[data_ref],
        )
    )
    assert profiled.status == "succeeded", profiled.stderr
    (stats,) = [o for o in profiled.outputs if o.path == "stats.json"]
    stats_bytes = await manager.store.get_bytes(stats.ref)
    assert stats.ref.sha256 == hashlib.sha256(stats_bytes).hexdigest()
    assert json.loads(stats_bytes)["rows"] == 3

    reported = await manager.client.execute(
        manager.request(
            "scripts/report.mjs",
            skill="json-report",
            run_id="chain",
            execution_id="chain/2",
            inputs=[stats.ref],
        )
    )
    assert reported.status == "succeeded", reported.stderr
    (report,) = [o for o in reported.outputs if o.path == "report.md"]
    text = (await manager.store.get_bytes(report.ref)).decode()
    assert "region" in text
    assert "price" in text
    assert "3" in text


async def test_input_bytes_arrive_intact(start_manager: StartManager) -> None:
    manager = await start_manager()
    payload = bytes(range(256)) * 4096  # 1 MiB of every byte value
    ref = await manager.store.put_bytes(keys.run_input_key("run-1", "in.txt"), payload)
    result = await manager.client.execute(manager.request("scripts/copy.py", inputs=[ref]))
    assert result.status == "succeeded", result.stderr
    assert result.stdout.strip() == str(len(payload))
    (out,) = result.outputs
    assert out.ref.key == keys.execution_output_key("run-1", result.execution_id, "out.txt")
    assert await manager.store.get_bytes(out.ref) == payload[::-1]


# --- exactly once -------------------------------------------------------------------------


async def test_same_id_sequentially_runs_once(start_manager: StartManager) -> None:
    manager = await start_manager()
    first = await manager.client.execute(
        manager.request("scripts/hello.py", execution_id="wf/act-1", args=["a"])
    )
    second = await manager.client.execute(
        manager.request("scripts/hello.py", execution_id="wf/act-1", args=["a"])
    )
    assert first == second
    assert first.stdout == "hello a\n"
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


async def test_a_request_without_limits_is_the_one_that_named_the_managers(
    start_manager: StartManager,
) -> None:
    """Workers used to send their script limit; now the manager's is used. A step retried
    across that change (limits named, then left out) is a repeat, not a conflict."""
    manager = await start_manager()
    limit = Settings(_env_file=None).sandbox.timeout_seconds  # what the fixture leaves
    named = manager.request(
        "scripts/hello.py", execution_id="wf/limits", limits=ExecutionLimits(timeout_seconds=limit)
    )
    first = await manager.client.execute(named)
    again = await manager.client.execute(named.model_copy(update={"limits": None}))
    assert again == first
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1
    other = named.model_copy(update={"limits": ExecutionLimits(timeout_seconds=limit + 1)})
    with pytest.raises(ExecutionConflictError):
        await manager.client.execute(other)


async def test_same_id_concurrently_runs_once(start_manager: StartManager) -> None:
    manager = await start_manager(pool_target=2)
    same = manager.request("scripts/hello.py", execution_id="wf/act-2")
    results = await asyncio.gather(*(manager.client.execute(same) for _ in range(5)))
    assert all(r == results[0] for r in results)
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


async def test_same_id_across_a_manager_restart_runs_once(start_manager: StartManager) -> None:
    first_manager = await start_manager()
    same = first_manager.request("scripts/hello.py", execution_id="wf/act-3")
    first = await first_manager.client.execute(same)
    await first_manager.shutdown()
    assert first_manager.backend.runs == 1

    second_manager = await start_manager()
    again = await second_manager.client.execute(same)
    assert again == first
    await pool_back_at_target(second_manager)
    assert second_manager.backend.runs == 0


async def test_same_id_with_a_different_request_is_a_conflict(start_manager: StartManager) -> None:
    manager = await start_manager()
    await manager.client.execute(manager.request("scripts/hello.py", execution_id="wf/act-4"))
    with pytest.raises(ExecutionConflictError, match="different request"):
        await manager.client.execute(
            manager.request("scripts/hello.py", execution_id="wf/act-4", args=["other"])
        )


# --- containment: structured results, pool back at target ---------------------------------


async def test_infinite_loop_is_killed_at_the_timeout(start_manager: StartManager) -> None:
    manager = await start_manager()
    result = await manager.client.execute(
        manager.request("scripts/loop.py", limits=ExecutionLimits(timeout_seconds=2))
    )
    assert result.status == "timed_out"
    assert result.timed_out
    assert 1500 <= result.duration_ms < 10_000
    await pool_back_at_target(manager)


async def test_memory_bomb_is_stopped(start_manager: StartManager) -> None:
    manager = await start_manager()
    result = await manager.client.execute(
        manager.request(
            "scripts/memory.py", limits=ExecutionLimits(memory_mb=256, timeout_seconds=20)
        )
    )
    assert result.status == "failed"
    assert result.exit_code != 0
    await pool_back_at_target(manager)


async def test_fork_bomb_is_stopped(start_manager: StartManager) -> None:
    manager = await start_manager()
    result = await manager.client.execute(
        manager.request(
            "scripts/fork.py", limits=ExecutionLimits(max_processes=32, timeout_seconds=20)
        )
    )
    assert result.status in ("failed", "timed_out")
    assert result.exit_code != 0
    await pool_back_at_target(manager)


async def test_stdout_flood_is_truncated_and_stored_in_full(start_manager: StartManager) -> None:
    manager = await start_manager()
    result = await manager.client.execute(
        manager.request(
            "scripts/flood.py",
            limits=ExecutionLimits(max_output_bytes=64 * 1024, timeout_seconds=60),
        )
    )
    assert result.status == "succeeded", result.stderr
    assert result.stdout_truncated
    assert len(result.stdout.encode()) <= 64 * 1024
    assert result.stdout_ref is not None
    assert result.stdout_ref.size == 100 * 1024 * 1024
    await pool_back_at_target(manager)


async def test_network_is_closed_to_scripts(start_manager: StartManager) -> None:
    manager = await start_manager()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = await manager.client.execute(
            manager.request("scripts/connect.py", args=[str(port)])
        )
    # Both contained modes (bubblewrap, or the namespaces fallback where it is missing).
    assert result.isolation in {"bubblewrap", "namespaces"}, result.isolation
    assert result.stdout.startswith("BLOCKED"), result.stdout
    await pool_back_at_target(manager)


async def test_secrets_reach_only_their_skill_and_are_masked(start_manager: StartManager) -> None:
    manager = await start_manager()
    holder = await manager.client.execute(manager.request("scripts/env.py", skill="secret-holder"))
    assert "HOLDER_TOKEN = ***" in holder.stdout
    assert "tok-8f2d9c1a" not in holder.stdout
    other = await manager.client.execute(manager.request("scripts/env.py"))
    assert "HOLDER_TOKEN" not in other.stdout
    await pool_back_at_target(manager)


async def test_host_files_are_outside_the_view(start_manager: StartManager, tmp_path: Path) -> None:
    manager = await start_manager()
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's secret")
    for path in (str(secret), "/etc/shadow", str(Path(__file__).resolve())):
        result = await manager.client.execute(manager.request("scripts/readfile.py", args=[path]))
        assert result.stdout.startswith("DENIED"), (path, result.stdout)


# --- cancel -------------------------------------------------------------------------------


async def test_cancel_kills_a_long_run_quickly(start_manager: StartManager) -> None:
    manager = await start_manager()
    long = manager.request(
        "scripts/sleep.py",
        execution_id="wf/long",
        limits=ExecutionLimits(timeout_seconds=60),
    )
    running = asyncio.create_task(manager.client.execute(long))

    async def is_running() -> bool:
        response = await manager.http.get("/sandbox/executions/wf/long")
        return response.status_code == 200 and response.json()["state"] == "running"

    await eventually(is_running)
    await asyncio.sleep(0.5)  # let the script start inside the sandbox
    started = time.monotonic()
    assert await manager.client.cancel("wf/long")
    result: ExecutionResult = await running
    assert time.monotonic() - started < 2.0
    assert result.status == "cancelled"
    state = (await manager.http.get("/sandbox/executions/wf/long")).json()
    assert state["state"] == "finished"
    assert state["result"]["status"] == "cancelled"


# --- auth and bad requests -----------------------------------------------------------------


async def test_auth_is_required(start_manager: StartManager) -> None:
    manager = await start_manager()
    body = manager.request("scripts/hello.py").model_dump(mode="json")
    async with httpx.AsyncClient(base_url=manager.url) as anonymous:
        assert (await anonymous.post("/sandbox/execute", json=body)).status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert (
            await anonymous.post("/sandbox/execute", json=body, headers=wrong)
        ).status_code == 401
        assert (await anonymous.get("/sandbox/pool", headers=wrong)).status_code == 401
        assert (await anonymous.get("/metrics")).status_code == 401
        assert (await anonymous.get("/healthz")).status_code == 200


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"script": "scripts/missing.py"}, 404, "is not in skill"),
        ({"script": "../escape.py"}, 400, "would escape its folder"),
        ({"script": "/etc/passwd"}, 400, "absolute path"),
        ({"version": "0" * 64}, 404, "is not published"),
        ({"env": {"LD_PRELOAD": "x"}}, 400, "reserved"),
        # What only the executor used to refuse, after the claim, storing it as the result:
        ({"env": {"LC_ALL": "C"}}, 400, "reserved"),
        ({"env": {"lower": "x"}}, 400, "not a valid name"),
        ({"env": {"OK": "a\x00b"}}, 400, "NUL"),
        ({"args": ["\ud800"]}, 400, "lone surrogate"),
        ({"args": ["x" * 300_000, "y" * 300_000]}, 400, "more than 524288 bytes"),
        ({"script": "scripts/hello.py\udcff"}, 422, "script: Input should be a valid string"),
        ({"env": {"OK": "\udcff"}}, 400, "lone surrogate"),
    ],
)
async def test_bad_requests_get_clear_4xx_and_leave_the_id_free(
    start_manager: StartManager, change: dict[str, object], status: int, message: str
) -> None:
    manager = await start_manager(pool_target=0)
    body = manager.request("scripts/hello.py", execution_id="wf/refused").model_copy(update=change)
    with pytest.raises(ExecutionRejectedError, match=message) as caught:
        await manager.client.execute(body)
    assert caught.value.status_code == status
    assert manager.backend.runs == 0
    # Nothing was claimed: the same id runs, once, when asked right.
    fixed = await manager.client.execute(
        manager.request("scripts/hello.py", execution_id="wf/refused")
    )
    assert fixed.status == "succeeded", fixed.error
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


async def test_input_from_another_run_is_refused(start_manager: StartManager) -> None:
    manager = await start_manager(pool_target=0)
    foreign = await manager.store.put_bytes(keys.run_input_key("other-run", "in.txt"), b"x")
    with pytest.raises(ExecutionRejectedError, match="does not belong to run") as caught:
        await manager.client.execute(manager.request("scripts/copy.py", inputs=[foreign]))
    assert caught.value.status_code == 403


async def test_metrics_count_outcomes(start_manager: StartManager) -> None:
    manager = await start_manager()
    await manager.client.execute(manager.request("scripts/hello.py"))
    text = (await manager.http.get("/metrics")).text
    assert 'skillweave_sandbox_executions_total{outcome="succeeded"} 1.0' in text
    assert "skillweave_sandbox_claim_seconds_bucket" in text


async def test_exhausted_pool_answers_503_with_retry_after(start_manager: StartManager) -> None:
    manager = await start_manager(pool_target=1, pool_max=1, claim_timeout=0.5)
    await pool_back_at_target(manager)  # the claim timeout is shorter than an executor start
    long = manager.request(
        "scripts/sleep.py",
        execution_id="wf/hog",
        limits=ExecutionLimits(timeout_seconds=30),
    )
    hog = asyncio.create_task(manager.client.execute(long))

    async def busy() -> bool:
        return (await manager.http.get("/sandbox/pool")).json()["busy"] == 1

    await eventually(busy)
    body = manager.request("scripts/hello.py", execution_id="wf/late").model_dump(mode="json")
    response = await manager.http.post("/sandbox/execute", json=body)
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) >= 1
    assert await manager.client.cancel("wf/hog")
    assert (await hog).status == "cancelled"
    # nothing ran for the refused id, so it is still free to run once a sandbox is ready
    await pool_back_at_target(manager)
    late = await manager.client.execute(manager.request("scripts/hello.py", execution_id="wf/late"))
    assert late.status == "succeeded"


def claim_record(fingerprint: str, *, renewed: float, attempt: int = 1) -> bytes:
    """A claim as a manager writes it, renewed at `renewed` (wall-clock seconds)."""
    record = {
        "fingerprint": fingerprint,
        "manager": "another",
        "attempt": attempt,
        "at": renewed,
        "renewed": renewed,
    }
    return json.dumps(record).encode()


async def test_an_execution_whose_manager_stopped_runs_again_once_its_claim_lapsed(
    start_manager: StartManager,
) -> None:
    """A claim without a result, not renewed for longer than the lease: its manager stopped
    mid-run (and its sandbox with it; nothing of that run was kept). The next attempt is
    claimed and the script runs, once."""
    manager = await start_manager()
    interrupted = manager.request("scripts/hello.py", execution_id="wf/interrupted")
    stale = claim_record(Fingerprint.of(interrupted).value, renewed=time.time() - 3600)
    await manager.store.put_bytes(keys.execution_claim_key("wf/interrupted"), stale)

    result = await manager.client.execute(interrupted)

    assert result.status == "succeeded"
    await pool_back_at_target(manager)  # its sandbox is destroyed (and counted) after
    assert manager.backend.runs == 1
    assert await manager.store.stat(keys.execution_claim_key("wf/interrupted", 2)) is not None
    metrics = (await manager.http.get("/metrics")).text
    assert "skillweave_sandbox_claims_taken_over_total 1.0" in metrics
    again = await manager.client.execute(interrupted)  # now a stored result
    assert again == result
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


async def test_an_execution_under_a_live_claim_is_not_run_but_asked_again_later(
    start_manager: StartManager,
) -> None:
    """A claim renewed within the lease: another manager is running it now."""
    manager = await start_manager()
    running = manager.request("scripts/hello.py", execution_id="wf/elsewhere")
    live = claim_record(Fingerprint.of(running).value, renewed=time.time())
    await manager.store.put_bytes(keys.execution_claim_key("wf/elsewhere"), live)
    with pytest.raises(ExecutionInProgressError) as refused:
        await manager.client.execute(running)
    # the default lease and clock skew (20 + 5 s), less the claim's age
    assert 1 <= refused.value.retry_after <= 25
    await pool_back_at_target(manager)
    # The sandbox it claimed had read part of the request, which was dropped before its end:
    # nothing ran in it, and it was destroyed rather than reused.
    assert manager.backend.runs == 0
    assert manager.backend.destroyed == 1


async def test_a_claim_for_another_request_or_too_many_interruptions_is_a_conflict(
    start_manager: StartManager,
) -> None:
    manager = await start_manager()
    other = manager.request("scripts/hello.py", execution_id="wf/other")
    await manager.store.put_bytes(
        keys.execution_claim_key("wf/other"), claim_record("not-it", renewed=0.0)
    )
    with pytest.raises(ExecutionConflictError, match="different request"):
        await manager.client.execute(other)

    unlucky = manager.request("scripts/hello.py", execution_id="wf/unlucky")
    for attempt in range(1, 6):
        await manager.store.put_bytes(
            keys.execution_claim_key("wf/unlucky", attempt),
            claim_record(Fingerprint.of(unlucky).value, renewed=0.0, attempt=attempt),
        )
    with pytest.raises(ExecutionConflictError, match="interrupted 5 times"):
        await manager.client.execute(unlucky)
    assert manager.backend.runs == 0


async def test_same_id_on_two_managers_at_once_runs_once(start_manager: StartManager) -> None:
    first, second = await start_manager(), await start_manager()
    await pool_back_at_target(first)
    await pool_back_at_target(second)
    same = first.request(
        "scripts/nap.py",
        execution_id="wf/raced",
        args=["0.5"],
    )
    outcomes = await asyncio.gather(
        first.client.execute(same), second.client.execute(same), return_exceptions=True
    )
    results = [o for o in outcomes if isinstance(o, ExecutionResult)]
    # The loser finds the winner's live claim: asked to come back (and then finds the result).
    conflicts = [
        o for o in outcomes if isinstance(o, ExecutionInProgressError | ExecutionConflictError)
    ]
    assert len(results) + len(conflicts) == 2, outcomes
    assert results
    assert all(r.status == "succeeded" for r in results)
    await pool_back_at_target(first)
    await pool_back_at_target(second)
    assert first.backend.runs + second.backend.runs == 1


async def test_an_executor_killed_mid_run_is_lost_and_the_same_id_runs_again(
    start_manager: StartManager,
) -> None:
    """The sandbox dies under the script: a typed SandboxLostError, the id freed, and the same
    request (an activity's retry) runs to the end on a fresh sandbox."""
    backend = TrackingBackend()
    manager = await start_manager(backend=backend)
    await pool_back_at_target(manager)
    same = manager.request("scripts/nap.py", execution_id="wf/lost", args=["1.5"])
    running = asyncio.create_task(manager.client.execute(same))

    async def busy() -> bool:
        return await backend.busy() is not None

    await eventually(busy, timeout=20)
    victim = await backend.busy()
    assert victim is not None
    assert victim.process is not None
    os.killpg(victim.process.pid, signal.SIGKILL)
    with pytest.raises(SandboxLostError, match="wf/lost"):
        await running
    assert await manager.store.stat(keys.execution_claim_key("wf/lost")) is None
    assert await manager.store.stat(keys.execution_result_key("wf/lost")) is None
    metrics = (await manager.http.get("/metrics")).text
    assert 'skillweave_sandbox_executions_total{outcome="lost"} 1.0' in metrics

    again = await manager.client.execute(same)
    assert again.status == "succeeded"
    assert again.stdout.strip() == "rested"
    assert (await manager.client.execute(same)).stdout == again.stdout  # stored from now on
    await pool_back_at_target(manager)
