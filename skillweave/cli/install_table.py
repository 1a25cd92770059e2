"""What ``skills install`` and ``skills update`` print of what they installed: one row per
skill (:func:`installed_rows`, also the ``--json`` answer) and the table of them
(:func:`show_installed`), with the scan of each and what an operator must do about one held off.

A source is shown whole on its line and its registry, path, ref and commit on the line below,
in the words every door uses (``skills.stored.origin_notes``). Everything shown came from the
source (hostile text): printed through ``terminal_safe`` in ``rich.text.Text``.
"""

from __future__ import annotations

from typing import Any, Final

from rich.table import Table
from rich.text import Text

from skillweave.cli.console import dump, err, out
from skillweave.cli.findings import row_scan_texts, scan_fields
from skillweave.config import Settings
from skillweave.terminal import counted, terminal_safe

__all__ = ["installed_rows", "show_installed"]

_SHORT: Final = 12
"""Hex digits shown of a version."""


def installed_rows(
    installed: list[Any], admitted: dict[str, Any], settings: Settings
) -> list[dict[str, Any]]:
    """One row per installed skill (``skills.install.Installed``); its scan as the report has
    it (``findings`` and ``review``, the report's own fields) and the policy's decision with its
    ``reason``, from `admitted` (``Admissions.admitted``)."""
    rows = []
    for item in installed:
        admission = admitted.get(item.record.name)
        rows.append(
            {
                "name": item.record.name,
                "version": item.version,
                "enabled": item.record.enabled,
                "source": item.origin.source,
                "registry": item.origin.registry,
                "ref": item.origin.ref,
                "path": item.origin.path,
                "commit": item.origin.commit,
                "scan": admission.report.summary() if admission else None,
                "decision": admission.decision if admission else None,
                **scan_fields(admission.report if admission else None, settings),
                "warning": admission.warning if admission else None,
            }
        )
    return rows


def show_installed(rows: list[dict[str, Any]], *, as_json: bool, verb: str) -> None:
    """Print `rows` (``--json``: as they are), then ``VERB N skills``, each scan's findings,
    and a line for each skill held off until approved."""
    from skillweave.skills.stored import origin_notes

    if as_json:
        dump(rows)
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("skill")
    table.add_column("version", no_wrap=True)
    # A source is shown whole, folded if need be (an ellipsis could hide where it points), in
    # the room the short columns leave; its registry, path, ref and commit on a line of their own.
    table.add_column("source", overflow="fold", ratio=1)
    table.add_column("scan")
    for row in rows:
        where = Text(terminal_safe(row["source"]))
        notes = origin_notes(
            registry=row["registry"], path=row["path"], ref=row["ref"], commit=row["commit"]
        )
        if notes:
            where.append("\n" + terminal_safe(notes), style="dim")
        table.add_row(
            Text(terminal_safe(row["name"])),
            row["version"][:_SHORT],
            where,
            Text(terminal_safe(row["scan"] or "")),
        )
    out.print(table)
    out.print(f"{verb} {counted(len(rows), 'skill')}")
    for row in rows:
        for line in row_scan_texts(row):
            out.print(line, soft_wrap=True)
    for row in rows:
        if row["warning"]:
            err.print(Text(terminal_safe(f"warning: {row['warning']}")), soft_wrap=True)
        if not row["enabled"]:
            err.print(
                Text(
                    terminal_safe(
                        f"{row['name']} is off until approved (its scan: {row['scan']}): read "
                        f"`skillweave skills show {row['name']}`, then `skillweave skills "
                        f"approve {row['name']}`"
                    )
                ),
                soft_wrap=True,
            )
