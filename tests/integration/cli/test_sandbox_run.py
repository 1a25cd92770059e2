"""`skillweave sandbox run` as a user runs it: a subprocess that starts its own manager."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_skill
from tests.mcp_manager.environment_support import bwrap_works, python_index

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


@pytest.mark.skipif(not bwrap_works(), reason="environment builds need bubblewrap")
def test_skills_build_prepares_an_environment_once_then_sandbox_run_uses_it(
    tmp_path: Path,
) -> None:
    """`skillweave skills build` as a user runs it: the environment of the skill's declared
    dependencies is built (from a local file index) and stored; a second build finds it; a
    run in a manager that may not build uses it."""
    index = python_index(tmp_path / "index")
    write_skill(
        tmp_path / "skills" / "needs-deps",
        description="Doubles a value with a library.",
        files={
            "requirements.txt": "swdemo-plus==1.0\n",
            "scripts/use.py": "import swdemo_plus\nprint('double', swdemo_plus.DOUBLE)\n",
        },
    )
    env = {
        **os.environ,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "skills")]),
        "SANDBOX__ENVIRONMENTS__FIND_LINKS": json.dumps([str(index)]),
        "SANDBOX__ENVIRONMENTS__NO_INDEX": "true",
    }

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillweave.cli", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            timeout=100,
            check=False,
        )

    built = cli("skills", "build", "needs-deps", "--json")
    assert built.returncode == 0, built.stderr
    first = json.loads(built.stdout)
    assert first["needed"] is True
    assert first["built"] is True
    assert first["dependencies"]["python"] == ["swdemo-plus==1.0"]
    again = cli("skills", "build", "needs-deps")
    assert again.returncode == 0, again.stderr
    assert "needs-deps" in again.stdout
    assert "environment ready, already built" in again.stdout
    stored = list((tmp_path / "store" / "environments" / "needs-deps").rglob("*.tar.gz"))
    assert len(stored) == 1

    ran = cli(
        "sandbox",
        "run",
        "needs-deps",
        "scripts/use.py",
        "--json",
        SANDBOX__ENVIRONMENTS__BUILDS="false",
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["stdout"] == "double 84\n"
