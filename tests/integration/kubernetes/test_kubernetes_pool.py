"""The manager's kubernetes backend end to end: the official client against the kmock API
server on loopback, a test kubelet running a real executor per pod, real executions."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import cast

import httpx
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import AgentActivities
from mcp_manager.kubernetes import LABEL_OWNER, NOTE_CLAIMED_BY, PodApi
from skillweave.agent.effect_models import RunScriptInput
from skillweave.agent.effects import RUN_SKILL_SCRIPT
from skillweave.agent.idempotency import execution_key
from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.errors import PoolExhaustedError, SandboxError, SandboxLostError
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import StartManager, eventually
from tests.integration.kubernetes.cluster import FakeCluster
from tests.integration.kubernetes.conftest import (
    NAMESPACE,
    TOKEN,
    kubernetes_settings,
    pool_pods,
    spawn_manager,
    state_of,
    warm_ready,
)

pytestmark = pytest.mark.timeout(180)


async def test_scripts_run_end_to_end_and_the_pool_returns_to_target(
    start_manager: StartManager, cluster: FakeCluster, store: LocalArtifactStore
) -> None:
    manager = await start_manager(target=2)
    await manager.state.pool.wait_ready(timeout=30)
    before = set(warm_ready(cluster))
    assert len(before) == 2
    data = b"kubernetes sandbox bytes"
    ref = await store.put_bytes("runs/run-1/inputs/in.txt", data)
    result = await manager.client.execute(manager.request("scripts/copy.py", inputs=[ref]))
    assert result.status == "succeeded", result
    assert result.stdout.strip() == str(len(data))
    [output] = result.outputs
    assert await store.get_bytes(output.ref) == data[::-1]

    # One-shot: the used pod is gone (executor too) and a replacement is warm.
    async def replaced() -> bool:
        warm = set(warm_ready(cluster))
        return len(warm) == 2 and len(before - warm) == 1 and len(pool_pods(cluster)) == 2

    await eventually(replaced, what="the used pod replaced")
    await eventually(lambda: cluster.executors_running() == 2, what="one executor per pod")
    status = await manager.pool()
    assert status == {
        "backend": "kubernetes",
        "target": 2,
        "maximum": 6,
        "ready": 2,
        "starting": 0,
        "busy": 0,
    }


async def test_two_managers_claiming_at_once_never_share_a_pod(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    first = await start_manager(manager_id="manager-a", target=2, maximum=5)
    second = await start_manager(manager_id="manager-b", target=2, maximum=5)
    await first.state.pool.wait_ready(timeout=30)
    await second.state.pool.wait_ready(timeout=30)
    requests = [
        (manager, manager.request("scripts/where.py", execution_id=f"race/{manager.url}/{n}"))
        for n in range(12)
        for manager in (first, second)
    ]
    results = await asyncio.gather(*(m.client.execute(r) for m, r in requests))
    assert [r.status for r in results] == ["succeeded"] * len(results)
    # Each pod has a workspace of its own: a shared pod would show a folder twice (and its
    # one-shot executor would have refused the second run).
    folders = [r.stdout.strip() for r in results]
    assert len(set(folders)) == len(folders)
    conflicts = 0
    for manager in (first, second):
        metrics = (await manager.http.get("/metrics")).text
        line = next(x for x in metrics.splitlines() if x.startswith("skillweave_sandbox_claim_c"))
        conflicts += int(float(line.split()[-1]))
    assert conflicts > 0, "the managers never raced for a pod"
    for manager in (first, second):
        await manager.state.pool.wait_ready(timeout=30)
    await eventually(lambda: len(warm_ready(cluster)) == 4, what="both pools back at target")


async def test_a_pod_killed_mid_run_is_lost_and_the_retry_runs_on_a_fresh_pod(
    start_manager: StartManager, cluster: FakeCluster, store: LocalArtifactStore
) -> None:
    manager = await start_manager(target=1)
    await manager.state.pool.wait_ready(timeout=30)
    same = manager.request("scripts/nap.py", execution_id="wf-1/script-1", args=["2"])
    running = asyncio.create_task(manager.client.execute(same))

    def claimed() -> list[str]:
        return [p["metadata"]["name"] for p in pool_pods(cluster) if state_of(p) == "claimed"]

    await eventually(lambda: len(claimed()) == 1, what="a pod claimed")
    victim = claimed()[0]
    await asyncio.sleep(0.3)  # the script is running
    cluster.kill_pod(NAMESPACE, victim)
    with pytest.raises(SandboxLostError, match="wf-1/script-1"):
        await running
    # The activity's retry: the same execution id, now free, runs on a fresh pod.
    again = await manager.client.execute(same)
    assert again.status == "succeeded"
    assert again.stdout.strip() == "rested"
    await eventually(lambda: cluster.pod(NAMESPACE, victim) is None, what="the dead pod deleted")
    await manager.state.pool.wait_ready(timeout=30)
    metrics = (await manager.http.get("/metrics")).text
    assert 'skillweave_sandbox_executions_total{outcome="lost"} 1.0' in metrics
    assert 'skillweave_sandbox_executions_total{outcome="succeeded"} 1.0' in metrics


async def test_an_exhausted_pool_waits_then_answers_503_with_retry_after(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    manager = await start_manager(target=1, maximum=1, claim_timeout=1.0)
    await manager.state.pool.wait_ready(timeout=30)
    long = asyncio.create_task(
        manager.client.execute(manager.request("scripts/nap.py", args=["3"]))
    )
    await eventually(lambda: any(state_of(p) == "claimed" for p in pool_pods(cluster)))
    started = time.monotonic()
    with pytest.raises(PoolExhaustedError) as refused:
        await manager.client.execute(manager.request("scripts/where.py"))
    assert time.monotonic() - started >= 0.9  # it waited for the claim timeout first
    assert refused.value.retry_after >= 1
    assert len(pool_pods(cluster)) == 1  # the hard maximum held
    assert (await long).status == "succeeded"
    await manager.state.pool.wait_ready(timeout=30)


async def test_a_cold_claim_starts_a_pod_when_none_is_warm(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    manager = await start_manager(target=0, maximum=2)
    assert pool_pods(cluster) == []
    result = await manager.client.execute(manager.request("scripts/where.py"))
    assert result.status == "succeeded"
    metrics = (await manager.http.get("/metrics")).text
    assert 'skillweave_sandbox_claim_seconds_count{kind="cold"} 1.0' in metrics
    await eventually(lambda: pool_pods(cluster) == [], what="the used pod deleted")


async def test_a_restarted_manager_adopts_warm_pods_and_reaps_its_orphaned_claims(
    cluster: FakeCluster, library, tmp_path: Path
) -> None:
    skills, store = library.get("probe").path.parent, tmp_path / "store"
    log = tmp_path / "manager.log"
    spawn = {"skills": skills, "store": store, "manager_id": "manager-r", "log": log}
    first = spawn_manager(cluster, target=2, maximum=4, **spawn)
    try:
        await eventually(lambda: len(warm_ready(cluster)) == 2, timeout=30, what="warm pods")
        async with SandboxClient(first.url, token=TOKEN) as client:
            version = library.get("probe").version
            from skillweave.sandbox.models import ExecuteRequest

            stuck = asyncio.create_task(
                client.execute(
                    ExecuteRequest(
                        execution_id="wf-r/script-1",
                        run_id="run-r",
                        skill="probe",
                        version=version,
                        script="scripts/nap.py",
                        args=["60"],
                    )
                )
            )

            def claimed() -> list[str]:
                return [
                    p["metadata"]["name"] for p in pool_pods(cluster) if state_of(p) == "claimed"
                ]

            await eventually(lambda: len(claimed()) == 1, what="a pod claimed")
            await eventually(lambda: len(warm_ready(cluster)) == 2, timeout=30, what="refilled")
            orphan = claimed()[0]
            warm_before = set(warm_ready(cluster))
            first.kill()  # SIGKILL: nothing is cleaned up
            with pytest.raises(SandboxError, match="cannot reach the MCP manager"):
                await stuck
        assert cluster.pod(NAMESPACE, orphan) is not None  # left behind, still claimed
        second = spawn_manager(cluster, target=2, maximum=4, **spawn)
        try:
            await eventually(
                lambda: cluster.pod(NAMESPACE, orphan) is None, what="the orphan reaped"
            )
            assert f"deleting sandbox pod {orphan}: orphaned claim" in log.read_text()
            await asyncio.sleep(1.0)  # time to (wrongly) create pods, if it were going to
            # The warm pods were adopted as they were: no new pod was made for the target.
            assert set(warm_ready(cluster)) == warm_before
            assert {p["metadata"]["name"] for p in pool_pods(cluster)} == warm_before
            async with httpx.AsyncClient() as http:
                status = (
                    await http.get(
                        f"{second.url}/sandbox/pool", headers={"Authorization": f"Bearer {TOKEN}"}
                    )
                ).json()
            assert status["ready"] == 2
            assert status["busy"] == 0
        finally:
            second.kill()
    finally:
        first.kill()


async def test_foreign_claims_are_reaped_when_the_lease_expires_or_held_too_long(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    """Another replica (a different id) claimed two pods: it vanished holding one (its lease
    runs out), and it renews the other's lease but has held it past the execution limit."""
    ghost = kubernetes_settings(cluster, manager_id="ghost", target=0, maximum=1)
    manager = await start_manager(target=2, claim_max_seconds=60.0)
    await manager.state.pool.wait_ready(timeout=30)
    lapsed, overdue = warm_ready(cluster)
    api = PodApi(ghost.sandbox.kubernetes)

    async def claim_as_ghost(name: str, *, claimed_at: float, lease_until: float) -> None:
        pod = cluster.pod(NAMESPACE, name)
        assert pod is not None
        claimed = await api.patch(
            name,
            {
                "metadata": {
                    "resourceVersion": pod["metadata"]["resourceVersion"],
                    "labels": {"skillweave.dev/state": "claimed"},
                    "annotations": {
                        NOTE_CLAIMED_BY: "ghost",
                        "skillweave.dev/claimed-at": f"{claimed_at:.3f}",
                        "skillweave.dev/lease-expires": f"{lease_until:.3f}",
                    },
                }
            },
        )
        assert claimed is not None

    try:
        now = time.time()
        await claim_as_ghost(lapsed, claimed_at=now, lease_until=now + 1.5)
        await claim_as_ghost(overdue, claimed_at=now - 61.0, lease_until=now + 3600)
        await eventually(lambda: cluster.pod(NAMESPACE, overdue) is None, what="overdue reaped")
        assert cluster.pod(NAMESPACE, lapsed) is not None  # its lease still holds
        await eventually(lambda: cluster.pod(NAMESPACE, lapsed) is None, what="lapsed reaped")
        await manager.state.pool.wait_ready(timeout=30)  # both replaced, by their owner
        metrics = (await manager.http.get("/metrics")).text
        assert 'skillweave_sandbox_reaped_total{reason="lease expired"} 1.0' in metrics
        assert 'skillweave_sandbox_reaped_total{reason="claimed too long"} 1.0' in metrics
    finally:
        api.close()


async def test_warm_pods_rotate_on_a_template_change_and_at_their_maximum_age(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    old = await start_manager(manager_id="manager-t", target=2)
    await old.state.pool.wait_ready(timeout=30)
    first = set(warm_ready(cluster))
    await old.shutdown()
    # The same replica comes back with another template: its old pods go, new ones come.
    new = await start_manager(manager_id="manager-t", target=2, image="skillweave/executor:2")
    await new.state.pool.wait_ready(timeout=30)
    await eventually(lambda: not first & {p["metadata"]["name"] for p in pool_pods(cluster)})
    second = set(warm_ready(cluster))
    assert len(second) == 2
    assert all(
        p["spec"]["containers"][0]["image"] == "skillweave/executor:2" for p in pool_pods(cluster)
    )
    await new.shutdown()
    # Past the maximum age, pods are rotated too.
    aged = await start_manager(
        manager_id="manager-t", target=2, image="skillweave/executor:2", max_age_seconds=2.0
    )
    await eventually(
        lambda: not second & {p["metadata"]["name"] for p in pool_pods(cluster)},
        timeout=20,
        what="rotated at max age",
    )
    assert all(p["metadata"]["labels"][LABEL_OWNER] == "manager-t" for p in pool_pods(cluster))
    await aged.shutdown()


async def test_the_activity_fails_retryably_on_a_lost_pod_and_its_retry_succeeds(
    start_manager: StartManager,
    cluster: FakeCluster,
    store: LocalArtifactStore,
    library: SkillRegistry,
) -> None:
    """What Temporal sees: attempt 1 ends in a retryable SandboxLostError failure, attempt 2
    (the same activity, so the same idempotency key) runs the script on a fresh pod."""
    manager = await start_manager(target=1)
    await manager.state.pool.wait_ready(timeout=30)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=library,
        store=store,
        provider=cast(ModelProvider, object()),  # no model call here
        model="none",
        sandbox=manager.client,
    )
    activities = AgentActivities(services, heartbeat_seconds=0.1)
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info, workflow_id="skillweave-run-k1", activity_id="script-1"
    )
    script = RunScriptInput(
        run_id="k1",
        execution_id=execution_key("k1", 1),
        skill="probe",
        version=library.get("probe").version,
        script="scripts/nap.py",
        args=["2"],
        seq=1,
        tool_call_id="call-1",
    )
    attempt = asyncio.create_task(env.run(activities.definition(RUN_SKILL_SCRIPT), script))
    await eventually(lambda: any(state_of(p) == "claimed" for p in pool_pods(cluster)))
    [victim] = [p["metadata"]["name"] for p in pool_pods(cluster) if state_of(p) == "claimed"]
    await asyncio.sleep(0.3)
    cluster.kill_pod(NAMESPACE, victim)
    with pytest.raises(ApplicationError) as failed:
        await attempt
    assert failed.value.type == "SandboxLostError"
    assert not failed.value.non_retryable
    outcome = await env.run(activities.definition(RUN_SKILL_SCRIPT), script)
    assert outcome.status == "succeeded"
    assert outcome.exit_code == 0


async def test_a_manager_owns_its_pods_under_its_one_id(
    cluster: FakeCluster, store: LocalArtifactStore, library: SkillRegistry
) -> None:
    """Issue 28: the id of a manager's claims, logs, /healthz and metrics (SANDBOX__MANAGER_ID)
    is the owner of the pods it creates too, as a label value."""
    from mcp_manager.kubernetes import label_value
    from skillweave.sandbox.packages import publish_library
    from tests.integration.harness import Manager

    settings = kubernetes_settings(cluster, manager_id="k8s-own-id", target=1, maximum=2)
    sandbox = settings.sandbox.model_copy(update={"manager_id": "manager-east:8090"})
    settings = settings.model_copy(update={"sandbox": sandbox})
    await publish_library(store, library)
    async with Manager.serving(settings, store=store, registry=library) as manager:
        await manager.state.pool.wait_ready(timeout=30)
        health = (await manager.http.get("/healthz")).json()
        owners = {p["metadata"]["labels"][LABEL_OWNER] for p in pool_pods(cluster)}
    assert health["manager_id"] == "manager-east:8090"
    assert owners == {label_value("manager-east:8090")} == {"manager-east-8090"}
