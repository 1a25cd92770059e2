"""``skillweave skills eval`` on Temporal as a user types it (a dev server and a ``skillweave
worker``, each command a process of its own): Ctrl-C leaves the batch running and says how to
cancel it, ``--cancel`` cancels it (its report written, ``cancelled``: ``--show`` exits 1),
``--resume`` runs it to its report, and ``--list`` shows it; and the API on Temporal
(``skillweave api`` and a worker) starts a batch, answers its progress, then its report."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skillweave.api.skill_evals import CSP
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.cli.test_api_without_a_default_model import _env as api_env
from tests.integration.cli.test_api_without_a_default_model import api
from tests.integration.harness import eventually
from tests.integration.temporal.harness import start_dev_server, unique
from tests.integration.temporal.test_worker_crash import WorkerProcess

pytestmark = pytest.mark.timeout(300)

SKILL = "greeter"
EVALS = {
    "skill_name": SKILL,
    "evals": [
        {"id": 1, "prompt": "Greet Ada.", "checks": [{"type": "answer_contains", "text": "Hi"}]},
        {"id": 2, "prompt": "Greet Bob.", "checks": [{"type": "answer_contains", "text": "Hi"}]},
    ],
}


def _eval(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "skills", "eval", SKILL, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


async def test_a_temporal_batch_outlives_ctrl_c_and_is_cancelled_and_resumed(
    tmp_path: Path,
) -> None:
    library = tmp_path / "library"
    write_skill(
        library / SKILL,
        description="Greets people. Use when someone is to be greeted.",
        files={"evals/evals.json": json.dumps(EVALS)},
    )
    slow = tmp_path / "slow.yaml"
    slow.write_text("turns: [{say: 'Hi there', delay_seconds: 4}]\n", encoding="utf-8")
    server = await start_dev_server(LocalArtifactStore(tmp_path / "server"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(library)]),
        "WORKFLOW__TEMPORAL_ADDRESS": server.client.service_client.config.target_host,
        "WORKFLOW__TASK_QUEUE": unique("cli-evals"),
        "WORKFLOW__EXECUTION_ENGINE": "temporal",
        "MODEL__SCRIPTS_DIR": str(tmp_path),
        "COLUMNS": "200",
    }
    (tmp_path / "worker").mkdir()
    worker = WorkerProcess(server.client, env, [library], tmp_path / "worker")
    await worker.start()
    try:
        running = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skillweave.cli",
                "skills",
                "eval",
                SKILL,
                "--model",
                f"scripted:{slow}",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert running.stderr is not None
        seen = ""
        deadline = time.monotonic() + 60
        while "jobs graded" not in seen and time.monotonic() < deadline:
            seen += await asyncio.to_thread(running.stderr.readline)
        running.send_signal(signal.SIGINT)
        _, rest = await asyncio.to_thread(running.communicate, timeout=60)
        assert running.returncode == 130, seen + rest
        batch_id = seen.split("eval batch ", 1)[1].split(" ", 1)[0]
        said = " ".join(rest.split())
        assert f"eval batch {batch_id} keeps running on Temporal" in said
        assert f"skillweave skills eval {SKILL} --cancel {batch_id}" in said

        cancelled = await asyncio.to_thread(_eval, env, tmp_path, "--cancel", batch_id)
        assert cancelled.returncode == 0, cancelled.stderr
        assert f"cancelled eval batch {batch_id}" in cancelled.stderr
        shown = await asyncio.to_thread(_eval, env, tmp_path, "--show", batch_id, "--json")
        assert shown.returncode == 1, shown.stderr
        assert json.loads(shown.stdout)["status"] == "cancelled"

        resumed = await asyncio.to_thread(_eval, env, tmp_path, "--resume", batch_id, "--json")
        assert resumed.returncode == 0, resumed.stderr + worker.log()
        report = json.loads(resumed.stdout)
        assert (report["batch_id"], report["status"], len(report["jobs"])) == (
            batch_id,
            "completed",
            2,
        )
        assert [v["pass_rate"] for v in report["variants"]] == [1.0]
        assert "engine temporal" in resumed.stderr

        listed = await asyncio.to_thread(_eval, env, tmp_path, "--list", "--json")
        assert [row["batch_id"] for row in json.loads(listed.stdout)] == [batch_id]
    finally:
        worker.stop()
        await server.shutdown()


async def test_the_api_runs_a_batch_on_temporal_and_answers_its_progress_then_report(
    tmp_path: Path,
) -> None:
    write_skill(
        tmp_path / "skills" / SKILL,
        description="Greets people. Use when someone is to be greeted.",
        files={"evals/evals.json": json.dumps(EVALS)},
    )
    slow = tmp_path / "slow.yaml"
    slow.write_text("turns: [{say: 'Hi there', delay_seconds: 2}]\n", encoding="utf-8")
    server = await start_dev_server(LocalArtifactStore(tmp_path / "server"))
    temporal = {
        "WORKFLOW__TEMPORAL_ADDRESS": server.client.service_client.config.target_host,
        "WORKFLOW__TASK_QUEUE": unique("api-evals"),
        "WORKFLOW__EXECUTION_ENGINE": "temporal",
        "MODEL__SCRIPTS_DIR": str(tmp_path),
    }
    (tmp_path / "worker").mkdir()
    worker = WorkerProcess(
        server.client, api_env(tmp_path, **temporal), [tmp_path / "skills"], tmp_path / "worker"
    )
    await worker.start()
    try:
        async with api(tmp_path, **temporal) as (client, _):
            started = await client.post(
                f"/v1/skills/{SKILL}/evals", json={"model": f"scripted:{slow}", "repeat": 2}
            )
            assert started.status_code == 202, started.text
            url = started.json()["status_url"]

            async def running() -> dict[str, Any] | None:
                body: dict[str, Any] = (await client.get(url)).json()
                return body if body["status"] == "running" and body["progress"] else None

            progress = (await eventually(running, timeout=60))["progress"]
            assert progress["jobs"] == 4

            async def reported() -> dict[str, Any] | None:
                body: dict[str, Any] = (await client.get(url)).json()
                return body if body["status"] not in ("running", "stopped") else None

            report = await eventually(reported, timeout=120)
            assert (report["status"], len(report["jobs"])) == ("completed", 4), worker.log()
            page = await client.get(url, params={"format": "html"})
            assert page.headers["content-security-policy"] == CSP
            listed = (await client.get(f"/v1/skills/{SKILL}/evals")).json()
            assert [row["batch_id"] for row in listed] == [started.json()["batch_id"]]
    finally:
        worker.stop()
        await server.shutdown()
