"""``skillweave runs``: runs, whichever door started them (``skillweave run`` or ``demo``, the
API, any Temporal client), on the Temporal server (``WORKFLOW__TEMPORAL_ADDRESS``), or through
the API at ``SKILLWEAVE_API_URL`` when it is set (then every subcommand talks to
``/v1/runs``, and the API's engine decides what it can say).

On Temporal: ``list`` reads visibility (the search attributes the workflow keeps: agent, phase,
active skills, turns, tokens), so it needs no worker; ``show`` and ``logs`` ask the workflow
itself (the ``status`` and ``events`` queries, which a worker answers, also for a run that has
ended); ``send`` is the ``send_message`` update and prints the model's reply; ``approve`` and
``cancel`` are signals. ``logs`` outlives workers: while none answers it says it waits for one
(on stderr) and goes on; with ``--follow`` it exits by the run's outcome, or with
``EXIT_NO_WORKER`` once no worker answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS``.
Every command connects with skillweave's data converter over the settings' store, like the
worker. Through the API: ``GET /v1/runs/`` (with the same filters), ``GET /v1/runs/{id}`` and
``/status``, the ``/events`` stream (``?follow=false`` without ``--follow``), ``/messages``
(then the stream until the next answer), ``/approvals`` and ``/cancel``; the exit codes are the
same. ``artifacts`` is :mod:`skillweave.cli.artifacts`.

Temporal is imported when a command runs, not when the CLI starts. What a run holds (its
task, agent and skill names, the model's answers and replies, error messages) is shown
through :func:`~skillweave.terminal.terminal_safe`, in a ``rich.text.Text``; JSON is written
with every non-ASCII character escaped (rich's ``print_json`` re-encodes what it is given).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import err, out
from skillweave.cli.errors import (
    EXIT_INTERRUPTED,
    EXIT_PROBLEM,
    EXIT_USAGE,
    errors,
    fail,
    follower_gives_up,
)
from skillweave.config import get_settings
from skillweave.terminal import counted, terminal_safe, terminal_safe_json

if TYPE_CHECKING:
    from skillweave.agent.events import AgentEvent
    from skillweave.cli.remote import RemoteApi
    from skillweave.engines.contract import JobView, Reply
    from skillweave.engines.temporal import FollowNote, JobRow, TemporalEngine

__all__ = ["RunArgument", "runs_app"]

_T = TypeVar("_T")

runs_app = typer.Typer(
    help="Runs, whichever door started them: list, show, logs, send, approve, cancel, "
    "artifacts. On the Temporal server, or through the API when SKILLWEAVE_API_URL is set.",
    no_args_is_help=True,
)

RunArgument = Annotated[str, typer.Argument(help="The run id (as `runs list` shows it).")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _on_api(work: Callable[[RemoteApi], _T]) -> _T | None:
    """`work` with the API of ``SKILLWEAVE_API_URL``, errors mapped; None when it is not set
    (the command goes to the Temporal server)."""
    settings = get_settings()
    if not settings.remote_api_url:
        return None
    from skillweave.cli.remote import open_remote

    with errors(), open_remote(settings) as api:
        return work(api)


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
"""A console this wide shows when each run started too."""
_ENDED = ("completed", "failed", "cancelled", "budget_exhausted")


def _state(status: str, phase: str | None) -> str:
    """The run's phase; for a workflow that closed before the run could say how it ended
    (terminated, timed out), how the workflow closed."""
    if status == "running" or (phase in _ENDED):
        return phase or status
    return status


def _row_json(row: JobRow, ui: str) -> dict[str, Any]:
    # ``id`` is the run id, as the API names it (``job_id`` kept for older readers; ``run_id``
    # is Temporal's id of the workflow's latest run).
    return {"id": row.job_id, **row.model_dump(mode="json"), "ui_url": ui}


def _row_cells(row: JobRow | dict[str, Any]) -> list[str]:
    """run, state, agent, turns, tokens, skills, started: of a visibility row or of an item
    of ``GET /v1/runs/``."""
    if isinstance(row, dict):
        started = datetime.fromisoformat(row["created_at"])
        run_id, status, phase = row["id"], row["status"], row.get("phase")
        agent, turns, tokens = row.get("agent"), row.get("turns"), row.get("tokens")
        skills = row.get("active_skills") or []
    else:
        started, run_id, status, phase = row.start_time, row.job_id, row.status, row.phase
        agent, turns, tokens, skills = row.agent, row.turns, row.tokens, row.active_skills
    return [
        run_id,
        _state(status, phase),
        agent or "",
        "" if turns is None else str(turns),
        "" if tokens is None else f"{tokens:,}",
        " ".join(skills),
        _when(started),
    ]


@runs_app.command("list")
def list_runs(
    agent: Annotated[str | None, typer.Option(help="Only this agent's runs.")] = None,
    phase: Annotated[
        str | None, typer.Option(help="Only runs in this phase (e.g. thinking, completed).")
    ] = None,
    skill: Annotated[str | None, typer.Option(help="Only runs with this skill active.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """List runs of every door, newest first (from visibility: no worker needed)."""
    from skillweave.engines.temporal import jobs_query, ui_link

    with errors():
        jobs_query(agent=agent, phase=phase, skill=skill)  # bad filters fail before connecting
    remote = _on_api(lambda api: api.list_runs(limit=limit, agent=agent, phase=phase, skill=skill))
    rows: list[JobRow] | list[dict[str, Any]]
    if remote is not None:
        rows = remote
        if as_json:
            out.print_json(json.dumps(rows), ensure_ascii=True)
            return
    else:
        rows = _on_engine(
            lambda engine: engine.list_jobs(agent=agent, phase=phase, skill=skill, limit=limit)
        )
        workflow = get_settings().workflow
        if as_json:
            data = [
                _row_json(row, ui_link(workflow.ui_url, workflow.namespace, row.job_id))
                for row in rows
            ]
            out.print_json(json.dumps(data), ensure_ascii=True)
            return
    if not rows:
        out.print("no runs" + (" match" if agent or phase or skill else ""))
        return
    wide = out.width >= _WIDE
    table = Table(box=None, pad_edge=False)
    for column in ("run", "state", "agent", "turns", "tokens"):
        right = column in ("turns", "tokens")
        table.add_column(column, no_wrap=True, justify="right" if right else "left")
    table.add_column("skills", overflow="fold", ratio=1)
    if wide:
        table.add_column("started", no_wrap=True)
    for row in rows:
        cells = _row_cells(row)
        table.add_row(*(Text(terminal_safe(cell)) for cell in (cells if wide else cells[:-1])))
    out.print(table)


def _print_view(view: JobView, ui: str | None) -> None:
    safe = terminal_safe
    ok = view.status == "completed"
    status = Text()
    status.append(view.status, style="bold green" if ok else "bold")
    status.append(safe(f" · phase {view.phase}"))
    if view.reason:
        status.append(safe(f": {view.reason}"))
    out.print(Text(safe(f"run {view.job_id} · agent {view.agent}"), style="bold"), soft_wrap=True)
    out.print(Text(safe(f"task:   {view.task}")), soft_wrap=True)
    out.print(status, soft_wrap=True)
    usage = view.usage
    out.print(
        f"turn {view.turn} · {counted(view.script_runs, 'script run')} · "
        f"{counted(usage.input_tokens, 'token')} in / {usage.output_tokens:,} out · "
        f"{counted(view.outputs, 'output')} · {counted(view.events_total, 'event')}"
        + (f" · workflow run {view.runs}" if view.runs > 1 else ""),
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
    if ui is not None:
        out.print(Text(safe(f"Temporal UI: {ui}")), soft_wrap=True)


def _print_record(run: dict[str, Any], api: str) -> None:
    """A run as ``GET /v1/runs/{id}`` gives it, when the API's engine has no status view
    (direct) or no worker answered."""
    safe = terminal_safe
    agent = run.get("agent_name") or (run.get("agent") or {}).get("name") or "?"
    out.print(Text(safe(f"run {run['id']} · agent {agent}"), style="bold"), soft_wrap=True)
    out.print(Text(safe(f"task:   {run['input']}")), soft_wrap=True)
    result = run.get("result") or {}
    status = Text()
    status.append(run["status"], style="bold green" if run["status"] == "completed" else "bold")
    if result.get("reason"):
        status.append(safe(f": {result['reason']}"))
    out.print(status, soft_wrap=True)
    if result:
        usage = result.get("usage") or {}
        out.print(
            f"{counted(result.get('turns', 0), 'turn')} · "
            f"{counted(result.get('script_runs', 0), 'script run')} · "
            f"{counted(usage.get('input_tokens', 0), 'token')} in / "
            f"{usage.get('output_tokens', 0):,} out",
            soft_wrap=True,
        )
    if run.get("model"):
        out.print(Text(safe(f"model:  {run['model']}")), soft_wrap=True)
    if result.get("answer"):
        out.print("answer:", soft_wrap=True)
        out.print(Text(safe(result["answer"].strip())), soft_wrap=True)
    out.print(Text(safe(f"API: {api}/v1/runs/{run['id']}")), soft_wrap=True)


def _remote_show(api: RemoteApi, run_id: str) -> tuple[dict[str, Any], JobView | None, str]:
    """The run's record, its status view when the API's engine gives one, and why not."""
    from skillweave.cli.remote import RemoteApiError
    from skillweave.engines.contract import JobView

    record = api.get_run(run_id)
    try:
        return record, JobView.model_validate(api.run_status(run_id)), ""
    except RemoteApiError as exc:
        if exc.status not in (409, 503):
            raise
        return record, None, exc.detail


@runs_app.command("show")
def show_run(run: RunArgument, as_json: JsonFlag = False) -> None:
    """A run's status (on Temporal the `status` query, which a worker answers)."""
    from skillweave.engines.temporal import ui_link

    settings = get_settings()
    remote = _on_api(lambda api: _remote_show(api, run))
    if remote is not None:
        record, view, why = remote
        if as_json:
            data = {**record, "view": None if view is None else view.model_dump(mode="json")}
            out.print_json(json.dumps(data), ensure_ascii=True)
        elif view is not None:
            _print_view(view, None)
            out.print(Text(terminal_safe(f"API: {settings.remote_api_url}/v1/runs/{run}")))
        else:
            _print_record(record, str(settings.remote_api_url).rstrip("/"))
            err.print(Text(terminal_safe(f"no live status: {why}"), style="dim"), soft_wrap=True)
        return
    workflow = settings.workflow
    ui = ui_link(workflow.ui_url, workflow.namespace, run)
    view = _on_engine(lambda engine: engine.status(run))
    if as_json:
        data = {"id": view.job_id, **view.model_dump(mode="json"), "ui_url": ui}
        out.print_json(json.dumps(data), ensure_ascii=True)
    else:
        _print_view(view, ui)


@runs_app.command("logs")
def logs(
    run: RunArgument,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the run ends.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON line per event.")] = False,
) -> None:
    """A run's events (the `events` query), one line each; --follow waits for more.

    While no worker answers, a note on stderr says so and the command keeps waiting. With
    --follow: exit 0 when the run completes, 1 when it fails, is cancelled or runs out of
    budget, 75 when no worker answered for WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS (the run may
    still be running), 130 on Ctrl-C.
    """
    import sys

    from skillweave.agent.events import AgentEvent
    from skillweave.cli.view import EventView

    def show(item: AgentEvent | FollowNote) -> str | None:
        """Print one event (or a follower's note, on stderr); how the run ended, if it says."""
        if not isinstance(item, AgentEvent):
            err.print(EventView.note_line(item), soft_wrap=True)
            return None
        if as_json:
            sys.stdout.write(terminal_safe_json(item.model_dump_json()) + "\n")
            sys.stdout.flush()
        else:
            out.print(EventView.line(item), soft_wrap=True)
        return (item.status or "failed") if item.kind == "job_finished" else None

    def closed(status: str, reason: str | None) -> str:
        # The run ended without saying how (terminated, timed out): its record or its
        # workflow's history says, and no worker is needed to read it.
        err.print(Text(terminal_safe(f"run {run}: {status}{f': {reason}' if reason else ''}")))
        return status

    def remote(api: RemoteApi) -> str | None:
        from skillweave.cli.remote import wait_for_result

        finished: str | None = None
        with follower_gives_up():
            for item in api.events(run, follow=follow):
                finished = show(item) or finished
        if follow and finished is None:
            result = wait_for_result(api, run)
            finished = closed(result.status, result.reason)
        return finished

    async def local(engine: TemporalEngine) -> str | None:
        finished: str | None = None
        with follower_gives_up():
            async for item in engine.follow(run, until_finished=follow):
                finished = show(item) or finished
        if follow and finished is None:
            result = await engine.result(run)
            finished = closed(result.status, result.reason)
        return finished

    try:
        finished = _on_api(remote) if get_settings().remote_api_url else _on_engine(local)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if follow and finished != "completed":
        raise typer.Exit(EXIT_PROBLEM)


def _remote_ask(api: RemoteApi, run_id: str, text: str) -> Reply:
    """A message through the API and the run's next answer (the API's message route takes
    the message; its event stream brings the answer, its status view the whole text)."""
    from skillweave.agent.events import AgentEvent
    from skillweave.cli.remote import RemoteApiError
    from skillweave.engines.contract import Reply

    seen = sum(1 for item in api.events(run_id, follow=False) if isinstance(item, AgentEvent))
    api.send_message(run_id, text)
    for item in api.events(run_id, after=seen):
        if not isinstance(item, AgentEvent):
            continue
        if item.kind == "answered":
            answer = item.detail
            with contextlib.suppress(RemoteApiError):  # else (direct) the event's summary
                answer = api.run_status(run_id).get("answer") or answer
            return Reply(job_id=run_id, text=answer, turn=item.turn, status="running")
        if item.kind == "job_finished":
            status = item.status or "failed"
            return Reply(job_id=run_id, turn=item.turn, status=status, reason=item.detail or None)
    record = api.get_run(run_id)
    reason = (record.get("result") or {}).get("reason")
    return Reply(job_id=run_id, turn=0, status=record["status"], reason=reason)


@runs_app.command("send")
def send(
    run: RunArgument,
    text: Annotated[str, typer.Argument(help="The message.")],
    reply_to: Annotated[
        int | None,
        typer.Option(help="The turn of the answer this replies to (refused if a newer exists)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Send a message to a running run and print the model's reply to it."""
    remote = bool(get_settings().remote_api_url)
    if remote and reply_to is not None:
        raise fail("--reply-to is not taken through the API (SKILLWEAVE_API_URL)", code=EXIT_USAGE)

    async def work(engine: TemporalEngine) -> Any:
        return await engine.ask(run, text, reply_to_turn=reply_to)

    def ask() -> Any:
        return _on_api(lambda api: _remote_ask(api, run, text)) if remote else _on_engine(work)

    if err.is_terminal and not as_json:
        with err.status("waiting for the reply…", spinner="dots"):
            reply = ask()
    else:
        reply = ask()
    if as_json:
        out.print_json(reply.model_dump_json(), ensure_ascii=True)
        return
    if reply.text:
        out.print(Text(terminal_safe(reply.text.strip())), soft_wrap=True)
    else:
        out.print(
            Text(
                terminal_safe(
                    f"no reply: the run ended ({reply.status}"
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
    run: RunArgument,
    deny: Annotated[bool, typer.Option("--deny", help="Deny the script run instead.")] = False,
    note: Annotated[str, typer.Option(help="Why (the model sees it).")] = "",
) -> None:
    """Approve (or --deny) the script run a run is waiting on."""
    from skillweave.agent.runtime import ApprovalDecision

    if get_settings().remote_api_url:
        _on_api(lambda api: api.approve(run, approved=not deny, note=note))
    else:
        decision = ApprovalDecision(approved=not deny, note=note, by="skillweave runs approve")
        _on_engine(lambda engine: engine.approve(run, decision))
    out.print(Text(terminal_safe(f"{'denied' if deny else 'approved'}: run {run}")))


@runs_app.command("cancel")
def cancel(
    run: RunArgument,
    reason: Annotated[str, typer.Option(help="Why; the run's result says it.")] = (
        "cancelled by the user"
    ),
) -> None:
    """Cancel a run and wait until it has stopped."""

    async def work(engine: TemporalEngine) -> Any:
        await engine.cancel(run, reason=reason)
        return await engine.result(run)

    def remote(api: RemoteApi) -> Any:
        from skillweave.cli.remote import wait_for_result

        api.cancel(run, reason=reason)
        return wait_for_result(api, run)

    def stop() -> Any:
        return _on_api(remote) if get_settings().remote_api_url else _on_engine(work)

    if err.is_terminal:
        with err.status(f"cancelling run {run}…", spinner="dots"):
            result = stop()
    else:
        result = stop()
    text = f"run {run}: {result.status}" + (f" ({result.reason})" if result.reason else "")
    out.print(Text(terminal_safe(text)), soft_wrap=True)
