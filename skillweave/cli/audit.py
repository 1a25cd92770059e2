"""``skillweave audit``: the skill audit log, and what the egress proxy recorded for a run.

``audit verify`` checks the skill audit log (:mod:`skillweave.storage.audit`, in the settings'
store): every writer's chain, the checkpoint chain and each against the other, and with
``--expect SEQ:HASH`` that the log still holds a head an earlier ``verify`` printed (kept
elsewhere: the one check a rollback of the whole log cannot pass). It prints what it checked
and the head when the log is intact, else one line per problem (a record or checkpoint edited,
reordered, inserted, removed or unreadable) and exits 1. ``audit show`` prints the records of every
writer in time order, filtered by skill, event and ``--since`` (an age such as ``2h`` or an
ISO date/time, UTC unless it names a zone). Records hold names a caller gave (skills, runs,
details): they are shown through ``terminal_safe`` too.

Both listings read at 80 columns (:mod:`skillweave.cli.audit_listing`): each record is a
line of short fields (a record is named ``WRITER:SEQ``, its writer's id shortened), digests
shortened, with its free text (run and actor, details; a request and its reason) wrapped below
it; ``--wide`` prints one table row per record, ``--json`` every field whole.

``audit network --run ID`` reads the records the manager stored with the run's script runs (one per
connection and per request through the egress proxy, allowed or refused, with the reason:
``runs/{run}/executions/{digest}/egress.jsonl`` in the settings' store) and prints them in time
order, as a table or as JSON lines. What a record holds came from a sandbox (paths, host names):
it is shown through :func:`~skillweave.terminal.terminal_safe`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar, cast

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.audit_listing import egress_entries, listing, record_entries, record_table
from skillweave.cli.console import dump, err, out
from skillweave.cli.exits import EXIT_PROBLEM, EXIT_USAGE, errors, fail
from skillweave.config import get_settings
from skillweave.errors import ConfigError
from skillweave.storage import keys
from skillweave.storage.audit import AUDIT_EVENTS, CHECKPOINTS, AuditHead
from skillweave.terminal import counted, terminal_safe

if TYPE_CHECKING:
    from skillweave.storage.audit import (
        AuditEvent,
        AuditLog,
        AuditProblem,
        AuditRecord,
        AuditReport,
    )

__all__ = ["audit_app"]

audit_app = typer.Typer(
    help="The skill audit log, and what the egress proxy recorded.", no_args_is_help=True
)

_T = TypeVar("_T")
_AGE: Final = re.compile(r"([0-9]{1,9})\s*([smhdw])")
_AGE_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_HEAD: Final = re.compile(r"([0-9]{1,12}):([0-9a-fA-F]{64})")
_DAMAGED: Final = ("damaged record or block", "damaged records or blocks")
"""Hex digits of a writer's id a listing shows (``--wide`` and ``--json`` show it whole)."""

_RECORDS_NAME = "/egress.jsonl"

WideOption = Annotated[
    bool, typer.Option("--wide", help="One table row per record, every field a column.")
]
JsonLinesOption = Annotated[bool, typer.Option("--json", help="One JSON object per line.")]


async def _records(run: str) -> list[dict[str, Any]]:
    from skillweave.storage import keys, open_store

    store = open_store(get_settings().storage)
    try:
        found: list[dict[str, Any]] = []
        for ref in await store.list(keys.run_prefix(run)):
            if ref.key.endswith(_RECORDS_NAME):
                text = (await store.get_bytes(ref)).decode("utf-8", "replace")
                found += [json.loads(line) for line in text.splitlines() if line.strip()]
        return sorted(found, key=lambda record: record.get("at", 0))
    finally:
        await store.aclose()


@audit_app.command("network")
def network(
    run: Annotated[str, typer.Option("--run", help="The run id.")],
    wide: WideOption = False,
    as_json: JsonLinesOption = False,
) -> None:
    """The run's connections and requests through the egress proxy, allowed and refused.

    Each is a line (time, verdict, kind, skill, destination) with its request, the bytes each
    way and the reason below it; --wide prints one table row each instead.
    """
    with errors():
        records = asyncio.run(_records(run))
    if as_json:
        for record in records:
            out.print(json.dumps(record, ensure_ascii=True), soft_wrap=True, markup=False)
        return
    if not records:
        err.print(f"no egress records for run {terminal_safe(run)!r}")
        return
    if not wide:
        header = ("time", "verdict", "kind", "skill", "destination")
        out.print(listing(header, egress_entries(records)))
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("time", "skill", "kind", "destination", "request", "out", "in", "", "why"):
        table.add_column(column, overflow="fold" if column in ("request", "why") else "ellipsis")
    for record in records:
        at = datetime.fromtimestamp(record.get("at", 0), tz=UTC).strftime("%H:%M:%S")
        request = f"{record.get('method', '')} {record.get('path', '')}".strip()
        allowed = bool(record.get("allowed"))
        table.add_row(
            at,
            *(
                Text(terminal_safe(str(record.get(name, ""))))
                for name in ("skill", "kind", "destination")
            ),
            Text(terminal_safe(request)),
            str(record.get("bytes_out", 0)),
            str(record.get("bytes_in", 0)),
            Text("allowed" if allowed else "refused", style="green" if allowed else "red"),
            Text(terminal_safe(str(record.get("reason", "")))),
        )
    out.print(table)


async def _with_log(work: Callable[[AuditLog], Awaitable[_T]]) -> _T:
    """`work` on the audit log of the settings' store (and its key)."""
    from skillweave.storage import open_store
    from skillweave.storage.audit import AuditLog

    settings = get_settings()
    store = open_store(settings.storage)
    try:
        return await work(AuditLog.from_settings(settings.audit, store))
    finally:
        await store.aclose()


@audit_app.command("verify")
def verify(
    expect: Annotated[
        str | None,
        typer.Option(
            "--expect",
            metavar="SEQ:HASH",
            help="A head an earlier `audit verify` printed, kept outside the store: the log "
            "must still hold it (finds the whole log rolled back to before it).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
) -> None:
    """Check the skill audit log: every record's hash, every writer's chain, the checkpoints
    and, with --expect, a head kept elsewhere."""
    kept = None if expect is None else _parse_head(expect)
    with errors():
        report: AuditReport = asyncio.run(_with_log(lambda log: log.verify(expect=kept)))
    if as_json:
        dump(
            {
                "records": report.records,
                "writers": report.writers,
                "checkpoints": report.checkpoints,
                "keyed": report.keyed,
                "intact": report.intact,
                "unanchored": report.unanchored,
                "head": None if report.head is None else dataclasses.asdict(report.head),
                "problems": [dataclasses.asdict(problem) for problem in report.problems],
            }
        )
    elif report.intact:
        _print_intact(report, kept)
    else:
        for problem in report.problems:
            out.print(Text(terminal_safe(problem.message)), soft_wrap=True)
        edited = sum(
            problem.kind == "edited" and problem.chain not in (None, CHECKPOINTS)
            for problem in report.problems
        )
        if report.records and edited == report.records:
            err.print(
                Text(
                    "no record's hash matches its content: is AUDIT__KEY the key the log was "
                    "written with?",
                    style="dim",
                ),
                soft_wrap=True,
            )
    if not report.intact:
        raise typer.Exit(EXIT_PROBLEM)


def _print_intact(report: AuditReport, kept: AuditHead | None) -> None:
    """The lines of an intact log: what was checked (and without a key what that leaves
    open), the records no checkpoint covers yet, the head (whole, so that it can be kept and
    passed back) and what to do with it."""
    if report.records or report.checkpoints:
        what = (
            f"{counted(report.records, 'record')} from {counted(report.writers, 'writer')}, "
            f"{counted(report.checkpoints, 'checkpoint')}"
        )
    else:
        what = "0 records"
    out.print(f"audit log: {what}, intact ({'HMAC' if report.keyed else 'SHA-256'})")
    if not report.keyed:
        out.print(
            Text(
                "no AUDIT__KEY: SHA-256 finds damage, not a writer who recomputes the hashes",
                style="dim",
            )
        )
    if report.unanchored:
        newer = (
            "1 record is newer than its writer's last checkpoint (the writer runs, or stopped "
            "without closing): its removal could not be told from a crash"
            if report.unanchored == 1
            else f"{report.unanchored:,} records are newer than their writer's last "
            "checkpoint (the writer runs, or stopped without closing): their removal could "
            "not be told from a crash"
        )
        out.print(Text(newer, style="dim"))
    if report.head is None:
        return
    out.print(f"head {report.head.seq}:{report.head.hash}", soft_wrap=True)
    if kept is not None and kept.seq > 0:
        hint = f"checkpoint {kept.seq}, the head you kept, is in the log"
    else:
        hint = (
            "keep this head outside the store: `audit verify --expect` with it later finds "
            "the whole log rolled back to before it"
        )
    out.print(Text(hint, style="dim"))


def _parse_head(text: str) -> AuditHead:
    """The head ``--expect`` names: ``SEQ:HASH`` as ``audit verify`` prints it.

    Raises:
        typer.Exit: not such a head (a usage error, one line).
    """
    match = _HEAD.fullmatch(text.strip())
    seq = int(match[1]) if match else 0
    if match is None or not 1 <= seq <= keys.MAX_AUDIT_SEQ:
        raise fail(
            f"--expect {_clipped(text)!r} is not a head: give SEQ:HASH as `audit verify` "
            "printed it (a checkpoint number, a colon and 64 hex digits)",
            code=EXIT_USAGE,
        )
    return AuditHead(seq, match[2].lower())


def _clipped(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


@audit_app.command("show")
def show(
    skill: Annotated[str | None, typer.Option("--skill", help="Only this skill.")] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only records from then on: an age (30m, 2h, 3d, 1w) or an ISO date/time "
            "(UTC unless it names a zone).",
        ),
    ] = None,
    event: Annotated[
        str | None, typer.Option("--event", help=f"Only one kind: {', '.join(AUDIT_EVENTS)}.")
    ] = None,
    wide: WideOption = False,
    as_json: JsonLinesOption = False,
) -> None:
    """The skill audit log's records, every writer's, in time order: installs, uploads,
    approvals, runs…

    Each record is a line (WRITER:SEQ, the writer's id shortened; time, event,
    version, skill) and, indented below it, its run and actor and its details,
    wrapped to the terminal; --wide prints one table row per record instead,
    --json every field in full.
    """
    if event is not None and event not in AUDIT_EVENTS:
        raise fail(
            f"unknown event {event!r}", hint=f"One of: {', '.join(AUDIT_EVENTS)}.", code=EXIT_USAGE
        )
    damaged: list[AuditProblem] = []
    with errors():
        start = None if since is None else _parse_since(since)

        async def matching(log: AuditLog) -> list[AuditRecord]:
            kind = cast("AuditEvent | None", event)  # checked against AUDIT_EVENTS above
            found = log.read(skill=skill, since=start, event=kind, on_damaged=damaged.append)
            return [record async for record in found]

        records = asyncio.run(_with_log(matching))
    if as_json:
        for record in records:
            line = json.dumps(record.model_dump(mode="json"), ensure_ascii=True)
            out.print(line, soft_wrap=True, markup=False)
    elif records:
        out.print(
            record_table(records)
            if wide
            else listing(
                ("record", "time (UTC)", "event", "version", "skill"),
                record_entries(records),
            )
        )
    else:
        err.print("no audit records" + (" match" if skill or since or event else ""))
    if damaged:
        err.print(
            Text(
                f"left out {counted(len(damaged), *_DAMAGED)} (unreadable or edited): run "
                "`skillweave audit verify`",
                style="yellow",
            ),
            soft_wrap=True,
        )


def _parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """The moment `text` names: an age back from `now` (``30m``, ``2h``, ``3d``, ``1w``; ``s``
    for seconds) or an ISO 8601 date or date/time, in UTC unless it names a zone.

    Raises:
        ConfigError: neither.
    """
    cleaned = text.strip()
    try:
        if match := _AGE.fullmatch(cleaned.lower()):
            age = timedelta(**{_AGE_UNITS[match[2]]: int(match[1])})
            return (now or datetime.now(UTC)) - age
        moment = datetime.fromisoformat(cleaned)
    except (ValueError, OverflowError):
        raise ConfigError(
            f"--since {terminal_safe(text)!r} is neither an age (30m, 2h, 3d, 1w) nor an ISO "
            "date/time (2025-06-01, 2025-06-01T12:00Z)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
