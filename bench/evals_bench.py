"""An eval batch at scale: what a 100-eval batch costs beyond its model calls.

A synthetic skill (``bench-echo``: one script that echoes its argument) gets ``--evals``
evals, each with two checks and one expectation; a scripted agent plays three turns per job
(activate the skill, run its script in a sandbox, answer) and a scripted grader one, every
model call taking ``--delay`` seconds, as a fast hosted model would. The batch runs as a user
runs it, ``skillweave skills eval bench-echo --json`` in a subprocess, on each engine: direct
(in that process) and Temporal (``skillweave dev --ephemeral`` started first: a dev server,
a worker and a manager with a local warm pool, the same machine).

Figures, from the batch's own report (``--json``):

- wall: the batch, start to end, as the report says (the CLI's start-up excluded);
- model floor: the model calls alone at the batch's concurrency, ``jobs × 4 × delay /
  concurrency`` (four calls per job: three turns and the grader): what the batch would take if
  everything but the model were free;
- overhead share: ``(wall − model floor) / wall``, the part of the wall time that is not
  waiting for models: sandboxes, the store, the engine, grading checks, the report;
- per job: a job's run (start to end, grading excluded) minus its three model calls.

    python bench/evals_bench.py [--quick] [--evals 100] [--concurrency 8] [--delay 0.25]
                                [--engines direct,temporal]

Prints a table only and always exits 0: timings on shared machines are noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table

SKILL: Final = "bench-echo"
AGENT_CALLS: Final = 3
GRADER_CALLS: Final = 1

_SKILL_MD: Final = f"""---
name: {SKILL}
description: Echo a token back through a sandboxed script. Use when asked to echo a token.
---

# Echo

Run `scripts/echo.py TOKEN`; it prints `echoed: TOKEN`.
"""
_ECHO: Final = 'import sys\nprint("echoed: " + " ".join(sys.argv[1:]))\n'


def _agent_script(delay: float) -> str:
    return f"""# The bench's scripted agent (not a model): activate, run the script, answer.
model: bench-agent
cases:
  - when: {{task: 'Echo token', offered: [{SKILL}]}}
    turns:
      - delay_seconds: {delay}
        tool_calls: [{{name: activate_skill, arguments: {{name: {SKILL}}}}}]
      - delay_seconds: {delay}
        tool_calls:
          - name: run_skill_script
            arguments: {{skill: {SKILL}, script: scripts/echo.py, args: [token]}}
      - delay_seconds: {delay}
        say: "Done: {{{{last_result}}}}"
"""


def _grader_script(delay: float) -> str:
    verdict = json.dumps(
        {
            "expectations": [
                {
                    "text": "The answer reports the echoed token",
                    "passed": True,
                    "evidence": "echoed: token",
                }
            ]
        }
    )
    return f"""# The bench's scripted grader (not a model): one verdict quoting the run.
model: bench-grader
turns:
  - delay_seconds: {delay}
    say: '{verdict}'
"""


def _suite(evals: int) -> str:
    cases = [
        {
            "id": n,
            "prompt": f"Echo token number {n} with the echo skill.",
            "expectations": ["The answer reports the echoed token"],
            "checks": [
                {"type": "script_ran", "skill": SKILL, "script": "scripts/echo.py"},
                {"type": "answer_contains", "text": "echoed: token"},
            ],
        }
        for n in range(1, evals + 1)
    ]
    return json.dumps({"skill_name": SKILL, "evals": cases}, indent=1)


def _workspace(root: Path, *, evals: int, delay: float) -> Path:
    skill = root / "skills" / SKILL
    (skill / "scripts").mkdir(parents=True)
    (skill / "evals").mkdir()
    (skill / "SKILL.md").write_text(_SKILL_MD)
    (skill / "scripts" / "echo.py").write_text(_ECHO)
    (skill / "evals" / "evals.json").write_text(_suite(evals))
    models = root / "models"
    models.mkdir()
    (models / "agent.yaml").write_text(_agent_script(delay))
    (models / "grader.yaml").write_text(_grader_script(delay))
    return models


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(root: Path, engine: str) -> dict[str, str]:
    home = root / f"home-{engine}"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "STORAGE__LOCAL_DIR": str(root / f"store-{engine}"),
        "SKILLS__DIRS": json.dumps([str(root / "skills")]),
        "MODEL__SCRIPTS_DIR": str(root / "models"),
        "WORKFLOW__DEV_DB_FILE": str(home / "temporal.db"),
    }


@contextlib.contextmanager
def _dev_stack(env: dict[str, str], log: Path) -> Iterator[dict[str, str]]:
    """``skillweave dev --ephemeral`` on free ports, until the block ends."""
    port, ui_port = _free_port(), _free_port()
    with log.open("w") as out:
        stack = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skillweave.cli",
                "dev",
                "--ephemeral",
                "--port",
                str(port),
                "--ui-port",
                str(ui_port),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while "skillweave dev" not in log.read_text(errors="replace"):
            if stack.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"skillweave dev did not start:\n{log.read_text()}")
            time.sleep(0.2)
        yield {**env, "WORKFLOW__TEMPORAL_ADDRESS": f"127.0.0.1:{port}"}
    finally:
        stack.terminate()
        try:
            stack.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stack.kill()


def _eval(env: dict[str, str], engine: str, models: Path, concurrency: int) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillweave.cli",
            "skills",
            "eval",
            SKILL,
            "--json",
            "--engine",
            engine,
            "--concurrency",
            str(concurrency),
            "--model",
            f"scripted:{models / 'agent.yaml'}",
            "--grader",
            f"scripted:{models / 'grader.yaml'}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"skills eval on {engine} exited {done.returncode}:\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout)
    report["_command_seconds"] = time.perf_counter() - started
    return report


def _row(engine: str, report: dict[str, Any], *, delay: float, concurrency: int) -> list[str]:
    jobs = report["jobs"]
    wall = float(report["wall_seconds"])
    floor = len(jobs) * (AGENT_CALLS + GRADER_CALLS) * delay / concurrency
    per_job = [float(job["wall_seconds"]) - AGENT_CALLS * delay for job in jobs]
    passed = report["variants"][0]["pass_rate"]
    return [
        engine,
        str(len(jobs)),
        f"{passed:.0%}",
        f"{wall:.1f} s",
        f"{report['_command_seconds']:.1f} s",
        f"{floor:.1f} s",
        f"{max(0.0, (wall - floor) / wall):.0%}" if wall else "-",
        f"{statistics.median(per_job) * 1000:.0f} ms",
        f"{len(jobs) / wall:.2f}" if wall else "-",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 evals")
    parser.add_argument("--evals", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.25, help="seconds per model call")
    parser.add_argument("--engines", default="direct,temporal")
    options = parser.parse_args(argv)
    evals = 20 if options.quick else options.evals
    console = Console(width=160)
    table = Table(
        title=f"{evals}-eval batch, concurrency {options.concurrency}, "
        f"{options.delay:g} s per model call (4 per job)"
    )
    for column in (
        "engine",
        "jobs",
        "pass",
        "wall (report)",
        "command",
        "model floor",
        "overhead share",
        "overhead / job (p50)",
        "jobs/s",
    ):
        table.add_column(column, justify="left" if column == "engine" else "right")
    with tempfile.TemporaryDirectory(prefix="evals-bench-") as folder:
        root = Path(folder)
        models = _workspace(root, evals=evals, delay=options.delay)
        for engine in options.engines.split(","):
            env = _environment(root, engine)
            try:
                if engine == "temporal":
                    with _dev_stack(env, root / "dev.log") as on_stack:
                        report = _eval(on_stack, engine, models, options.concurrency)
                else:
                    report = _eval(env, engine, models, options.concurrency)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                console.print(f"[red]{engine}: {exc}[/]")
                continue
            table.add_row(
                *_row(engine, report, delay=options.delay, concurrency=options.concurrency)
            )
    console.print(table)
    console.print(
        "model floor: the model calls alone at this concurrency; overhead share: the rest of "
        "the wall time; overhead / job: a job's run minus its three agent model calls."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
