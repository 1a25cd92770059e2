"""Managers (``tests.integration.harness``) with the kubernetes backend, against the fake
cluster (kmock + a test kubelet that runs a real executor per pod on a 127.x address), over a
local artifact store; and a manager in a process of its own, to be killed."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.kubernetes import LABEL_POOL
from skillweave.config import Settings
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager, StartManager
from tests.integration.kubernetes.cluster import FakeCluster

TOKEN = "k8s-manager-test-token"
NAMESPACE = "skillweave-sandboxes"
POOL = "test"

SCRIPTS = {
    "where.py": "import os\nprint(os.getcwd())\n",
    "nap.py": "import sys, time\ntime.sleep(float(sys.argv[1]))\nprint('rested')\n",
    "copy.py": textwrap.dedent(
        """
        import pathlib
        data = pathlib.Path('inputs/in.txt').read_bytes()
        pathlib.Path('outputs').mkdir(exist_ok=True)
        pathlib.Path('outputs/out.txt').write_bytes(data[::-1])
        print(len(data))
        """
    ),
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[FakeCluster]:
    with FakeCluster(tmp_path / "cluster") as fake:
        yield fake


@pytest.fixture
def library(tmp_path: Path) -> SkillRegistry:
    root = tmp_path / "skills"
    write_skill(
        root / "probe",
        description="Test scripts for the kubernetes pool.",
        files={f"scripts/{name}": code for name, code in SCRIPTS.items()},
    )
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def kubernetes_settings(
    cluster: FakeCluster, *, manager_id: str, target: int, maximum: int, **overrides: Any
) -> Settings:
    claim_timeout = overrides.pop("claim_timeout", 20.0)
    k8s = {
        "namespace": NAMESPACE,
        "pool": POOL,
        "kubeconfig": str(cluster.kubeconfig),
        "manager_id": manager_id,
        "lease_seconds": 3.0,
        "reap_interval_seconds": 0.5,
        **overrides,
    }
    return Settings(
        _env_file=None,
        sandbox={
            "backend": "kubernetes",
            "isolation": "none",  # as the sandbox pod template declares
            "manager_token": SecretStr(TOKEN),
            "pool_target": target,
            "pool_max": maximum,
            "claim_timeout_seconds": claim_timeout,
            "start_timeout_seconds": 30.0,
            "kubernetes": k8s,
        },
    )


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


@pytest.fixture
async def start_manager(
    cluster: FakeCluster, store: LocalArtifactStore, library: SkillRegistry
) -> AsyncIterator[StartManager]:
    """Start managers with the kubernetes backend on the fake cluster (``manager_id``, pool
    ``target`` and ``maximum``, other settings of :func:`kubernetes_settings` as `overrides`);
    every one is stopped at the end."""
    await publish_library(store, library)
    async with contextlib.AsyncExitStack() as started:

        async def start(
            *, manager_id: str = "manager-a", target: int = 2, maximum: int = 6, **overrides: Any
        ) -> Manager:
            settings = kubernetes_settings(
                cluster, manager_id=manager_id, target=target, maximum=maximum, **overrides
            )
            return await started.enter_async_context(
                Manager.serving(settings, store=store, registry=library)
            )

        yield start


def pool_pods(cluster: FakeCluster) -> list[dict[str, Any]]:
    return cluster.pods(NAMESPACE, {LABEL_POOL: POOL})


def state_of(pod: dict[str, Any]) -> str:
    return pod["metadata"]["labels"].get("skillweave.dev/state", "")


def is_ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def warm_ready(cluster: FakeCluster, owner: str | None = None) -> list[str]:
    return [
        pod["metadata"]["name"]
        for pod in pool_pods(cluster)
        if state_of(pod) == "warm"
        and is_ready(pod)
        and (owner is None or pod["metadata"]["labels"].get("skillweave.dev/owner") == owner)
    ]


# --- a manager in a process of its own (to be killed) ----------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class ManagerProcess:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def spawn_manager(
    cluster: FakeCluster,
    *,
    skills: Path,
    store: Path,
    manager_id: str,
    target: int,
    maximum: int,
    log: Path,
) -> ManagerProcess:
    """``skillweave manager`` with the kubernetes backend, as a process of its own."""
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "SANDBOX__BACKEND": "kubernetes",
        "SANDBOX__ISOLATION": "none",
        "SANDBOX__MANAGER_TOKEN": TOKEN,
        "SANDBOX__HOST": "127.0.0.1",
        "SANDBOX__PORT": str(port),
        "SANDBOX__POOL_TARGET": str(target),
        "SANDBOX__POOL_MAX": str(maximum),
        "SANDBOX__START_TIMEOUT_SECONDS": "30",
        "SANDBOX__KUBERNETES__NAMESPACE": NAMESPACE,
        "SANDBOX__KUBERNETES__POOL": POOL,
        "SANDBOX__KUBERNETES__KUBECONFIG": str(cluster.kubeconfig),
        "SANDBOX__KUBERNETES__MANAGER_ID": manager_id,
        "SANDBOX__KUBERNETES__LEASE_SECONDS": "3",
        "SANDBOX__KUBERNETES__REAP_INTERVAL_SECONDS": "0.5",
        "SKILLS__DIRS": f'["{skills}"]',
        "STORAGE__LOCAL_DIR": str(store),
    }
    handle = log.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "skillweave.cli", "manager"],
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    handle.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                return ManagerProcess(url, process, log)
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the manager did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)
