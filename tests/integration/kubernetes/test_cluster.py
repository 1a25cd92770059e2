"""The fake cluster itself, through the official ``kubernetes`` client: the API server semantics
the kubernetes backend relies on, and a kubelet whose pods are real executor processes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import kubernetes
import pytest
import urllib3
from kubernetes.client import CoreV1Api, V1Pod
from kubernetes.client.exceptions import ApiException

from tests.integration.kubernetes.cluster import FakeCluster

SANDBOXES = "sandboxes"
"""The namespace the kubelet runs pods in."""
PARKED = "parked"
"""A namespace without kubelet: its pods stay Pending and start no process."""
MERGE = "application/merge-patch+json"


def pod_body(name: str, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "executor",
                    "image": "skillweave/sandbox-executor:test",
                    "ports": [{"containerPort": 8080}],
                    "env": [
                        {"name": "EXECUTOR__TOKEN", "value": "harness-token"},
                        {"name": "EXECUTOR__ISOLATION", "value": "none"},
                    ],
                }
            ],
        },
    }


def is_ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def refused(ip: str) -> bool:
    try:
        httpx.get(f"http://{ip}:8080/healthz", timeout=2.0)
    except httpx.ConnectError:
        return True
    return False


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[FakeCluster]:
    with FakeCluster(tmp_path, kubelet_namespaces=[SANDBOXES]) as fake:
        yield fake


@pytest.fixture
def core(cluster: FakeCluster) -> Iterator[CoreV1Api]:
    api_client = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
    yield CoreV1Api(api_client)
    api_client.close()


@contextmanager
def watching(core: CoreV1Api, namespace: str, **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
    """Run the official client's watch on a thread; yields the events seen so far."""
    events: list[dict[str, Any]] = []
    watch = kubernetes.watch.Watch()
    stopping = threading.Event()

    def follow() -> None:
        stream = watch.stream(
            core.list_namespaced_pod, namespace, timeout_seconds=20, _request_timeout=30, **kwargs
        )
        try:
            for event in stream:
                assert isinstance(event["object"], V1Pod)  # our objects fit the client's models
                events.append(event)
        except urllib3.exceptions.ProtocolError:
            if not stopping.is_set():  # stop() shuts the socket down under the read
                raise

    thread = threading.Thread(target=follow, name="test-watch")
    thread.start()
    try:
        yield events
    finally:
        stopping.set()
        watch.stop()
        thread.join(10)
        assert not thread.is_alive()


def start_ready_pod(cluster: FakeCluster, core: CoreV1Api, name: str) -> str:
    """Create a pod where the kubelet runs it; its IP once Ready."""
    core.create_namespaced_pod(SANDBOXES, pod_body(name))
    pod = cluster.wait_for(
        lambda: (p := cluster.pod(SANDBOXES, name)) and is_ready(p) and p, timeout=20, what="ready"
    )
    return pod["status"]["podIP"]


def test_a_created_pod_runs_a_real_executor_that_the_watch_sees_become_ready(
    cluster: FakeCluster, core: CoreV1Api
) -> None:
    with watching(core, SANDBOXES, label_selector="app=sandbox") as events:
        cluster.wait_for(lambda: cluster.open_watches() == 1, what="the watch connected")
        created = core.create_namespaced_pod(SANDBOXES, pod_body("p1", labels={"app": "sandbox"}))
        ready = cluster.wait_for(
            lambda: next(
                (e for e in events if e["type"] == "MODIFIED" and is_ready(e["raw_object"])), None
            ),
            timeout=20,
            what="a MODIFIED event with the pod Ready",
        )

    assert created.status.phase == "Pending"
    assert created.metadata.uid
    assert created.metadata.creation_timestamp
    assert created.metadata.namespace == SANDBOXES
    assert events[0]["type"] == "ADDED"
    versions = [int(e["raw_object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(set(versions))
    assert versions[0] == int(created.metadata.resource_version)
    status = ready["raw_object"]["status"]
    ip = status["podIP"]
    assert ip.startswith("127.")
    assert ip != "127.0.0.1"
    assert status["phase"] == "Running"
    assert status["podIPs"] == [{"ip": ip}]
    assert {c["type"]: c["status"] for c in status["conditions"]}["ContainersReady"] == "True"
    assert status["containerStatuses"][0]["state"]["running"]["startedAt"]
    assert httpx.get(f"http://{ip}:8080/healthz").json()["status"] == "ready"
    assert cluster.executors_running() == 1
    counts = cluster.request_counts()
    assert (counts["watch"], counts["create"]) == (1, 1)


def test_a_stale_resource_version_is_a_conflict_that_changes_nothing(
    cluster: FakeCluster, core: CoreV1Api
) -> None:
    stale = cluster.create_pod(PARKED, pod_body("p"))["metadata"]["resourceVersion"]
    core.patch_namespaced_pod("p", PARKED, {"metadata": {"labels": {"step": "one"}}})

    with pytest.raises(ApiException) as caught:
        core.patch_namespaced_pod(
            "p",
            PARKED,
            {"metadata": {"resourceVersion": stale, "labels": {"step": "two"}}},
            _content_type=MERGE,
        )

    assert caught.value.status == 409
    answer = json.loads(caught.value.body)
    assert (answer["kind"], answer["status"], answer["reason"]) == ("Status", "Failure", "Conflict")
    assert "the object has been modified" in answer["message"]
    assert cluster.pod(PARKED, "p")["metadata"]["labels"] == {"step": "one"}
    assert cluster.conflicts() == 1


def race(core: CoreV1Api, name: str, version: str, *, claimers: list[str]) -> dict[str, int]:
    """Claimers patch the pod at once, each with `version` as the precondition: their codes."""
    barrier = threading.Barrier(len(claimers))
    outcomes: dict[str, int] = {}

    def claim(who: str) -> None:
        patch = {"metadata": {"resourceVersion": version, "labels": {"claimed-by": who}}}
        barrier.wait()
        try:
            core.patch_namespaced_pod(name, PARKED, patch, _content_type=MERGE)
            outcomes[who] = 200
        except ApiException as exc:
            outcomes[who] = exc.status

    threads = [threading.Thread(target=claim, args=(who,)) for who in claimers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return outcomes


def test_of_two_patches_from_one_resource_version_exactly_one_wins(
    cluster: FakeCluster, core: CoreV1Api
) -> None:
    cluster.create_pod(PARKED, pod_body("p", labels={"state": "warm"}))
    for round_ in range(5):
        version = cluster.pod(PARKED, "p")["metadata"]["resourceVersion"]

        outcomes = race(core, "p", version, claimers=[f"m{round_}a", f"m{round_}b"])

        assert sorted(outcomes.values()) == [200, 409]
        winner = next(who for who, code in outcomes.items() if code == 200)
        assert cluster.pod(PARKED, "p")["metadata"]["labels"]["claimed-by"] == winner
    assert cluster.conflicts() == 5


def test_selectors_filter_lists(cluster: FakeCluster, core: CoreV1Api) -> None:
    pods = {
        "a": {"pool": "p", "state": "warm"},
        "b": {"pool": "p", "state": "claimed"},
        "c": {"pool": "q"},
        "d": {},
    }
    for name, labels in pods.items():
        cluster.create_pod(PARKED, pod_body(name, labels=labels))

    def names(**selectors: str) -> list[str]:
        return [p.metadata.name for p in core.list_namespaced_pod(PARKED, **selectors).items]

    assert names(label_selector="pool=p") == ["a", "b"]
    assert names(label_selector="pool==p,state=warm") == ["a"]
    assert names(label_selector="pool!=p") == ["c", "d"]
    assert names(label_selector="state") == ["a", "b"]
    assert names(label_selector="!state") == ["c", "d"]
    assert names(label_selector="pool in (p,q),state notin (warm)") == ["b", "c"]
    assert names(field_selector="metadata.name=c") == ["c"]
    assert names() == ["a", "b", "c", "d"]
    assert names(label_selector="pool=p") == [
        p["metadata"]["name"] for p in cluster.pods(PARKED, {"pool": "p"})
    ]
    listed = core.list_namespaced_pod(PARKED)
    newest = max(int(p.metadata.resource_version) for p in listed.items)
    assert int(listed.metadata.resource_version) == newest
    with pytest.raises(ApiException) as caught:
        names(label_selector="pool in p")
    assert caught.value.status == 400


def test_patches_deletes_and_errors_follow_the_api_server(
    cluster: FakeCluster, core: CoreV1Api
) -> None:
    cluster.create_pod(PARKED, pod_body("p", labels={"keep": "1", "drop": "1"}))

    patched = core.patch_namespaced_pod(
        "p", PARKED, {"metadata": {"labels": {"drop": None, "new": "1"}}}, _content_type=MERGE
    )
    assert patched.metadata.labels == {"keep": "1", "new": "1"}
    # The main resource ignores status (a no-op write keeps the version); the subresource takes it.
    same = core.patch_namespaced_pod("p", PARKED, {"status": {"phase": "Running"}})
    assert (same.status.phase, same.metadata.resource_version) == (
        "Pending",
        patched.metadata.resource_version,
    )
    assert (
        core.patch_namespaced_pod_status(
            "p", PARKED, {"status": {"phase": "Succeeded"}}
        ).status.phase
        == "Succeeded"
    )
    annotated = core.patch_namespaced_pod(
        "p", PARKED, [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}]
    )
    assert annotated.metadata.annotations == {"a": "b"}

    def status_of(call: Any, *args: Any, **kwargs: Any) -> tuple[int, str]:
        with pytest.raises(ApiException) as caught:
            call(*args, **kwargs)
        return caught.value.status, json.loads(caught.value.body)["reason"]

    bad_label = {"metadata": {"labels": {"at": "12:00"}}}
    assert status_of(core.patch_namespaced_pod, "p", PARKED, bad_label, _content_type=MERGE) == (
        422,
        "Invalid",
    )
    new_env = {"spec": {"containers": [{"name": "executor", "env": [{"name": "X", "value": "1"}]}]}}
    assert status_of(core.patch_namespaced_pod, "p", PARKED, new_env) == (422, "Invalid")
    assert status_of(core.create_namespaced_pod, PARKED, pod_body("p")) == (409, "AlreadyExists")
    assert status_of(core.read_namespaced_pod, "nope", PARKED) == (404, "NotFound")
    precondition = {"preconditions": {"resourceVersion": "1"}}
    assert status_of(core.delete_namespaced_pod, "p", PARKED, body=precondition) == (
        409,
        "Conflict",
    )

    generated = pod_body("")
    generated["metadata"] = {"generateName": "sandbox-"}
    assert core.create_namespaced_pod(PARKED, generated).metadata.name.startswith("sandbox-")
    core.delete_namespaced_pod("p", PARKED)
    assert cluster.pod(PARKED, "p") is None
    assert status_of(core.delete_namespaced_pod, "p", PARKED) == (404, "NotFound")


def test_a_watch_resumes_after_a_resource_version_and_reports_pods_leaving_its_selector(
    cluster: FakeCluster, core: CoreV1Api
) -> None:
    cluster.create_pod(PARKED, pod_body("a", labels={"state": "warm"}))
    version = core.list_namespaced_pod(
        PARKED, label_selector="state=warm"
    ).metadata.resource_version
    cluster.create_pod(PARKED, pod_body("b", labels={"state": "warm"}))
    core.patch_namespaced_pod(
        "a", PARKED, {"metadata": {"labels": {"state": "claimed"}}}, _content_type=MERGE
    )
    core.delete_namespaced_pod("b", PARKED)

    def watch(**kwargs: Any) -> list[tuple[str, str]]:
        stream = kubernetes.watch.Watch().stream(
            core.list_namespaced_pod,
            PARKED,
            label_selector="state=warm",
            timeout_seconds=1,
            _request_timeout=10,
            **kwargs,
        )
        return [(e["type"], e["raw_object"]["metadata"].get("name", "")) for e in stream]

    assert watch(resource_version=version) == [("ADDED", "b"), ("DELETED", "a"), ("DELETED", "b")]
    assert watch() == []  # nothing matches now
    marks = watch(resource_version=version, allow_watch_bookmarks=True)
    assert marks[-1][0] == "BOOKMARK"
    cluster.expire_watch_history()
    with pytest.raises(ApiException) as caught:
        watch(resource_version=version)
    assert caught.value.status == 410


def test_deleting_a_pod_kills_its_executor(cluster: FakeCluster, core: CoreV1Api) -> None:
    ip = start_ready_pod(cluster, core, "p")
    assert cluster.executors_running() == 1

    core.delete_namespaced_pod("p", SANDBOXES)

    assert cluster.pod(SANDBOXES, "p") is None  # gone at once
    cluster.wait_for(lambda: cluster.executors_running() == 0, what="the executor killed")
    assert refused(ip)


def test_a_killed_pod_fails_and_stays_until_deleted(cluster: FakeCluster, core: CoreV1Api) -> None:
    ip = start_ready_pod(cluster, core, "p")

    cluster.kill_pod(SANDBOXES, "p")

    pod = core.read_namespaced_pod("p", SANDBOXES)
    assert pod.status.phase == "Failed"
    assert {c.type: c.status for c in pod.status.conditions}["Ready"] == "False"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 137
    assert cluster.executors_running() == 0
    assert refused(ip)
    assert "harness-token" not in cluster.pod_log(SANDBOXES, "p")


def test_a_paused_kubelet_leaves_pods_pending_and_closing_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    cluster = FakeCluster(tmp_path, kubelet_namespaces=[SANDBOXES])
    cluster.start()
    cluster.pause_kubelet()
    cluster.create_pod(SANDBOXES, pod_body("p"))
    assert cluster.pod(SANDBOXES, "p")["status"] == {"phase": "Pending"}
    cluster.resume_kubelet()
    pod = cluster.wait_for(
        lambda: (p := cluster.pod(SANDBOXES, "p")) and is_ready(p) and p, timeout=20, what="ready"
    )

    cluster.close()
    cluster.close()  # idempotent

    assert refused(pod["status"]["podIP"])
    assert not [t for t in threading.enumerate() if t.name == "fake-kubernetes"]
    with pytest.raises(RuntimeError, match="not running"):
        cluster.pods(SANDBOXES)
