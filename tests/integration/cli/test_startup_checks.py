"""The doctor's checks at the start of the long-running commands and of a run (issue 28,
part 1), with the misconfigurations that stop them: a manager that refuses the token, a
manager on another store, a script limit that does not fit in a script step. What may pass by
itself (a manager not started yet) is said and the command goes on. Real processes: the
``skillweave`` command against a real manager on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.cli.temporal_server import free_port
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(180)

SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))
TOKEN = "the-managers-token"


def environment(tmp_path: Path, **values: str) -> dict[str, str]:
    """A whole environment: this machine's PATH, a home of the test's, a scripted model, and
    `values`."""
    script = tmp_path / "model.yaml"
    script.write_text("turns: [{say: hello}]\n")
    (tmp_path / "no-skills").mkdir(exist_ok=True)  # an empty library (a missing root is refused)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-skills")]),
        "SANDBOX__ISOLATION": "none",
        "SANDBOX__MANAGER_TOKEN": TOKEN,
        "MODEL__NAME": str(script),
        **values,
    }


async def skillweave(env: dict[str, str], *argv: str, seconds: float = 60) -> tuple[int, str]:
    """Run a command to its end (a service that passes its checks is stopped once it says so)."""

    def run() -> tuple[int, str]:
        process = subprocess.Popen(
            [SKILLWEAVE, *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            said, _ = process.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            said, _ = process.communicate()
            return -1, said
        return process.returncode, said

    return await asyncio.to_thread(run)


def manager_settings(timeout: float = 60) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(TOKEN), "timeout_seconds": timeout},
    )


async def test_a_worker_whose_manager_refuses_its_token_does_not_start(tmp_path: Path) -> None:
    async with Manager.serving(
        manager_settings(), store=LocalArtifactStore(tmp_path / "store")
    ) as m:
        env = environment(
            tmp_path,
            SANDBOX__MANAGER_URL=m.url,
            SANDBOX__MANAGER_TOKEN="not-the-token",
            WORKFLOW__TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
        )
        code, said = await skillweave(env, "worker")
    assert code == 1, said
    assert "error: worker not started: manager:" in said
    assert "refuses the token: SANDBOX__MANAGER_TOKEN must be the manager's" in said
    # Temporal not answering yet is said, and would not have stopped it.
    assert "warn temporal:" in said


async def test_a_worker_on_another_store_than_its_manager_does_not_start(tmp_path: Path) -> None:
    theirs = LocalArtifactStore(tmp_path / "manager-store")
    async with Manager.serving(manager_settings(), store=theirs) as manager:
        env = environment(
            tmp_path,
            SANDBOX__MANAGER_URL=manager.url,
            WORKFLOW__TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
        )
        code, said = await skillweave(env, "worker")
    ours = await store_identity(LocalArtifactStore(tmp_path / "store"))
    assert code == 1, said
    assert "error: worker not started: agree:" in said
    assert (
        f"the manager works on the store {await store_identity(theirs)}, this process on {ours}"
        in said
    )


async def test_a_script_limit_that_does_not_fit_a_step_stops_the_worker(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")  # the same store: only the limit is wrong
    async with Manager.serving(manager_settings(timeout=1200), store=store) as manager:
        env = environment(
            tmp_path,
            SANDBOX__MANAGER_URL=manager.url,
            WORKFLOW__TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
            WORKFLOW__SCRIPT_TIMEOUT_SECONDS="900",
        )
        code, said = await skillweave(env, "worker")
    assert code == 1, said
    assert (
        "the manager's SANDBOX__TIMEOUT_SECONDS (1200.0 s) is not under "
        "WORKFLOW__SCRIPT_TIMEOUT_SECONDS (900 s)"
    ) in said


async def test_a_direct_run_is_not_started_when_its_manager_refuses_the_token(
    tmp_path: Path,
) -> None:
    async with Manager.serving(
        manager_settings(), store=LocalArtifactStore(tmp_path / "store")
    ) as m:
        env = environment(
            tmp_path, SANDBOX__MANAGER_URL=m.url, SANDBOX__MANAGER_TOKEN="not-the-token"
        )
        code, said = await skillweave(env, "run", "--engine", "direct", "say hello")
    assert code == 1, said
    assert "error: the run was not started: manager:" in said
    assert "refuses the token" in said


async def test_a_manager_down_at_start_is_said_and_the_mcp_server_goes_on(tmp_path: Path) -> None:
    env = environment(tmp_path, SANDBOX__MANAGER_URL=f"http://127.0.0.1:{free_port()}")

    def serve() -> tuple[int | None, str]:
        process = subprocess.Popen(
            [SKILLWEAVE, "mcp"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stderr is not None
        said = ""
        for line in process.stderr:  # its checks, then it serves (stdin open)
            said += line
            if "agree:" in line:
                break
        try:
            return process.wait(timeout=3), said  # still serving: TimeoutExpired
        except subprocess.TimeoutExpired:
            return None, said
        finally:
            process.kill()
            process.communicate()

    code, said = await asyncio.to_thread(serve)
    assert code is None, said
    assert "warn manager: cannot reach" in said
    assert "warn agree: not compared" in said
