"""``skillweave skills eval`` as a user types it, each in a process of its own, on the direct
engine with a scripted model: a batch run to its report (JSON alone on stdout, progress on
stderr), held to --min-pass-rate, listed, shown and written as files, resumed without running
a graded job again, cancelled by Ctrl-C with its report kept; the trigger evals without a
model; and the refusals of bad input (exit 2), some through typer's runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from tests.conftest import write_skill

Cli = Callable[..., subprocess.CompletedProcess[str]]
SKILL = "greeter"
EVALS = {
    "skill_name": SKILL,
    "evals": [
        {"id": 1, "prompt": "Greet Ada.", "checks": [{"type": "answer_contains", "text": "Hi"}]},
        {"id": 2, "prompt": "Greet Bob.", "checks": [{"type": "answer_contains", "text": "Yo"}]},
    ],
}
TRIGGERS = [{"query": "Convert 5 km to miles", "should_trigger": False}]
AGENT = "turns: [{say: 'Hi there'}]\n"
SLOW_AGENT = "turns: [{say: 'Hi there', delay_seconds: 30}]\n"
SLOW_ARGS = ("--model", "scripted:slow.yaml", "--repeat", "2")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLS__", "STORAGE__", "MODEL__", "WORKFLOW__", "SANDBOX__"))
    }
    return env | {
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
        "WORKFLOW__EXECUTION_ENGINE": "direct",
        "COLUMNS": "200",
    }


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    write_skill(
        tmp_path / "library" / SKILL,
        description="Greets people. Use when someone is to be greeted.",
        files={"evals/evals.json": json.dumps(EVALS), "evals/triggers.json": json.dumps(TRIGGERS)},
    )
    write_skill(tmp_path / "library" / "plain", description="Does a thing. Use when testing.")
    (tmp_path / "agent.yaml").write_text(AGENT, encoding="utf-8")
    (tmp_path / "slow.yaml").write_text(SLOW_AGENT, encoding="utf-8")
    env = _env(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillweave.cli", "skills", "eval", *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )

    return run


@pytest.mark.slow
def test_a_batch_runs_to_its_report_and_is_listed_shown_and_resumed(
    cli: Cli, tmp_path: Path
) -> None:
    done = cli(SKILL, "--baseline", "--model", "scripted:agent.yaml", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the report, and nothing else, on stdout
    batch_id = report["batch_id"]
    assert report["status"] == "completed"
    assert len(report["jobs"]) == 4
    assert {v["variant"]: v["pass_rate"] for v in report["variants"]} == {
        "skill": 0.5,
        "baseline": 0.5,
    }
    assert f"eval batch {batch_id}" in done.stderr
    assert "4/4 jobs graded" in done.stderr
    stored = tmp_path / "store" / "evals" / SKILL / batch_id / "report.json"
    assert stored.is_file()
    assert f"report stored: {stored.relative_to(tmp_path)}" in done.stderr

    listed = cli(SKILL, "--list")
    assert listed.returncode == 0, listed.stderr
    assert batch_id in listed.stdout
    assert "skill 50%, baseline 50%" in listed.stdout
    rows = json.loads(cli(SKILL, "--list", "--json").stdout)
    assert [row["batch_id"] for row in rows] == [batch_id]

    shown = cli(SKILL, "--show", batch_id, "--html", "page.html", "--out", "out")
    assert shown.returncode == 0, shown.stderr
    assert f"# Evals of {SKILL}" in shown.stdout  # Markdown as text: stdout is no terminal
    assert (tmp_path / "page.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "report.html",
        "report.json",
        "report.md",
    ]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["batch_id"] == batch_id

    below = cli(SKILL, "--show", batch_id, "--min-pass-rate", "0.9")
    assert below.returncode == 1
    assert "pass rate 50% with the skill, below --min-pass-rate 90%" in below.stderr

    resumed = cli(SKILL, "--resume", batch_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert again["batch_id"] == batch_id
    # Every job was graded: none ran again (the runs are the first attempt's).
    assert [job["run_id"] for job in again["jobs"]] == [job["run_id"] for job in report["jobs"]]
    assert "(4 graded before: not run again)" in resumed.stderr
    assert "resumed, attempt 2" in resumed.stderr


@pytest.mark.slow
def test_min_pass_rate_fails_the_command_and_ctrl_c_cancels_the_batch(
    cli: Cli, tmp_path: Path
) -> None:
    failing = cli(SKILL, "--model", "scripted:agent.yaml", "--min-pass-rate", "0.75")
    assert failing.returncode == 1, failing.stderr
    assert "# Evals of greeter" in failing.stdout
    assert "below --min-pass-rate 75%" in failing.stderr

    running = subprocess.Popen(
        [sys.executable, "-m", "skillweave.cli", "skills", "eval", SKILL, *SLOW_ARGS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
    )
    assert running.stderr is not None
    seen = ""
    deadline = time.monotonic() + 60
    while "jobs graded" not in seen and time.monotonic() < deadline:
        seen += running.stderr.readline()
    time.sleep(1.0)  # the runs are in flight, waiting on the slow model
    running.send_signal(signal.SIGINT)
    _, rest = running.communicate(timeout=60)
    assert running.returncode == 130, seen + rest
    assert "was cancelled" in rest
    batch_id = seen.split("eval batch ", 1)[1].split(" ", 1)[0]
    report = json.loads(
        (tmp_path / "store" / "evals" / SKILL / batch_id / "report.json").read_text()
    )
    assert report["status"] == "cancelled"
    shown = cli(SKILL, "--show", batch_id)
    assert shown.returncode == 1  # a batch that did not complete
    assert "did not complete (cancelled)" in shown.stderr


def test_a_skill_without_evals_is_bad_input(cli: Cli) -> None:
    done = cli("plain", "--model", "scripted:agent.yaml")
    assert done.returncode == 2
    assert "plain has no evals/evals.json" in done.stderr
    assert "docs/EVALS.md" in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_trigger_evals_need_no_model(cli: Cli) -> None:
    done = cli(SKILL, "--triggers-only")
    assert done.returncode == 0, done.stderr
    assert f"{SKILL} · triggers (" in done.stdout
    assert "recall 2/2 (100%)" in done.stdout
    summary = json.loads(cli(SKILL, "--triggers-only", "--json").stdout)
    assert (summary["positives"], summary["negatives"]) == (2, 1)


@pytest.mark.slow
def test_unknown_versions_and_batches_are_bad_input(cli: Cli) -> None:
    model = ("--model", "scripted:agent.yaml")
    for args, said in (
        ((f"{SKILL}@0123abcd", *model), "0123abcd"),
        ((f"{SKILL}@xyz", *model), "8+ hex digits"),
        (("ghost", *model), "no skill 'ghost'"),
        ((SKILL, "--show", "eval-20261207-000000-abcdef"), "--list"),
        ((SKILL, "--resume", "eval-20261207-000000-abcdef"), "no eval batch"),
        ((SKILL, "--against", "0123abcd", *model), "--against 0123abcd"),
    ):
        done = cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert said in done.stderr, (args, done.stderr)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--list", "--show", "eval-x"], "--list and --show do not go together"),
        (["--resume", "eval-x", "--baseline"], "--baseline shapes a new batch"),
        (["--show", "eval-x", "--repeat", "3"], "--repeat shapes a new batch"),
        (["--list", "--html", "x.html"], "do not go with --list"),
        (["--cancel", "eval-x", "--engine", "direct"], "runs in the process that started it"),
        (["--cancel", "../../etc", "--engine", "temporal"], "is no eval batch id"),
        (["--show", "EVAL-\x1b[31m"], "is no eval batch id"),
        (["--repeat", "0"], "Invalid value for '--repeat'"),
        (["--concurrency", "65"], "Invalid value for '--concurrency'"),
        (["--min-pass-rate", "1.5"], "Invalid value for '--min-pass-rate'"),
    ],
)
def test_options_that_cannot_be_are_refused(args: list[str], said: str) -> None:
    shown = CliRunner().invoke(app, ["skills", "eval", SKILL, *args], env={"COLUMNS": "200"})
    assert shown.exit_code == 2, shown.output
    assert said in shown.output
    assert "\x1b" not in shown.output


def test_progress_is_a_line_per_job_graded_off_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from skillweave.cli.eval_run import EvalProgress, progress_line
    from skillweave.evals import BatchProgress

    start = BatchProgress(batch_id="eval-x", jobs=4, skipped=1, finished=1, phase="running")
    assert progress_line(start) == "eval-x: 1/4 jobs graded (1 graded before: not run again)"
    view = EvalProgress(live=False)
    running = start.model_copy(update={"running": ("run-a", "run-b")})
    graded = running.model_copy(update={"finished": 2, "passed_verdicts": 3, "verdicts": 4})
    for progress in (start, running, graded, graded.model_copy(update={"phase": "completed"})):
        view(progress)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "eval-x: 1/4 jobs graded (1 graded before: not run again)",
        "eval-x: 2/4 jobs graded, 2 running, 75% passed so far (1 graded before: not run again)",
    ]


@pytest.mark.slow
def test_trigger_evals_of_a_named_version_rank_that_version(tmp_path: Path) -> None:
    # Two stored versions of one skill, the current one described for another job: the trigger
    # evals of NAME@VERSION rank that version's description, not the library's current one.
    source = tmp_path / "src" / "measure"
    write_skill(
        source,
        description="Convert lengths between kilometres and miles. Use to convert km to miles.",
        files={"evals/evals.json": json.dumps(MEASURE_EVALS)},
    )
    env = _env(tmp_path) | {"SKILLS__SELECTION": "bm25", "HOME": str(tmp_path / "home")}
    (tmp_path / "library").mkdir()

    def skillweave(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "skillweave.cli", *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done

    skillweave("skills", "install", "./src/measure")
    first = json.loads(skillweave("skills", "versions", "measure", "--json").stdout)["current"]
    skill_md = source / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text().replace(
            "Convert lengths between kilometres and miles. Use to convert km to miles.",
            "Bake sourdough bread. Use when asked for a bread recipe.",
        )
    )
    skillweave("skills", "update", "measure")

    def recall(target: str) -> float:
        done = skillweave("skills", "eval", target, "--triggers-only", "--json")
        summary = json.loads(done.stdout)
        assert summary["positives"] == 1
        return float(summary["recall"])

    assert recall("measure") == 0.0
    assert recall(f"measure@{first[:12]}") == 1.0


MEASURE_EVALS = {
    "skill_name": "measure",
    "evals": [{"id": 1, "prompt": "Convert 5 km to miles", "expectations": ["3.1 miles"]}],
}
