"""What ``skills install SOURCE --list`` prints (:func:`show_listing`): each skill the source
holds with its version, folder, plugins and description, and its scan as the settings' policy
decides it; a marketplace's plugins that cannot be installed from it, with why. Nothing was
stored, audited or locked.

Everything shown came from the source (hostile text): printed through ``terminal_safe`` in
``rich.text.Text``, JSON through ``console.dump``. Called by :mod:`~skillweave.cli.install`.
"""

from __future__ import annotations

from typing import Any, Final

from rich.table import Table
from rich.text import Text

from skillweave.cli.console import dump, err, out
from skillweave.cli.findings import row_scan_texts, scan_fields
from skillweave.config import Settings
from skillweave.terminal import counted, terminal_safe

__all__ = ["show_listing"]

_SHORT: Final = 12
"""Hex digits shown of a version or a commit."""


def show_listing(listing: Any, settings: Settings, *, as_json: bool) -> None:
    """Print `listing` (``skills.install.SourceListing``), each scan decided by `settings`."""
    from skillweave.skills import ScanDecision

    rows = [
        {
            "name": item.name,
            "version": item.version,
            "path": item.path or None,
            "plugins": list(item.plugins),
            "description": item.description,
            "scan": item.report.summary(),
            "decision": ScanDecision.of(item.report, settings.skills.scan).decision,
            **scan_fields(item.report, settings),
        }
        for item in listing.skills
    ]
    market = listing.marketplace
    unavailable = [p for p in market.plugins if p.unavailable] if market else []
    if as_json:
        dump(
            {
                "source": listing.source.location,
                "ref": listing.source.ref,
                "commit": listing.commit,
                "marketplace": market.model_dump(mode="json") if market else None,
                "marketplace_problem": listing.marketplace_problem,
                "skills": rows,
            }
        )
        return
    table = Table(box=None, pad_edge=False)
    for column in ("skill", "version", "path", "scan"):
        table.add_column(column, no_wrap=column == "version")
    table.add_column("description", overflow="fold", ratio=1)
    for row in rows:
        where = terminal_safe(row["path"] or ".")
        if row["plugins"]:
            where += terminal_safe(f" (plugin {', '.join(row['plugins'])})")
        table.add_row(
            Text(terminal_safe(row["name"])),
            row["version"][:_SHORT],
            Text(where),
            Text(terminal_safe(f"{row['decision']}: {row['scan']}")),
            Text(terminal_safe(row["description"])),
        )
    out.print(table)
    commit = f" at commit {listing.commit[:_SHORT]}" if listing.commit else ""
    out.print(
        Text(
            terminal_safe(
                f"{counted(len(rows), 'skill')} in {listing.source.location}{commit};"
                " nothing installed"
            )
        ),
        soft_wrap=True,
    )
    for row in rows:
        for line in row_scan_texts(row):
            out.print(line, soft_wrap=True)
    if listing.marketplace_problem:
        err.print(
            Text(terminal_safe(f"warning: {listing.marketplace_problem}; --plugin cannot be used")),
            soft_wrap=True,
        )
    for plugin in unavailable:
        out.print(
            Text(
                terminal_safe(f"plugin {plugin.name}: not installable here: {plugin.unavailable}")
            ),
            soft_wrap=True,
        )
