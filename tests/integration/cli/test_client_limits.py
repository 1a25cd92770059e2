"""`run` on the Temporal engine says, in one line, that the workers' limits it sets have no
effect (a run runs under its worker's); on the direct engine, its own worker, they are its
own. Real processes: the ``skillweave`` command as a user types it (issue 41, item 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.cli.temporal_server import free_port

pytestmark = pytest.mark.timeout(120)

SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))


def _run(tmp_path: Path, *argv: str, **values: str) -> str:
    """`skillweave run` to its end (Temporal is not reachable: the run never starts there)."""
    script = tmp_path / "model.yaml"
    script.write_text("turns: [{say: hello}]\n")
    (tmp_path / "no-skills").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": f'["{tmp_path / "no-skills"}"]',
        "SANDBOX__ISOLATION": "none",
        "MODEL__PROVIDER": "scripted",
        "MODEL__NAME": str(script),
        "WORKFLOW__TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        **values,
    }
    done = subprocess.run(
        [SKILLWEAVE, "run", *argv, "say hello"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    return done.stderr + done.stdout


def test_a_client_that_sets_a_workers_limit_is_told_once(tmp_path: Path) -> None:
    said = _run(tmp_path, "--engine", "temporal", WORKFLOW__SCRIPT_TIMEOUT_SECONDS="2.5")
    assert said.count("has no effect here") == 1, said
    assert (
        "agree: WORKFLOW__SCRIPT_TIMEOUT_SECONDS has no effect here: a run runs under the limits "
        "of the worker that runs it (the workers' settings); set it on the workers, not on a "
        "client"
    ) in said
    # It is a warning: the command went on to start the run (and found no Temporal).
    assert "cannot reach Temporal" in said


def test_a_client_that_leaves_them_alone_is_told_nothing(tmp_path: Path) -> None:
    said = _run(tmp_path, "--engine", "temporal")
    assert "agree:" not in said
    assert "cannot reach Temporal" in said


def test_the_direct_engine_runs_under_its_own_limits_and_is_told_nothing(tmp_path: Path) -> None:
    said = _run(tmp_path, "--engine", "direct", WORKFLOW__SCRIPT_TIMEOUT_SECONDS="2.5")
    assert "has no effect" not in said
    assert "hello" in said
