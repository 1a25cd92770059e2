"""Temporal is the default engine, and a worker needs no default model: ``skillweave worker``
with no ``MODEL__`` setting starts and says each run must name its model; ``skillweave run``
(no ``--engine``) leaves the model to the worker, so a run that names none fails at once, for
good (no retry loop), saying why, and a run that names a profile runs on it. A namespace that
does not exist is one line saying how to create it. Real subprocesses on the suite's Temporal
dev server."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.engines.contract import store_task_queue
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import Manager, eventually
from tests.integration.temporal.harness import Stack, unique
from tests.integration.temporal.test_worker_crash import WorkerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]


@asynccontextmanager
async def no_model_worker(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> AsyncIterator[dict[str, str]]:
    """``skillweave worker`` with no default model (and a profile ``local``) on a task queue of
    its own; yields the environment a CLI on the same server, queue and store uses."""
    token = secrets.token_urlsafe(16)
    store = LocalArtifactStore(tmp_path / "store")
    script = tmp_path / "local.yaml"
    script.write_text("model: local\nturns:\n  - say: answered by local\n", encoding="utf-8")
    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr(token)})
    shared = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "WORKFLOW__TEMPORAL_ADDRESS": stack.temporal_address,
        "WORKFLOW__TASK_QUEUE": unique("no-model"),
        "STORAGE__LOCAL_DIR": str(store.root),
        "SKILLS__DIRS": os.pathsep.join(str(d) for d in skill_dirs),
        "MODEL__PROFILES__LOCAL__PROVIDER": "scripted",
        "MODEL__PROFILES__LOCAL__NAME": str(script),
    }
    async with Manager.serving(settings, store=store) as manager:
        env = {**shared, "SANDBOX__MANAGER_URL": manager.url, "SANDBOX__MANAGER_TOKEN": token}
        (tmp_path / "worker").mkdir()
        worker = WorkerProcess(stack.client, env, skill_dirs, tmp_path / "worker")
        await worker.start()
        try:
            # The worker's start-up lines follow its first poll (the readiness above): awaited.
            def started_said() -> str:
                log = " ".join(worker.log().split())
                return log if "model none (each run names its own)" in log else ""

            log = await eventually(started_said, timeout=30, what="the worker's start-up lines")
            assert "no default model is configured (MODEL__PROVIDER, MODEL__NAME); each run" in log
            yield shared
        finally:
            worker.stop()


def skillweave(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_a_worker_without_a_default_model_executes_runs_that_name_theirs(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with no_model_worker(stack, skill_dirs, tmp_path) as env:
        # No --engine: Temporal is the default. The run names no model: the worker has none.
        began = time.monotonic()
        bare = await asyncio.to_thread(skillweave, env, "run", "Say hi", cwd=tmp_path)
        took = time.monotonic() - began
        assert bare.returncode == 1, bare.stdout + bare.stderr
        said = " ".join((bare.stdout + bare.stderr).split())
        assert "engine temporal at" in said
        # The header names the queue the run runs on: the configured one routed to its store.
        store = LocalArtifactStore(Path(env["STORAGE__LOCAL_DIR"]))
        routed = store_task_queue(env["WORKFLOW__TASK_QUEUE"], await store_identity(store))
        assert f"task queue {routed!r} (the worker's default model)" in said
        assert "the run names no model and this worker has none by default" in said
        assert took < 60  # failed for good at once, not retried for minutes

        named = await asyncio.to_thread(
            skillweave, env, "run", "Say hi", "--model", "local", cwd=tmp_path
        )
        assert named.returncode == 0, named.stdout + named.stderr
        assert "answered by local" in named.stdout


async def test_a_namespace_that_does_not_exist_is_one_line(stack: Stack, tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "WORKFLOW__TEMPORAL_ADDRESS": stack.temporal_address,
        "WORKFLOW__NAMESPACE": "no-such-namespace",
    }
    address = stack.temporal_address
    missing = (
        f"error: namespace 'no-such-namespace' does not exist on Temporal at {address}: create"
        f" it with `temporal operator namespace create --namespace no-such-namespace --address"
        f" {address}` (then `skillweave temporal setup`), or set WORKFLOW__NAMESPACE to one that"
        " exists"
    )
    for args in (("run", "anything"), ("temporal", "setup"), ("runs", "list")):
        done = await asyncio.to_thread(skillweave, env, *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        assert missing in " ".join(done.stderr.split()), args
        assert "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) <= 3, done.stderr
