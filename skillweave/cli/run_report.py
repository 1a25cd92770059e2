"""How ``skillweave runs`` prints a run, whichever door it came through: the table and JSON
rows of ``runs list`` (a Temporal visibility row or an item of ``GET /v1/runs/``), the status
view of ``runs show`` (the engine's :class:`~skillweave.engines.contract.RunView`, with the
limits its steps run under, its worker's: a ``limits:`` line), a run's record as
``GET /v1/runs/{id}`` gives it when the API has no status view, what a running run's steps
wait for (a ``waiting:`` line each, :meth:`~skillweave.waiting.Waiting.line`), and the reply
of ``runs send``.

What a run holds (its task, agent and skill names, the model's answers and replies, error
messages) is shown through :func:`~skillweave.terminal.terminal_safe`, in a
``rich.text.Text``. Called by :mod:`skillweave.cli.runs`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import out
from skillweave.terminal import counted, terminal_safe
from skillweave.waiting import Waiting

if TYPE_CHECKING:
    from skillweave.engines import ActivityTimeouts, Reply, RunView
    from skillweave.engines.temporal import RunRow

__all__ = [
    "limits_line",
    "print_record",
    "print_reply",
    "print_rows",
    "print_view",
    "print_waiting",
    "row_json",
    "waits_of",
]

_WIDE: Final = 110
"""A console this wide shows when each run started too."""
_ENDED: Final = ("completed", "failed", "cancelled", "budget_exhausted")


def row_json(row: RunRow, ui: str) -> dict[str, Any]:
    """A visibility row as ``runs list --json`` prints it, with its page in the Temporal UI."""
    # ``id`` is the run id, as the API names it (``run_id`` kept for older readers; ``run_id``
    # is Temporal's id of the workflow's latest run).
    return {"id": row.run_id, **row.model_dump(mode="json"), "ui_url": ui}


def print_rows(rows: list[RunRow] | list[dict[str, Any]], *, filtered: bool) -> None:
    """``runs list``'s table (`filtered`: the command had filters, so none "match")."""
    if not rows:
        out.print("no runs" + (" match" if filtered else ""))
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


def waits_of(run: dict[str, Any]) -> list[Waiting]:
    """What a run of ``GET /v1/runs/{id}`` waits for (its ``waiting``; an item this version
    cannot read is left out)."""
    waits = []
    for item in run.get("waiting") or []:
        try:
            waits.append(Waiting.model_validate(item))
        except ValidationError:
            continue
    return waits


def print_view(view: RunView, ui: str | None, *, waiting: list[Waiting] | None = None) -> None:
    """``runs show``: the run's status view, what its steps wait for (`waiting`), and its
    page in the Temporal UI when `ui`."""
    safe = terminal_safe
    ok = view.status == "completed"
    status = Text()
    status.append(view.status, style="bold green" if ok else "bold")
    status.append(safe(f" · phase {view.phase}"))
    if view.reason:
        status.append(safe(f": {view.reason}"))
    out.print(Text(safe(f"run {view.run_id} · agent {view.agent}"), style="bold"), soft_wrap=True)
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
    if view.limits is not None:
        out.print(limits_line(view.limits), soft_wrap=True)
    if view.awaiting_approval is not None:
        ask = view.awaiting_approval
        out.print(
            Text(
                safe(
                    f"waiting for approval: {ask.describe()} — `skillweave runs approve "
                    f"{view.run_id}` or `--deny`"
                ),
                style="bold yellow",
            ),
            soft_wrap=True,
        )
    print_waiting(waiting or [])
    if view.last_error:
        out.print(Text(safe(f"last error: {view.last_error}"), style="red"), soft_wrap=True)
    if view.answer:
        out.print(f"answer (turn {view.answer_turn}):", soft_wrap=True)
        out.print(Text(safe(view.answer.strip())), soft_wrap=True)
    if ui is not None:
        out.print(Text(safe(f"Temporal UI: {ui}")), soft_wrap=True)


def limits_line(limits: ActivityTimeouts) -> str:
    """The limits a run's steps run under, the worker's (``RunView.limits``), in one line:
    ``limits: model 600 s, script 900 s, heartbeat 30 s, others 120 s, 8 attempts (the
    worker's)``."""
    return (
        f"limits: model {limits.model_seconds:g} s, script {limits.script_seconds:g} s, "
        f"heartbeat {limits.heartbeat_seconds:g} s, others {limits.short_seconds:g} s, "
        f"{counted(limits.max_attempts, 'attempt')} (the worker's)"
    )


def print_record(run: dict[str, Any], api: str) -> None:
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
    print_waiting(waits_of(run))
    if result.get("answer"):
        out.print("answer:", soft_wrap=True)
        out.print(Text(safe(result["answer"].strip())), soft_wrap=True)
    out.print(Text(safe(f"API: {api}/v1/runs/{run['id']}")), soft_wrap=True)


def print_reply(reply: Reply) -> None:
    """``runs send``: the model's reply, or that the run ended without one."""
    if reply.text:
        out.print(Text(terminal_safe(reply.text.strip())), soft_wrap=True)
        return
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


def print_waiting(waiting: list[Waiting], *, to: Console = out) -> None:
    """A ``waiting:`` line for each wait (on stdout unless `to` says)."""
    for wait in waiting:
        said = terminal_safe(f"waiting: {wait.line()}")
        to.print(Text(said, style="bold yellow"), soft_wrap=True)


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%m-%d %H:%M:%S") if moment is not None else ""


def _state(status: str, phase: str | None) -> str:
    """The run's phase; for a workflow that closed before the run could say how it ended
    (terminated, timed out), how the workflow closed."""
    if status == "running" or (phase in _ENDED):
        return phase or status
    return status


def _row_cells(row: RunRow | dict[str, Any]) -> list[str]:
    """run, state, agent, turns, tokens, skills, started: of a visibility row or of an item
    of ``GET /v1/runs/``."""
    if isinstance(row, dict):
        started = datetime.fromisoformat(row["created_at"])
        run_id, status, phase = row["id"], row["status"], row.get("phase")
        agent, turns, tokens = row.get("agent"), row.get("turns"), row.get("tokens")
        skills = row.get("active_skills") or []
    else:
        started, run_id, status, phase = row.start_time, row.run_id, row.status, row.phase
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
