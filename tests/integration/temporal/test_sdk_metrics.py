"""A worker serves the Temporal SDK's own metrics (issue 47): with
``OBSERVABILITY__TEMPORAL_METRICS_PORT`` set, a real ``skillweave worker`` serves the SDK's
Prometheus metrics (its cache of runs first: each eviction is a replay to come), and a busy
port stops it at start with one line naming the variable."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager, eventually
from tests.integration.temporal.harness import Stack, unique
from tests.integration.temporal.test_no_default_model import skillweave
from tests.integration.temporal.test_worker_crash import WorkerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

CACHE_METRICS = ("temporal_sticky_cache_size", "temporal_sticky_cache_hit")
"""What the cache of runs shows once a run has taken steps (the eviction counter appears at
the first eviction)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(stack: Stack, skill_dirs: list[Path], tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "local.yaml"
    script.write_text("model: local\nturns:\n  - say: answered by local\n", encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "WORKFLOW__TEMPORAL_ADDRESS": stack.temporal_address,
        "WORKFLOW__TASK_QUEUE": unique("sdk-metrics"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": os.pathsep.join(str(d) for d in skill_dirs),
        "MODEL__PROFILES__LOCAL__PROVIDER": "scripted",
        "MODEL__PROFILES__LOCAL__NAME": str(script),
    }


async def test_a_worker_serves_the_sdks_cache_metrics(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    port = _free_port()
    token = secrets.token_urlsafe(16)
    shared = {
        **_environment(stack, skill_dirs, tmp_path),
        "OBSERVABILITY__TEMPORAL_METRICS_PORT": str(port),
    }
    store = LocalArtifactStore(Path(shared["STORAGE__LOCAL_DIR"]))
    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr(token)})
    async with Manager.serving(settings, store=store) as manager:
        env = {**shared, "SANDBOX__MANAGER_URL": manager.url, "SANDBOX__MANAGER_TOKEN": token}
        (tmp_path / "worker").mkdir()
        worker = WorkerProcess(stack.client, env, skill_dirs, tmp_path / "worker")
        await worker.start()
        try:
            run = await asyncio.to_thread(
                skillweave, env, "run", "Say hi", "--model", "local", cwd=tmp_path
            )
            assert run.returncode == 0, run.stdout + run.stderr

            async def cached() -> str | None:
                async with httpx.AsyncClient() as http:
                    answer = await http.get(f"http://127.0.0.1:{port}/metrics")
                text = answer.text if answer.status_code == 200 else ""
                return text if all(name in text for name in CACHE_METRICS) else None

            text = await eventually(cached, timeout=30, every=0.5, what="the SDK's cache metrics")
            # The run's workflow was cached by this worker (its one task queue's sticky cache).
            assert 'task_queue="' in text
        finally:
            worker.stop()


async def test_a_busy_metrics_port_stops_the_worker_with_one_line(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **_environment(stack, skill_dirs, tmp_path),
            "OBSERVABILITY__TEMPORAL_METRICS_PORT": str(port),
        }
        started = await asyncio.to_thread(skillweave, env, "worker", cwd=tmp_path)
    said = started.stdout + started.stderr
    assert started.returncode == 2, said
    assert "OBSERVABILITY__TEMPORAL_METRICS_PORT: cannot serve the SDK's metrics at" in said
    assert "choose a free port, or 0 to serve none" in said
    assert "Traceback" not in said
