"""The work of each mode of ``skillweave skills eval`` (:mod:`skillweave.cli.evals`): run a
batch (new, or resumed), list a skill's batches, show a report, cancel a batch on Temporal,
run the trigger evals.

A batch is planned against the settings' store before any engine opens (a skill with no
evals, an unknown version or model is bad input at once, exit 2), then run on the engine
:func:`~skillweave.cli.compose.open_engine` opens: the direct engine in this process (its
scripts on a manager of its own unless ``SANDBOX__MANAGER_URL`` is set), or the configured
Temporal server's workers (``skillweave worker``), whose store must be this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.text import Text

from skillweave.cli.agent_run import check_model, choose_model, scripted_note
from skillweave.cli.compose import open_engine, open_store, open_temporal_engine
from skillweave.cli.console import err, shown_path
from skillweave.cli.eval_batch import (
    BatchOptions,
    PlannedBatch,
    build_batch,
    read_target,
    split_target,
)
from skillweave.cli.eval_report import (
    judged,
    print_listing,
    print_report,
    print_triggers,
    say,
    stored_where,
    write_files,
)
from skillweave.cli.eval_run import run_eval_batch
from skillweave.cli.exits import EXIT_INTERRUPTED, EXIT_USAGE, errors, fail
from skillweave.cli.library import registry_of
from skillweave.cli.signals import interrupt_cancels
from skillweave.config import ExecutionEngine, Settings, get_settings
from skillweave.errors import AgentSpecError, ConfigError, SkillweaveError
from skillweave.evals import EvalBatch, EvalReport
from skillweave.evals import batch as batches
from skillweave.evals import store as eval_store
from skillweave.evals import summary as eval_summaries
from skillweave.skills import SkillRegistry
from skillweave.storage import store_identity
from skillweave.terminal import counted

__all__ = ["Shown", "cancel_batch", "list_batches", "run_batch", "show_batch", "triggers"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Shown:
    """How the command shows a report: JSON or Markdown, the files to write, the bar."""

    as_json: bool = False
    html: Path | None = None
    out_dir: Path | None = None
    min_pass_rate: float | None = None


def _run(main: Coroutine[Any, Any, _T]) -> _T:
    """`main` run to its end; an unknown batch or a bad agent spec is bad input (exit 2),
    any other error one line and exit 1 (:func:`~skillweave.cli.exits.errors`)."""
    with errors():
        try:
            return asyncio.run(main)
        except (eval_store.EvalsNotFoundError, AgentSpecError) as exc:
            raise ConfigError(str(exc)) from None


def _split(target: str) -> tuple[str, str | None]:
    with errors():
        return split_target(target)


def _name_only(target: str, mode: str) -> str:
    name, version = _split(target)
    if version is not None:
        raise fail(f"{mode} takes the skill's NAME, not NAME@VERSION", code=EXIT_USAGE)
    return name


def _batch_of(name: str, batch_id: str) -> str:
    """`batch_id`, if it can be one (checked before any store or server is asked)."""
    if not re.fullmatch(batches.BATCH_ID_PATTERN, batch_id):
        raise fail(
            f"{batch_id[:80]!r} is no eval batch id (eval-…): "
            f"`skillweave skills eval {name} --list` lists them",
            code=EXIT_USAGE,
        )
    return batch_id


# --- reading what batches left ----------------------------------------------------------------


def list_batches(target: str, shown: Shown) -> None:
    """``--list``: the skill's batches with a report, newest first (``NAME@VERSION``: only
    those of that version)."""
    name, prefix = _split(target)

    async def main() -> tuple[EvalReport, ...]:
        async with open_store(get_settings()) as store:
            return await eval_store.list_reports(store, name)

    reports = _run(main())
    if prefix is not None:
        reports = tuple(report for report in reports if report.version.startswith(prefix))
    print_listing(name, reports, as_json=shown.as_json)


def show_batch(target: str, batch_id: str, shown: Shown) -> None:
    """``--show``: a stored report, printed, and written where ``--html``/``--out`` say."""
    name = _name_only(target, "--show")
    batch_id = _batch_of(name, batch_id)

    async def main() -> EvalReport:
        async with open_store(get_settings()) as store:
            try:
                return await eval_store.read_report(store, name, batch_id)
            except eval_store.EvalsNotFoundError:
                await eval_store.load_batch(store, name, batch_id)  # no batch: that error
                raise SkillweaveError(
                    f"eval batch {batch_id} of {name} has no report yet: it is still running, "
                    f"or stopped before writing one (`skillweave skills eval {name} --resume "
                    f"{batch_id}` runs what is left)"
                ) from None

    report = _run(main())
    raise typer.Exit(_finish(report, shown, where=None))


def triggers(target: str, shown: Shown) -> None:
    """``--triggers-only``: whether the catalog picks the skill for its evals' prompts and not
    for its ``evals/triggers.json`` negatives, by the configured selection; no model."""
    settings = get_settings()
    registry = registry_of(None)

    async def main() -> Any:
        async with open_store(settings) as store:
            found = await read_target(target, store, registry)
            summary, problem = await eval_summaries.version_triggers(
                registry,
                store,
                found.skill,
                found.version,
                suite=found.suite,
                negatives=found.triggers,
                settings=settings.skills,
            )
        if summary is None:
            raise SkillweaveError(f"{found.skill}: no trigger evals: {problem}")
        return found.skill, summary

    skill, summary = _run(main())
    print_triggers(skill, summary, as_json=shown.as_json)


def cancel_batch(target: str, batch_id: str, *, engine: ExecutionEngine | None) -> None:
    """``--cancel``: cancel a batch running on Temporal; its report is written from the jobs
    graded so far."""
    name = _name_only(target, "--cancel")
    batch_id = _batch_of(name, batch_id)
    settings = get_settings()
    if (engine or settings.workflow.execution_engine) == "direct":
        raise fail(
            "--cancel: a batch on the direct engine runs in the process that started it: stop "
            f"it there (Ctrl-C), then `skillweave skills eval {name} --resume {batch_id}` runs "
            "what is left",
            code=EXIT_USAGE,
        )

    async def main() -> None:
        from skillweave.evals import temporal  # temporalio: only for Temporal's batches

        with _temporal_reachable():
            async with open_temporal_engine(settings) as opened:
                await temporal.TemporalEvals(opened.engine).cancel(name, batch_id)

    _run(main())
    say(
        f"cancelled eval batch {batch_id}: `skillweave skills eval {name} --show {batch_id}` "
        "shows its report",
        style="",
    )


# --- running a batch ---------------------------------------------------------------------------


def run_batch(
    target: str,
    options: BatchOptions,
    shown: Shown,
    *,
    engine: ExecutionEngine | None,
    resume: str | None,
) -> None:
    """Run a new batch of `target` (or resume the batch `resume`), show its report, and exit
    with the code it earns."""
    settings = get_settings()
    chosen = engine if engine is not None else settings.workflow.execution_engine
    registry = registry_of(None)
    try:
        planned = _run(_plan(target, options, settings, registry, resume=resume))
    except KeyboardInterrupt:
        raise fail("interrupted: no eval batch was started", code=EXIT_INTERRUPTED) from None
    batch = planned.batch
    workflow = settings.workflow.model_copy(update={"execution_engine": chosen})
    on_engine = settings.model_copy(update={"workflow": workflow})
    _announce(planned, chosen, as_json=shown.as_json)

    async def main() -> tuple[EvalReport, str]:
        with _temporal_reachable() if chosen == "temporal" else contextlib.nullcontext():
            async with open_engine(on_engine, registry=registry, model=planned.model) as opened:
                with interrupt_cancels(asyncio.current_task()):
                    report = await run_eval_batch(
                        opened, batch, progress=True, live=False if shown.as_json else None
                    )
                return report, stored_where(opened.store, batch.skill, batch.batch_id)

    try:
        report, where = _run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise _interrupted(batch, chosen) from None
    raise typer.Exit(_finish(report, shown, where=where))


async def _plan(
    target: str,
    options: BatchOptions,
    settings: Settings,
    registry: SkillRegistry,
    *,
    resume: str | None,
) -> PlannedBatch:
    """The batch to run: a new one of `target` as `options` shape it, or the batch `resume`
    stored, one attempt on."""
    async with open_store(settings) as store:
        if resume is not None:
            name = _name_only(target, "--resume")
            batch = await eval_store.load_batch(store, name, _batch_of(name, resume))
            resumed = batch.model_copy(update={"attempt": batch.attempt + 1})
            model = choose_model(settings.model, option=batch.model, spec=batch.agent)
            return PlannedBatch(batch=resumed, model=model)
        found = await read_target(target, store, registry)
        return await build_batch(
            found,
            options,
            store=store,
            registry=registry,
            settings=settings.model,
            store_id=await store_identity(store),
        )


def _announce(planned: PlannedBatch, engine: ExecutionEngine, *, as_json: bool) -> None:
    """The batch's header line on stderr (and, on the direct engine, the model checked and
    the scripted model's warning)."""
    batch = planned.batch
    if engine == "direct":
        with errors():
            check_model(planned.model)
        if not as_json and (warning := scripted_note(planned.model)):
            err.print(Text(warning, style="bold yellow"), soft_wrap=True)
    jobs = len(batch.cases) * len(batch.variants) * batch.repeat
    resumed = f" (resumed, attempt {batch.attempt + 1})" if batch.attempt else ""
    line = (
        f"eval batch {batch.batch_id}{resumed} · {batch.skill} {batch.version[:12]} · "
        f"{counted(len(batch.cases), 'eval')} × {counted(len(batch.variants), 'variant')} × "
        f"{counted(batch.repeat, 'repeat')} = {counted(jobs, 'job')} · engine {engine}"
    )
    say(line)


def _finish(report: EvalReport, shown: Shown, *, where: str | None) -> int:
    """Print the report, write its files, say where it is stored; the exit code it earns."""
    print_report(report, as_json=shown.as_json)
    with errors(), _os_errors():
        written = write_files(report, html=shown.html, out_dir=shown.out_dir)
    if where is not None:
        say(f"report stored: {where}")
    for path in written:
        say(f"wrote {shown_path(path)}")
    return judged(report, min_pass_rate=shown.min_pass_rate)


def _interrupted(batch: EvalBatch, engine: ExecutionEngine) -> Exception:
    name, batch_id = batch.skill, batch.batch_id
    if engine == "direct":
        return fail(
            f"interrupted: eval batch {batch_id} was cancelled",
            hint=f"Its report has the jobs graded so far (`skillweave skills eval {name} --show "
            f"{batch_id}`); `--resume {batch_id}` runs the rest.",
            code=EXIT_INTERRUPTED,
        )
    return fail(
        f"interrupted: eval batch {batch_id} keeps running on Temporal",
        hint=f"Stop it with `skillweave skills eval {name} --cancel {batch_id}`; once it is "
        f"done, `--show {batch_id}` shows its report; `--resume {batch_id}` runs what a "
        "stopped one left.",
        code=EXIT_INTERRUPTED,
    )


@contextlib.contextmanager
def _os_errors() -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise ConfigError(f"cannot write the report: {exc}") from None


@contextlib.contextmanager
def _temporal_reachable() -> Iterator[None]:
    """No Temporal server: the line that names both remedies (as ``skillweave run`` says)."""
    try:
        yield
    except ConfigError as exc:
        from skillweave.engines.temporal import TemporalUnreachableError

        if isinstance(exc, TemporalUnreachableError):
            remedy = "--engine direct (or WORKFLOW__EXECUTION_ENGINE=direct)"
            raise ConfigError(exc.or_direct(remedy)) from None
        raise
