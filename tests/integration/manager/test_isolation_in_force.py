"""Every surface names the isolation mode in force, not the setting (issue 39, item 5): a
manager's /healthz and ``skillweave_sandbox_isolation``, ``doctor``, and the line ``run`` prints,
each resolved by the executor's one rule (``sandbox_executor.isolation.plan_isolation``), also
on a host where bubblewrap is missing (the namespaces fallback). An in-process manager's id
names the port it really listens on."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from sandbox_executor.isolation import probe_isolation
from sandbox_executor.settings import ExecutorSettings
from skillweave.cli.compose import open_manager
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import REPO
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(120)

TOKEN = "t" * 24
FALLBACK = (
    "scripts contained by namespaces (the fallback where bubblewrap does not run) with a"
    " syscall filter (SANDBOX__ISOLATION=auto)"
)


def _mode_here() -> str:
    return probe_isolation(ExecutorSettings(isolation="auto")).isolation


async def test_healthz_and_the_metric_name_the_mode_in_force(tmp_path: Path) -> None:
    """``auto`` is the setting; what /healthz and the metric say is what the pool's executors
    settled on, known before the manager serves."""
    expected = _mode_here()
    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr(TOKEN)})
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store) as manager:
        health = (await manager.http.get("/healthz")).json()
        in_force = await manager.metric(
            "skillweave_sandbox_isolation", mode=expected, setting="auto"
        )
        as_setting = await manager.metric("skillweave_sandbox_isolation", mode="auto")
    assert health["isolation"] == expected
    assert health["isolation_setting"] == "auto"
    assert health["isolation_note"] == (
        f"scripts contained by {expected}"
        + (" (the fallback where bubblewrap does not run)" if expected == "namespaces" else "")
        + " with a syscall filter (SANDBOX__ISOLATION=auto)"
    )
    assert in_force == 1
    assert as_setting == 0


async def test_an_in_process_manager_is_named_by_the_port_it_listens_on(tmp_path: Path) -> None:
    """``run``, ``dev`` and ``demo`` start their manager on a free loopback port: its id is
    host name and that port, not the configured SANDBOX__PORT (8090)."""
    settings = Settings(
        _env_file=None,
        storage={"local_dir": str(tmp_path / "store")},
        sandbox={"isolation": "none", "pool_target": 0},
    )
    async with open_manager(settings, pool_target=0) as manager, httpx.AsyncClient() as client:
        health = (await client.get(f"{manager.url}/healthz")).json()
    port = int(manager.url.rsplit(":", 1)[1])
    assert port != 8090
    assert health["manager_id"] == f"{socket.gethostname()}:{port}"
    assert health["isolation"] == "none"


# --- a host without bubblewrap ----------------------------------------------------------------


def _without_bubblewrap() -> list[str]:
    """A command prefix that runs the rest with bubblewrap hidden: in a mount namespace of
    its own, an empty, non-executable file is bound over the binary."""
    bwrap = shutil.which("bwrap")
    if os.geteuid() != 0 or bwrap is None or shutil.which("unshare") is None:
        pytest.skip("needs root, unshare and a bubblewrap to hide")
    if _mode_here() != "bubblewrap":
        pytest.skip("bubblewrap does not run here anyway")
    empty = Path("/tmp/nobwrap-empty")
    if not empty.is_file() or empty.stat().st_size:
        empty.write_bytes(b"")
    empty.chmod(0o644)
    hide = f'mount --bind {empty} {os.path.realpath(bwrap)} && exec "$0" "$@"'
    return ["unshare", "-m", "sh", "-c", hide]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "no-skills").mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-skills")]),
        **extra,
    }


@pytest.fixture
def hidden(tmp_path: Path) -> list[str]:
    return [*_without_bubblewrap(), sys.executable, "-m", "skillweave.cli"]


def test_doctor_names_the_fallback_when_bubblewrap_is_missing(
    tmp_path: Path, hidden: list[str]
) -> None:
    done = subprocess.run(
        [*hidden, "doctor", "--json"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )
    checks = {c["check"]: (c["status"], c["detail"]) for c in json.loads(done.stdout)}
    assert checks["isolation"] == ("ok", FALLBACK), done.stderr


@pytest.fixture
def manager_without_bubblewrap(tmp_path: Path, hidden: list[str]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = _env(tmp_path, SANDBOX__MANAGER_TOKEN=TOKEN, SANDBOX__PORT=str(port))
    log = (tmp_path / "manager.log").open("wb")
    process = subprocess.Popen([*hidden, "manager"], env=env, stdout=log, stderr=log, cwd=REPO)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_a_manager_without_bubblewrap_says_namespaces_everywhere(
    tmp_path: Path, manager_without_bubblewrap: str
) -> None:
    url = manager_without_bubblewrap
    deadline = time.monotonic() + 60
    while True:
        try:
            health = httpx.get(f"{url}/healthz", timeout=2).json()
            break
        except httpx.HTTPError:
            log = (tmp_path / "manager.log").read_text(errors="replace")
            assert time.monotonic() < deadline, log
            time.sleep(0.2)
    metrics = httpx.get(
        f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
    ).text
    log = (tmp_path / "manager.log").read_text(errors="replace")
    assert (health["isolation"], health["isolation_setting"]) == ("namespaces", "auto")
    assert health["isolation_note"] == FALLBACK
    assert 'skillweave_sandbox_isolation{mode="namespaces",setting="auto"} 1.0' in metrics
    assert f"sandbox isolation: {FALLBACK}" in log

    # `run` (its scripts on this manager) says the same.
    (tmp_path / "answer.yaml").write_text("turns:\n  - say: done\n", encoding="utf-8")
    env = _env(
        tmp_path,
        SANDBOX__MANAGER_URL=url,
        SANDBOX__MANAGER_TOKEN=TOKEN,
        WORKFLOW__EXECUTION_ENGINE="direct",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillweave.cli",
            "run",
            "--engine",
            "direct",
            "--model",
            f"scripted:{tmp_path / 'answer.yaml'}",
            "say done",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert FALLBACK in " ".join(done.stderr.split()), done.stderr

    # And `doctor` of a process whose scripts run there.
    checked = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )
    checks = {c["check"]: (c["status"], c["detail"]) for c in json.loads(checked.stdout)}
    assert checks["isolation"] == ("ok", f"{FALLBACK} (the manager at SANDBOX__MANAGER_URL)")
