"""`skillweave sandbox run` as a user runs it: a subprocess that starts its own manager."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


def _sandbox_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`skillweave sandbox run ARGS` with a store under `tmp_path` and the bundled skills."""
    env = {
        **os.environ,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": '["bundled"]',
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "sandbox", "run", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
        check=False,
    )


def test_sandbox_run_profiles_a_csv_and_copies_the_output(tmp_path: Path) -> None:
    data = tmp_path / "sales.csv"
    data.write_text("region,units\nnorth,3\nsouth,5\n")
    done = _sandbox_run(
        tmp_path,
        "csv-profiler",
        "scripts/profile_csv.py",
        "--input",
        str(data),
        "--out",
        str(tmp_path / "out"),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded"
    assert [o["path"] for o in result["outputs"]] == ["stats.json"]
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["rows"] == 2
    stored = tmp_path / "store" / result["outputs"][0]["ref"]["key"]
    assert stored.read_bytes() == (tmp_path / "out" / "stats.json").read_bytes()


def test_sandbox_run_reports_a_failing_script(tmp_path: Path) -> None:
    done = _sandbox_run(tmp_path, "csv-profiler", "scripts/profile_csv.py")
    assert done.returncode == 1
    assert "failed: exit" in done.stdout
