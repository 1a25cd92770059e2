"""``skillweave skills eval NAME[@VERSION]``: run a skill's evals, and read their reports.

The command reads the skill's ``evals/evals.json`` as the version evaluated holds it, builds
an eval batch (:mod:`skillweave.cli.eval_batch`), runs it on the engine of ``--engine``
(default ``WORKFLOW__EXECUTION_ENGINE``) with its progress on stderr
(:mod:`skillweave.cli.eval_run`), then prints the report and where it is stored
(:mod:`skillweave.cli.eval_report`). Its other modes read what batches left: ``--list`` (a
skill's past batches), ``--show`` (a stored report), ``--resume`` (a batch again: its graded
jobs are skipped), ``--cancel`` (a batch on Temporal), ``--triggers-only`` (the trigger evals:
no model, no jobs).

Exit codes: 0 a completed batch (whose pass rate reaches ``--min-pass-rate`` when given), 1 a
batch below it or one that did not complete, 2 bad input (no evals, an unknown version or
model, options that do not go together), 130 Ctrl-C (on the direct engine the batch is
cancelled and its report written; on Temporal it goes on).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillweave.cli.exits import EXIT_USAGE, fail
from skillweave.config import ExecutionEngine
from skillweave.evals import batch as batches

__all__ = ["eval_command"]

_SHAPING = ("--baseline", "--against", "--repeat", "--model", "--grader", "--agent")


def eval_command(
    target: Annotated[
        str,
        typer.Argument(
            metavar="NAME[@VERSION]",
            help="The skill, and the version to evaluate (8+ hex digits; default: the current).",
        ),
    ],
    *,
    baseline: Annotated[
        bool, typer.Option("--baseline", help="Also run each eval without the skill.")
    ] = False,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="VERSION",
            help="Also run each eval with this other version of the skill (8+ hex digits).",
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(min=1, max=batches.MAX_REPEAT, help="Runs of each eval in each variant."),
    ] = 1,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The agent's model: a profile (MODEL__PROFILES__<NAME>__*) or PROVIDER:NAME, "
            "as for skillweave run (default: the agent spec's, else MODEL__*).",
        ),
    ] = None,
    grader: Annotated[
        str | None,
        typer.Option(
            "--grader",
            help="The model that grades expectations: a profile or PROVIDER:NAME "
            "(default: the agent's model).",
        ),
    ] = None,
    agent: Annotated[
        Path | None,
        typer.Option(
            "--agent",
            "-a",
            metavar="SPEC.yaml",
            help="The agent each eval runs: instruction, limits, other skills.",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(min=1, max=batches.MAX_CONCURRENCY, help="Eval runs at once."),
    ] = 4,
    engine: Annotated[
        ExecutionEngine | None,
        typer.Option(help="temporal | direct (default: WORKFLOW__EXECUTION_ENGINE)."),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Exit 1 when the pass rate with the skill is below this (0.0 to 1.0).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON on stdout, nothing else.")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="PATH", help="Write the HTML report here.")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="DIR", help="Write report.json, report.md and report.html here."
        ),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="BATCH_ID", help="Run a batch again: the jobs it graded are not run again."
        ),
    ] = None,
    cancel: Annotated[
        str | None,
        typer.Option(metavar="BATCH_ID", help="Cancel a batch running on Temporal."),
    ] = None,
    listing: Annotated[
        bool, typer.Option("--list", help="List the skill's past batches, newest first.")
    ] = False,
    show: Annotated[
        str | None, typer.Option(metavar="BATCH_ID", help="Print a stored report.")
    ] = None,
    triggers_only: Annotated[
        bool,
        typer.Option(
            "--triggers-only",
            help="Only the trigger evals: does the catalog pick the skill? (no model, no runs)",
        ),
    ] = False,
) -> None:
    """Run a skill's evals (evals/evals.json): each eval as an agent run with the skill, and
    with --baseline without it, or with --against another version, --repeat times; each run
    graded by its checks, then its expectations by the grader model; the report printed
    (Markdown, or --json) and stored with the runs.

    Progress goes to stderr. Exit 0 when the batch completes (and its pass rate with the
    skill reaches --min-pass-rate), 1 when it does not, 2 for bad input, 130 on Ctrl-C (a
    direct batch is cancelled and its report written; a Temporal batch keeps going:
    --cancel or --resume it). Reports: --list, --show BATCH_ID (with --html or --out to
    write it).
    """
    from skillweave.cli import eval_modes

    modes = {
        "--list": listing,
        "--show": show is not None,
        "--resume": resume is not None,
        "--cancel": cancel is not None,
        "--triggers-only": triggers_only,
    }
    chosen = [name for name, on in modes.items() if on]
    if len(chosen) > 1:
        raise fail(f"{' and '.join(chosen)} do not go together: choose one", code=EXIT_USAGE)
    given = {
        "--baseline": baseline,
        "--against": against is not None,
        "--repeat": repeat != 1,
        "--model": model is not None,
        "--grader": grader is not None,
        "--agent": agent is not None,
    }
    shaping = [name for name in _SHAPING if given[name]]
    mode = chosen[0] if chosen else None
    if mode is not None and shaping:
        verb = "shapes" if len(shaping) == 1 else "shape"
        raise fail(
            f"{', '.join(shaping)} {verb} a new batch: not {mode}'s, which reads a stored one",
            code=EXIT_USAGE,
        )
    if mode in ("--list", "--cancel", "--triggers-only") and (html or out_dir):
        raise fail(f"--html and --out write a report: they do not go with {mode}", code=EXIT_USAGE)
    shown = eval_modes.Shown(
        as_json=as_json, html=html, out_dir=out_dir, min_pass_rate=min_pass_rate
    )
    match mode:
        case "--list":
            eval_modes.list_batches(target, shown)
        case "--show":
            assert show is not None
            eval_modes.show_batch(target, show, shown)
        case "--cancel":
            assert cancel is not None
            eval_modes.cancel_batch(target, cancel, engine=engine)
        case "--triggers-only":
            eval_modes.triggers(target, shown)
        case _:
            from skillweave.cli.eval_batch import BatchOptions

            options = BatchOptions(
                baseline=baseline,
                against=against,
                repeat=repeat,
                concurrency=concurrency,
                model=model,
                grader=grader,
                agent=agent,
            )
            eval_modes.run_batch(target, options, shown, engine=engine, resume=resume)
