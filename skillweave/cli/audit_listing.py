"""How ``skillweave audit`` lays records out: listings that read at 80 columns.

Each record is a line of short fields (the last one takes the room left, folded if it must),
then its free text below, indented past the first field and wrapped to the terminal, never
squeezed into a column of its own; ``--wide`` gets one table row per record instead. Used by
``audit show`` (skill audit records) and ``audit network`` (egress records). Everything shown
came from a record a caller or a sandbox wrote: it goes through ``terminal_safe``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from rich.console import Group
from rich.table import Table
from rich.text import Text

from skillweave.terminal import counted, terminal_safe

if TYPE_CHECKING:
    from skillweave.storage.audit import AuditRecord

__all__ = ["Entry", "egress_entries", "listing", "record_entries", "record_table"]

_WRITER_SHOWN: Final = 6
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")
_VERSION_SHOWN: Final = 12
_FIELD_MAX: Final = 24
"""Widest a listing's middle field gets (a longer one folds); the last takes the rest."""


def record_entries(records: list[AuditRecord]) -> list[Entry]:
    """Audit records as listing entries: the record (``WRITER:SEQ``, the writer shortened),
    time, event, version (shortened) and skill on the line; the run and actor, then the
    details (digests shortened, nulls left out) below."""
    entries = []
    for record in records:
        fields = [
            f"{record.writer[:_WRITER_SHOWN]}:{record.seq}",
            record.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            record.event,
            (record.version or "")[:_VERSION_SHOWN],
            record.skill or "",
        ]
        who = [
            f"run {record.run}" if record.run else "",
            f"by {record.actor}" if record.actor else "",
        ]
        details = [
            f"{name}={_shown(value)}" for name, value in record.details.items() if value is not None
        ]
        below = [
            Text(terminal_safe(" · ".join(part for part in who if part)), style="dim"),
            Text(terminal_safe(", ".join(details))),
        ]
        entries.append(Entry(fields, [text for text in below if text.plain]))
    return entries


def egress_entries(records: list[dict[str, Any]]) -> list[Entry]:
    """Egress records as listing entries: time, verdict, kind, skill and destination on the
    line; the request, then the bytes each way and the reason, below."""
    entries = []
    for record in records:
        allowed = bool(record.get("allowed"))
        fields: list[str | Text] = [
            datetime.fromtimestamp(record.get("at", 0), tz=UTC).strftime("%H:%M:%S"),
            Text("allowed" if allowed else "refused", style="green" if allowed else "red"),
            *(str(record.get(name, "")) for name in ("kind", "skill", "destination")),
        ]
        request = f"{record.get('method', '')} {record.get('path', '')}".strip()
        moved = (
            f"{counted(int(record.get('bytes_out', 0)), 'byte')} out, "
            f"{counted(int(record.get('bytes_in', 0)), 'byte')} in"
        )
        below = [Text(terminal_safe(request)), Text(moved, style="dim")]
        if reason := str(record.get("reason", "")):
            below[-1].append(" · " + terminal_safe(reason), style="")
        entries.append(Entry(fields, [text for text in below if text.plain]))
    return entries


class Entry(NamedTuple):
    """One item of a :func:`_listing`: its short fields, and the lines of text below them."""

    fields: Sequence[str | Text]
    below: Sequence[Text]


def listing(header: Sequence[str], entries: list[Entry]) -> Table:
    """Records as a listing that reads at 80 columns: each a line of short fields (the last
    one takes the room left, folded if it must), then its free text below, indented past the
    first field and wrapped to the terminal (never squeezed into a column of its own)."""
    middle = [
        min(_FIELD_MAX, max(len(header[i]), *(len(_plain(e.fields[i])) for e in entries)))
        for i in range(1, len(header) - 1)
    ]

    def line(fields: Sequence[str | Text], style: str = "") -> Table:
        grid = Table.grid(padding=(0, 2, 0, 0))
        for width in middle:
            grid.add_column(width=width, overflow="fold")
        grid.add_column(ratio=1, overflow="fold")
        grid.add_row(*(_text(field, style) for field in fields))
        return grid

    listing = Table.grid(padding=(0, 2, 0, 0))
    listing.add_column(no_wrap=True)
    listing.add_column(ratio=1)
    listing.add_row(_text(header[0], "bold"), line(header[1:], "bold"))
    for entry in entries:
        below = [text.copy() for text in entry.below]
        for text in below:
            text.overflow = "fold"  # a long word (a URL, a path) is shown whole, never cut
        listing.add_row(_text(entry.fields[0]), Group(line(entry.fields[1:]), *below))
    return listing


def _plain(field: str | Text) -> str:
    return field.plain if isinstance(field, Text) else field


def _text(field: str | Text, style: str = "") -> Text:
    return field if isinstance(field, Text) else Text(terminal_safe(field), style=style)


def record_table(records: list[AuditRecord]) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in (
        *("time (UTC)", "writer", "seq", "event", "skill"),
        *("version", "run", "actor", "details"),
    ):
        table.add_column(column, overflow="fold" if column == "details" else "ellipsis")
    for record in records:
        details = ", ".join(f"{name}={_shown(value)}" for name, value in record.details.items())
        table.add_row(
            record.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            record.writer,
            str(record.seq),
            record.event,
            *(
                Text(terminal_safe(text or ""))
                for text in (
                    record.skill,
                    (record.version or "")[:_VERSION_SHOWN],
                    record.run,
                    record.actor,
                    details,
                )
            ),
        )
    return table


def _shown(value: object) -> str:
    """A detail's value in the table: text as it is, a digest shortened, the rest as JSON."""
    if isinstance(value, str):
        return f"{value[:_VERSION_SHOWN]}…" if _DIGEST.fullmatch(value) else value
    return json.dumps(value)
