"""``skillweave audit``: what the manager's egress proxy recorded for a job.

``audit network --job ID`` reads the records the manager stored with the job's runs (one per
connection and per request through the egress proxy, allowed or refused, with the reason:
``runs/{job}/executions/{digest}/egress.jsonl`` in the settings' store) and prints them in time
order, as a table or as JSON lines. What a record holds came from a sandbox (paths, host names):
it is shown through :func:`~skillweave.terminal.terminal_safe`.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import err, out
from skillweave.cli.errors import errors
from skillweave.config import get_settings
from skillweave.terminal import terminal_safe

__all__ = ["audit_app"]

audit_app = typer.Typer(help="What the egress proxy recorded.", no_args_is_help=True)

_RECORDS_NAME = "/egress.jsonl"


async def _records(job: str) -> list[dict[str, Any]]:
    from skillweave.storage import keys, open_store

    store = open_store(get_settings().storage)
    try:
        found: list[dict[str, Any]] = []
        for ref in await store.list(keys.run_prefix(job)):
            if ref.key.endswith(_RECORDS_NAME):
                text = (await store.get_bytes(ref)).decode("utf-8", "replace")
                found += [json.loads(line) for line in text.splitlines() if line.strip()]
        return sorted(found, key=lambda record: record.get("at", 0))
    finally:
        await store.aclose()


@audit_app.command("network")
def network(
    job: Annotated[str, typer.Option("--job", help="The job (run) id.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The job's connections and requests through the egress proxy, allowed and refused."""
    with errors():
        records = asyncio.run(_records(job))
    if as_json:
        for record in records:
            out.print(json.dumps(record, ensure_ascii=True), soft_wrap=True, markup=False)
        return
    if not records:
        err.print(f"no egress records for job {terminal_safe(job)!r}")
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
