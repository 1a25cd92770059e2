"""``skillweave runs``: the jobs on a Temporal server (``WORKFLOW__TEMPORAL_ADDRESS``).

``list`` reads visibility (the search attributes the workflow keeps: agent, phase, active
skills, turns, tokens), so it needs no worker; ``show`` and ``logs`` ask the workflow itself
(the ``status`` and ``events`` queries, which a worker answers, also for a job that has
ended); ``send`` is the ``send_message`` update and prints the model's reply; ``approve`` and
``cancel`` are signals. ``logs`` outlives workers: while none answers it says it waits for one
(on stderr) and goes on; with ``--follow`` it exits by the job's outcome, or with
``EXIT_NO_WORKER`` once no worker answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS``.
Every command connects with skillweave's data converter over the settings' store, like the
worker.

Temporal is imported when a command runs, not when the CLI starts. What a job holds (its
task, agent and skill names, the model's answers and replies, error messages) is shown
through :func:`~skillweave.terminal.terminal_safe`, in a ``rich.text.Text``; JSON is written
with every non-ASCII character escaped (rich's ``print_json`` re-encodes what it is given).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import err, out
from skillweave.cli.errors import EXIT_INTERRUPTED, EXIT_PROBLEM, errors, follower_gives_up
from skillweave.config import get_settings
from skillweave.terminal import counted, terminal_safe, terminal_safe_json

if TYPE_CHECKING:
    from skillweave.engines.contract import JobView
    from skillweave.engines.temporal import JobRow, TemporalEngine

__all__ = ["runs_app"]

_T = TypeVar("_T")

runs_app = typer.Typer(
    help="Jobs on the Temporal server: list, show, logs, send, approve, cancel.",
    no_args_is_help=True,
)

JobArgument = Annotated[str, typer.Argument(help="The job id (as `runs list` shows it).")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _on_engine(work: Callable[[TemporalEngine], Awaitable[_T]]) -> _T:
    """Connect to the configured server, run `work` with an engine on it, map errors."""
    from skillweave.cli.compose import open_temporal_engine
    from skillweave.engines.temporal import configure_logging

    configure_logging(verbose=False)
    settings = get_settings()

    async def main() -> _T:
        async with open_temporal_engine(settings) as opened:
            return await work(opened.engine)

    with errors():
        return asyncio.run(main())


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%m-%d %H:%M:%S") if moment is not None else ""


_WIDE = 110
"""A console this wide shows when each job started too."""
_ENDED = ("completed", "failed", "cancelled", "budget_exhausted")


def _state(row: JobRow) -> str:
    """The job's phase; for a workflow that closed before the job could say how it ended
    (terminated, timed out), how the workflow closed."""
    if row.status == "running" or (row.phase in _ENDED):
        return row.phase or row.status
    return row.status


def _row_json(row: JobRow, ui: str) -> dict[str, Any]:
    return {**row.model_dump(mode="json"), "ui_url": ui}


@runs_app.command("list")
def list_runs(
    agent: Annotated[str | None, typer.Option(help="Only this agent's jobs.")] = None,
    phase: Annotated[
        str | None, typer.Option(help="Only jobs in this phase (e.g. thinking, completed).")
    ] = None,
    skill: Annotated[str | None, typer.Option(help="Only jobs with this skill active.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """List jobs, newest first (from visibility: no worker needed)."""
    from skillweave.engines.temporal import jobs_query, ui_link

    with errors():
        jobs_query(agent=agent, phase=phase, skill=skill)  # bad filters fail before connecting
    rows = _on_engine(
        lambda engine: engine.list_jobs(agent=agent, phase=phase, skill=skill, limit=limit)
    )
    workflow = get_settings().workflow
    if as_json:
        data = [
            _row_json(row, ui_link(workflow.ui_url, workflow.namespace, row.job_id)) for row in rows
        ]
        out.print_json(json.dumps(data), ensure_ascii=True)
        return
    if not rows:
        out.print("no jobs" + (" match" if agent or phase or skill else ""))
        return
    wide = out.width >= _WIDE
    table = Table(box=None, pad_edge=False)
    for column in ("job", "state", "agent", "turns", "tokens"):
        right = column in ("turns", "tokens")
        table.add_column(column, no_wrap=True, justify="right" if right else "left")
    table.add_column("skills", overflow="fold", ratio=1)
    if wide:
        table.add_column("started", no_wrap=True)
    for row in rows:
        cells = [
            row.job_id,
            _state(row),
            row.agent or "",
            "" if row.turns is None else str(row.turns),
            "" if row.tokens is None else f"{row.tokens:,}",
            " ".join(row.active_skills),
        ]
        cells += [_when(row.start_time)] if wide else []
        table.add_row(*(Text(terminal_safe(cell)) for cell in cells))
    out.print(table)


def _print_view(view: JobView, ui: str) -> None:
    safe = terminal_safe
    ok = view.status == "completed"
    status = Text()
    status.append(view.status, style="bold green" if ok else "bold")
    status.append(safe(f" · phase {view.phase}"))
    if view.reason:
        status.append(safe(f": {view.reason}"))
    out.print(Text(safe(f"job {view.job_id} · agent {view.agent}"), style="bold"), soft_wrap=True)
    out.print(Text(safe(f"task:   {view.task}")), soft_wrap=True)
    out.print(status, soft_wrap=True)
    usage = view.usage
    out.print(
        f"turn {view.turn} · {counted(view.script_runs, 'script run')} · "
        f"{counted(usage.input_tokens, 'token')} in / {usage.output_tokens:,} out · "
        f"{counted(view.outputs, 'output')} · {counted(view.events_total, 'event')}"
        + (f" · run {view.runs}" if view.runs > 1 else ""),
        soft_wrap=True,
    )
    if view.active_skills:
        skills = ", ".join(
            f"{name} @ {version[:12]}" for name, version in view.active_skills.items()
        )
        out.print(Text(safe(f"skills: {skills}")), soft_wrap=True)
    if view.awaiting_approval is not None:
        ask = view.awaiting_approval
        out.print(
            Text(
                safe(
                    f"waiting for approval: {ask.describe()} — `skillweave runs approve "
                    f"{view.job_id}` or `--deny`"
                ),
                style="bold yellow",
            ),
            soft_wrap=True,
        )
    if view.last_error:
        out.print(Text(safe(f"last error: {view.last_error}"), style="red"), soft_wrap=True)
    if view.answer:
        out.print(f"answer (turn {view.answer_turn}):", soft_wrap=True)
        out.print(Text(safe(view.answer.strip())), soft_wrap=True)
    out.print(Text(safe(f"Temporal UI: {ui}")), soft_wrap=True)


@runs_app.command("show")
def show_run(job: JobArgument, as_json: JsonFlag = False) -> None:
    """A job's status (the `status` query; a worker answers it)."""
    from skillweave.engines.temporal import ui_link

    workflow = get_settings().workflow
    ui = ui_link(workflow.ui_url, workflow.namespace, job)
    view = _on_engine(lambda engine: engine.status(job))
    if as_json:
        out.print_json(
            json.dumps({**view.model_dump(mode="json"), "ui_url": ui}), ensure_ascii=True
        )
    else:
        _print_view(view, ui)


@runs_app.command("logs")
def logs(
    job: JobArgument,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the job ends.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON line per event.")] = False,
) -> None:
    """A job's events (the `events` query), one line each; --follow waits for more.

    While no worker answers, a note on stderr says so and the command keeps waiting. With
    --follow: exit 0 when the job completes, 1 when it fails, is cancelled or runs out of
    budget, 75 when no worker answered for WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS (the job may
    still be running), 130 on Ctrl-C.
    """
    import sys

    from skillweave.agent.events import AgentEvent
    from skillweave.cli.view import EventView

    def show(event: AgentEvent) -> None:
        if as_json:
            sys.stdout.write(terminal_safe_json(event.model_dump_json()) + "\n")
            sys.stdout.flush()
        else:
            out.print(EventView.line(event), soft_wrap=True)

    async def work(engine: TemporalEngine) -> str | None:
        """The job's events; with --follow, how it ended."""
        finished: str | None = None
        with follower_gives_up():
            async for item in engine.follow(job, until_finished=follow):
                if isinstance(item, AgentEvent):
                    show(item)
                    if item.kind == "job_finished":
                        finished = item.status or "failed"
                else:
                    err.print(EventView.note_line(item), soft_wrap=True)
        if follow and finished is None:
            # The workflow closed without the job saying how (terminated, timed out): its
            # history says, and no worker is needed to read it.
            result = await engine.result(job)
            finished = result.status
            reason = f": {result.reason}" if result.reason else ""
            err.print(Text(terminal_safe(f"job {job}: {finished}{reason}")), soft_wrap=True)
        return finished

    try:
        finished = _on_engine(work)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if follow and finished != "completed":
        raise typer.Exit(EXIT_PROBLEM)


@runs_app.command("send")
def send(
    job: JobArgument,
    text: Annotated[str, typer.Argument(help="The message.")],
    reply_to: Annotated[
        int | None,
        typer.Option(help="The turn of the answer this replies to (refused if a newer exists)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Send a message to a running job and print the model's reply to it."""

    async def work(engine: TemporalEngine) -> Any:
        return await engine.ask(job, text, reply_to_turn=reply_to)

    if err.is_terminal and not as_json:
        with err.status("waiting for the reply…", spinner="dots"):
            reply = _on_engine(work)
    else:
        reply = _on_engine(work)
    if as_json:
        out.print_json(reply.model_dump_json(), ensure_ascii=True)
        return
    if reply.text:
        out.print(Text(terminal_safe(reply.text.strip())), soft_wrap=True)
    else:
        out.print(
            Text(
                terminal_safe(
                    f"no reply: the job ended ({reply.status}"
                    + (f": {reply.reason})" if reply.reason else ")")
                ),
                style="yellow",
            ),
            soft_wrap=True,
        )
    if reply.status not in ("running", "completed"):
        raise typer.Exit(EXIT_PROBLEM)


@runs_app.command("approve")
def approve(
    job: JobArgument,
    deny: Annotated[bool, typer.Option("--deny", help="Deny the script run instead.")] = False,
    note: Annotated[str, typer.Option(help="Why (the model sees it).")] = "",
) -> None:
    """Approve (or --deny) the script run a job is waiting on."""
    from skillweave.agent.runtime import ApprovalDecision

    decision = ApprovalDecision(approved=not deny, note=note, by="skillweave runs approve")
    _on_engine(lambda engine: engine.approve(job, decision))
    out.print(Text(terminal_safe(f"{'denied' if deny else 'approved'}: job {job}")))


@runs_app.command("cancel")
def cancel(
    job: JobArgument,
    reason: Annotated[str, typer.Option(help="Why; the job's result says it.")] = (
        "cancelled by the user"
    ),
) -> None:
    """Cancel a job and wait until it has stopped."""

    async def work(engine: TemporalEngine) -> Any:
        await engine.cancel(job, reason=reason)
        return await engine.result(job)

    if err.is_terminal:
        with err.status(f"cancelling job {job}…", spinner="dots"):
            result = _on_engine(work)
    else:
        result = _on_engine(work)
    text = f"job {job}: {result.status}" + (f" ({result.reason})" if result.reason else "")
    out.print(Text(terminal_safe(text)), soft_wrap=True)
