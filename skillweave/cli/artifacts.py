"""``skillweave runs artifacts JOB [--out DIR]``: a job's files, listed and downloaded at any
time after it ran (``run --out`` does it only while following a run), on either engine: both
keep a job's files in the store, under ``runs/{job}/`` (its inputs, and what its scripts
wrote). With ``SKILLWEAVE_API_URL`` set, the API's ``/v1/runs/{id}/artifacts`` is read instead.

:func:`output_names` is the one rule for the file names an ``--out`` folder gets, used by this
command and by ``run --out`` (local and through the API).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.errors import errors, fail
from skillweave.config import Settings, get_settings
from skillweave.storage import keys
from skillweave.terminal import counted, terminal_safe

__all__ = ["artifacts", "output_names"]


def output_names(paths: Sequence[str]) -> list[tuple[str, str]]:
    """Each output's key (or path) with the file name it gets in an ``--out`` folder: the name
    the script gave it (decoded), ``2-name`` for a name met again; a name that cannot be a
    file name keeps its encoded form."""
    used: set[str] = set()
    named = []
    for path in paths:
        encoded = path.rsplit("/", 1)[-1]
        name = keys.decode_output_path(encoded)
        if "/" in name or "\x00" in name or name in {"", ".", ".."}:
            name = encoded
        candidate, counter = name, 1
        while candidate in used:
            counter += 1
            candidate = f"{counter}-{name}"
        used.add(candidate)
        named.append((path, candidate))
    return named


def _listed(job: str, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``path`` (relative to the run), ``kind`` and ``size`` of each file, inputs first."""
    rows = []
    for item in files:
        path = item["path"]
        kind = "output" if "/outputs/" in f"/{path}" else "input"
        rows.append({"job": job, "kind": kind, **item})
    return sorted(rows, key=lambda row: (row["kind"] != "input", row["path"]))


async def _local(settings: Settings, job: str, dest: Path | None) -> tuple[list[Any], list[Path]]:
    from skillweave.cli.compose import open_store

    prefix = keys.run_prefix(job)
    async with open_store(settings) as store:
        refs = [
            ref
            for ref in await store.list(prefix)
            if "/inputs/" in ref.key or "/outputs/" in ref.key
        ]
        files = [
            {"path": ref.key.removeprefix(prefix), "size": ref.size, "sha256": ref.sha256}
            for ref in refs
        ]
        written: list[Path] = []
        if dest is not None:
            outputs = {ref.key: ref for ref in refs if "/outputs/" in ref.key}
            dest.mkdir(parents=True, exist_ok=True)
            for key, name in output_names(sorted(outputs)):
                await store.get_file(outputs[key], str(dest / name))
                written.append(dest / name)
    return files, written


def _remote(settings: Settings, job: str, dest: Path | None) -> tuple[list[Any], list[Path]]:
    from skillweave.cli.remote import download_outputs, open_remote

    with open_remote(settings) as api:
        files = api.artifacts(job)
        written = download_outputs(api, job, dest) if dest is not None else []
    return files, written


def artifacts(
    job: Annotated[str, typer.Argument(help="The job (run) id.")],
    *,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Download the job's output files into DIR.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List a job's input and output files, and download its outputs with --out."""
    settings = get_settings()
    with errors():
        if settings.remote_api_url:
            files, written = _remote(settings, job, out_dir)
        else:
            files, written = asyncio.run(_local(settings, job, out_dir))
    if not files:
        where = settings.remote_api_url or f"the {settings.storage.backend} store"
        raise fail(
            f"no files of job {job!r} in {where}: check the job id (skillweave runs list), and "
            "that STORAGE__ settings name the store the job ran against"
        )
    rows = _listed(job, files)
    if as_json:
        dump(rows)
    else:
        table = Table(box=None, pad_edge=False)
        for column in ("kind", "path", "size"):
            table.add_column(column, justify="right" if column == "size" else "left")
        for row in rows:
            table.add_row(row["kind"], Text(terminal_safe(row["path"])), f"{row['size']:,}")
        out.print(table)
    if out_dir is not None:
        err.print(
            Text(terminal_safe(f"{counted(len(written), 'output file')} written to {out_dir}")),
            soft_wrap=True,
        )
