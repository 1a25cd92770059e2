"""``skillweave runs``: runs, whichever door started them (``skillweave run`` or ``demo``, the
API, any Temporal client), on the Temporal server (``WORKFLOW__TEMPORAL_ADDRESS``), or through
the API at ``SKILLWEAVE_API_URL`` when it is set (then every subcommand talks to
``/v1/runs``, and the API's engine decides what it can say).

On Temporal: ``list`` reads visibility (the search attributes the workflow keeps: agent, phase,
active skills, turns, tokens), so it needs no worker; ``show`` and ``logs`` ask the workflow
itself (the ``status`` and ``events`` queries, which a worker answers, also for a run that has
ended), and ``show`` adds what the run's steps wait for, from its pending activities (a
``waiting:`` line each; through the API, the run's ``waiting``), and the limits its steps run
under, its worker's (a ``limits:`` line; ``limits`` in ``--json``); ``send`` is the
``send_message`` update and prints the model's reply; ``approve`` and ``cancel`` are signals.
``logs`` outlives workers: while none answers it says it waits for one (on stderr) and goes on;
with ``--follow`` it exits by the run's outcome, or with ``EXIT_NO_WORKER`` once no worker
answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS``.
Every command connects with skillweave's data converter over the settings' store, like the
worker. Through the API: ``GET /v1/runs/`` (with the same filters), ``GET /v1/runs/{id}`` and
``/status``, the ``/events`` stream (``?follow=false`` without ``--follow``), ``/messages``
(then the stream until the next answer), ``/approvals`` and ``/cancel``; the exit codes are the
same. ``artifacts`` is :mod:`skillweave.cli.artifacts`.

Each command picks its door here (:func:`_on_api` when ``SKILLWEAVE_API_URL`` is set, else
:func:`_on_engine`); the API door's run operations are :mod:`skillweave.cli.remote_runs`, and
how a run is printed (tables, status views, records, replies) is
:mod:`skillweave.cli.run_report`. Temporal and httpx are imported when a command runs, not when
the CLI starts. What a run holds goes through :func:`~skillweave.terminal.terminal_safe` here
too; JSON is written with every non-ASCII character escaped (rich's ``print_json`` re-encodes
what it is given).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.text import Text

from skillweave.cli.console import err, out
from skillweave.cli.exits import (
    EXIT_INTERRUPTED,
    EXIT_PROBLEM,
    EXIT_USAGE,
    errors,
    fail,
    follower_gives_up,
)
from skillweave.cli.run_report import (
    print_record,
    print_reply,
    print_rows,
    print_view,
    print_waiting,
    row_json,
    waits_of,
)
from skillweave.config import get_settings
from skillweave.terminal import terminal_safe, terminal_safe_json

if TYPE_CHECKING:
    from skillweave.agent import AgentEvent
    from skillweave.cli.remote import RemoteApi
    from skillweave.engines import RunView
    from skillweave.engines.temporal import FollowNote, RunRow, TemporalEngine
    from skillweave.waiting import Waiting

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
    from skillweave.engines.temporal import runs_query, ui_link

    with errors():
        runs_query(agent=agent, phase=phase, skill=skill)  # bad filters fail before connecting
    remote = _on_api(lambda api: api.list_runs(limit=limit, agent=agent, phase=phase, skill=skill))
    rows: list[RunRow] | list[dict[str, Any]]
    if remote is not None:
        rows = remote
        if as_json:
            out.print_json(json.dumps(rows), ensure_ascii=True)
            return
    else:
        rows = _on_engine(
            lambda engine: engine.list_runs(agent=agent, phase=phase, skill=skill, limit=limit)
        )
        workflow = get_settings().workflow
        if as_json:
            data = [
                row_json(row, ui_link(workflow.ui_url, workflow.namespace, row.run_id))
                for row in rows
            ]
            out.print_json(json.dumps(data), ensure_ascii=True)
            return
    print_rows(rows, filtered=bool(agent or phase or skill))


@runs_app.command("show")
def show_run(run: RunArgument, as_json: JsonFlag = False) -> None:
    """A run's status (on Temporal the `status` query, which a worker answers)."""
    from skillweave.engines.temporal import ui_link

    def through_api(api: RemoteApi) -> tuple[dict[str, Any], RunView | None, str]:
        from skillweave.cli.remote_runs import run_view

        return run_view(api, run)

    settings = get_settings()
    remote = _on_api(through_api)
    if remote is not None:
        record, view, why = remote
        if as_json:
            data = {**record, "view": None if view is None else view.model_dump(mode="json")}
            out.print_json(json.dumps(data), ensure_ascii=True)
        elif view is not None:
            print_view(view, None, waiting=waits_of(record))
            out.print(Text(terminal_safe(f"API: {settings.remote_api_url}/v1/runs/{run}")))
        else:
            print_record(record, str(settings.remote_api_url).rstrip("/"))
            err.print(Text(terminal_safe(f"no live status: {why}"), style="dim"), soft_wrap=True)
        return
    workflow = settings.workflow
    ui = ui_link(workflow.ui_url, workflow.namespace, run)

    async def looked(engine: TemporalEngine) -> tuple[RunView, list[Waiting]]:
        from skillweave.engines.temporal import NoWorkerError

        waiting = await engine.waiting(run)  # the server's description: no worker needed
        try:
            view = await engine.status(run)
        except NoWorkerError:
            print_waiting(waiting, to=err)  # what is known without a worker, then why no more
            raise
        return view, waiting

    view, waiting = _on_engine(looked)
    if as_json:
        waits = [wait.model_dump(mode="json") for wait in waiting]
        data = {"id": view.run_id, **view.model_dump(mode="json"), "waiting": waits, "ui_url": ui}
        out.print_json(json.dumps(data), ensure_ascii=True)
    else:
        print_view(view, ui, waiting=waiting)


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

    from skillweave.agent import AgentEvent
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
        return (item.status or "failed") if item.kind == "run_finished" else None

    def closed(status: str, reason: str | None) -> str:
        # The run ended without saying how (terminated, timed out): its record or its
        # workflow's history says, and no worker is needed to read it.
        err.print(Text(terminal_safe(f"run {run}: {status}{f': {reason}' if reason else ''}")))
        return status

    def remote(api: RemoteApi) -> str | None:
        from skillweave.cli.remote_runs import events, wait_for_result

        finished: str | None = None
        with follower_gives_up():
            for item in events(api, run, follow=follow):
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

    def through_api(api: RemoteApi) -> Any:
        from skillweave.cli.remote_runs import ask

        return ask(api, run, text)

    def ask() -> Any:
        return _on_api(through_api) if remote else _on_engine(work)

    if err.is_terminal and not as_json:
        with err.status("waiting for the reply…", spinner="dots"):
            reply = ask()
    else:
        reply = ask()
    if as_json:
        out.print_json(reply.model_dump_json(), ensure_ascii=True)
        return
    print_reply(reply)
    if reply.status not in ("running", "completed"):
        raise typer.Exit(EXIT_PROBLEM)


@runs_app.command("approve")
def approve(
    run: RunArgument,
    deny: Annotated[bool, typer.Option("--deny", help="Deny it instead.")] = False,
    note: Annotated[str, typer.Option(help="Why (the model sees it).")] = "",
) -> None:
    """Approve (or --deny) what a run is waiting on: a script run, the publication of a skill
    it wrote, or the install of a registry skill it asked for (`runs show` says which)."""
    from skillweave.agent import ApprovalDecision
    from skillweave.cli.audit_writer import cli_actor

    asked = ""
    if get_settings().remote_api_url:
        _on_api(lambda api: api.approve(run, approved=not deny, note=note))
    else:
        decision = ApprovalDecision(approved=not deny, note=note, by=cli_actor())

        async def decide(engine: TemporalEngine) -> str:
            waiting = (await engine.status(run)).awaiting_approval
            await engine.approve(run, decision)
            return waiting.describe() if waiting is not None else ""

        asked = _on_engine(decide)
    said = f"{'denied' if deny else 'approved'}: run {run}" + (f": {asked}" if asked else "")
    out.print(Text(terminal_safe(said)), soft_wrap=True)


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
        from skillweave.cli.remote_runs import cancel

        return cancel(api, run, reason=reason)

    def stop() -> Any:
        return _on_api(remote) if get_settings().remote_api_url else _on_engine(work)

    if err.is_terminal:
        with err.status(f"cancelling run {run}…", spinner="dots"):
            result = stop()
    else:
        result = stop()
    text = f"run {run}: {result.status}" + (f" ({result.reason})" if result.reason else "")
    out.print(Text(terminal_safe(text)), soft_wrap=True)
