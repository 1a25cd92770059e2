"""The bundled skills' evals as a user runs them (issue 46: "evals for two bundled skills, run
with the scripted model on both engines"): ``skillweave skills eval`` on unit-converter and
log-triage with the scripted playbooks of ``examples/evals/`` (the agent, and a grader that
quotes the run), as subprocesses from the repository's root, on the direct engine and on
Temporal (a dev server and a ``skillweave worker``). With the skill every check and expectation
passes; without it (``--baseline``) none does, each verdict saying why; a pass rate under
``--min-pass-rate`` exits 1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillweave.config import bundled_skills_dir
from skillweave.evals import EVALS_FILE, parse_suite
from skillweave.evals.grading import NOT_IN_EVIDENCE
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import REPO
from tests.integration.temporal.harness import start_dev_server, unique
from tests.integration.temporal.test_worker_crash import WorkerProcess

pytestmark = pytest.mark.timeout(600)

SKILLS = ("unit-converter", "log-triage")
PLAYBOOKS = REPO / "examples" / "evals"


def environment(tmp_path: Path, **values: str) -> dict[str, str]:
    """A whole environment: this machine's PATH, a home and a store of the test's own, the
    bundled skills, no model set, and `values`."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(bundled_skills_dir())]),
        **values,
    }


def skills_eval(
    env: dict[str, str], skill: str, *more: str, grader: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``skillweave skills eval SKILL --baseline`` with the skill's scripted playbooks, typed
    in the repository's root (the playbooks' paths are relative to it)."""
    playbook = PLAYBOOKS / f"{skill}.yaml"
    grading = grader or PLAYBOOKS / f"{skill}-grader.yaml"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "skillweave.cli",
            "skills",
            "eval",
            skill,
            "--baseline",
            "--model",
            f"scripted:{playbook.relative_to(REPO)}",
            "--grader",
            f"scripted:{grading.relative_to(REPO) if grading.is_relative_to(REPO) else grading}",
            "--json",
            *more,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The EvalReport ``--json`` printed: stdout holds it and nothing else."""
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"stdout is not the report:\n{done.stdout}\n{done.stderr}") from None
    return report


def assert_the_skill_helps(
    done: subprocess.CompletedProcess[str], skill: str, *, logs: str = ""
) -> None:
    """The report of a batch of `skill`'s evals played by its playbooks: the skill passes all,
    the baseline nothing, every verdict with its evidence."""
    assert done.returncode == 0, done.stdout + done.stderr + logs
    report = report_of(done)
    suite = parse_suite((bundled_skills_dir() / skill / EVALS_FILE).read_bytes(), source=skill)
    assert (report["skill"], report["status"]) == (skill, "completed"), report["status"]
    rates = {row["variant"]: row["pass_rate"] for row in report["variants"]}
    assert rates == {"skill": 1.0, "baseline": 0.0}, rates
    (difference,) = [row for row in report["differences"] if row["versus"] == "baseline"]
    assert difference["delta"] == pytest.approx(1.0)
    jobs = {(job["job"]["eval_id"], job["job"]["variant"]): job for job in report["jobs"]}
    assert set(jobs) == {(case.id, v) for case in suite.evals for v in ("skill", "baseline")}
    for case in suite.evals:
        with_skill, without = jobs[case.id, "skill"], jobs[case.id, "baseline"]
        for job in (with_skill, without):
            assert job["status"] == "completed", job
            assert job["grade_error"] is None, job
            assert len(job["verdicts"]) == case.graded, job
            assert all(verdict["evidence"].strip() for verdict in job["verdicts"]), job
        assert all(verdict["passed"] for verdict in with_skill["verdicts"]), with_skill
        assert with_skill["script_runs"] >= 1
        assert not any(verdict["passed"] for verdict in without["verdicts"]), without
        assert without["script_runs"] == 0
        # The grader claimed the with-skill run's quotes for the baseline too: not found in
        # what the baseline run said, each claim is a failure saying so.
        graded = [verdict for verdict in without["verdicts"] if verdict["by"] == "grader"]
        assert len(graded) == len(case.expectations)
        assert all(verdict["evidence"].startswith(NOT_IN_EVIDENCE) for verdict in graded)


@pytest.mark.parametrize("skill", SKILLS)
def test_a_bundled_skills_evals_on_the_direct_engine(tmp_path: Path, skill: str) -> None:
    done = skills_eval(environment(tmp_path), skill, "--engine", "direct")
    assert_the_skill_helps(done, skill)


def test_a_pass_rate_under_min_pass_rate_exits_1(tmp_path: Path) -> None:
    # A stricter grader: it fails the marathon's expectation, so the skill passes 8 of 9.
    strict = tmp_path / "strict-grader.yaml"
    lenient = (PLAYBOOKS / "unit-converter-grader.yaml").read_text(encoding="utf-8")
    failing = lenient.replace(
        '"passed": true,\n             "evidence": "A marathon is 26.22 miles"',
        '"passed": false,\n             "evidence": "the answer rounds a figure of the tool"',
    )
    assert failing != lenient
    strict.write_text(failing, encoding="utf-8")
    env = environment(tmp_path)
    done = skills_eval(
        env, "unit-converter", "--engine", "direct", "--min-pass-rate", "1.0", grader=strict
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = report_of(done)
    rates = {row["variant"]: row["pass_rate"] for row in report["variants"]}
    assert 0.0 < rates["skill"] < 1.0, rates
    said = " ".join(done.stderr.split())
    assert "unit-converter: pass rate 89% with the skill, below --min-pass-rate 100%" in said, said


async def test_both_bundled_skills_evals_on_temporal(tmp_path: Path) -> None:
    server = await start_dev_server(LocalArtifactStore(tmp_path / "server"))
    try:
        env = environment(
            tmp_path,
            WORKFLOW__TEMPORAL_ADDRESS=server.client.service_client.config.target_host,
            WORKFLOW__TASK_QUEUE=unique("bundled-evals"),
            # The worker runs the scripted models the batch names, from this folder only.
            MODEL__SCRIPTS_DIR=str(REPO),
        )
        (tmp_path / "worker").mkdir()
        worker = WorkerProcess(server.client, env, [bundled_skills_dir()], tmp_path / "worker")
        await worker.start()
        try:
            for skill in SKILLS:
                done = await asyncio.to_thread(skills_eval, env, skill, "--engine", "temporal")
                assert_the_skill_helps(done, skill, logs=worker.log())
        finally:
            worker.stop()
    finally:
        await server.shutdown()
