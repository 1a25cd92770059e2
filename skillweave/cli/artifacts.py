"""``skillweave runs artifacts RUN [FILE] [--out DIR | --to PATH]``: a run's files, listed,
downloaded or fetched one by one at any time after it ran (``run --out`` does it only while
following a run), whichever door started it and on either engine: both keep a run's files in
the store, under ``runs/{run}/`` (its inputs, and what its scripts wrote). With
``SKILLWEAVE_API_URL`` set, the API's ``/v1/runs/{id}/artifacts`` is read instead.

FILE (a path as the listing shows it) is written to stdout, or to ``--to PATH``; to a terminal
only as text, made safe (a binary file needs ``--to``).

:func:`output_names` is the one rule for the file names an ``--out`` folder gets, used by this
command and by ``run --out`` (local and through the API: :func:`download_outputs`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.config import Settings, get_settings
from skillweave.storage import keys
from skillweave.terminal import counted, terminal_safe

if TYPE_CHECKING:
    from skillweave.cli.remote import RemoteApi

__all__ = ["artifacts", "download_outputs", "output_names"]


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


def download_outputs(api: RemoteApi, run_id: str, dest: Path) -> list[Path]:
    """The run's output files, from the API, into `dest` under the names
    :func:`output_names` gives them, as the local ``--out`` copies them."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = [a["path"] for a in api.artifacts(run_id) if "/outputs/" in f"/{a['path']}"]
    written: list[Path] = []
    for path, name in output_names(paths):
        api.download(run_id, path, dest / name)
        written.append(dest / name)
    return written


def _is_run_file(path: str) -> bool:
    """Whether `path` (under ``runs/{run}/``) is one of the run's files: an input or an
    output (the API's artifact routes keep to the same)."""
    return "/inputs/" in f"/{path}" or "/outputs/" in f"/{path}"


def _listed(run: str, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``path`` (relative to the run), ``kind`` and ``size`` of each file, inputs first."""
    rows = []
    for item in files:
        path = item["path"]
        kind = "output" if "/outputs/" in f"/{path}" else "input"
        rows.append({"run": run, "kind": kind, **item})
    return sorted(rows, key=lambda row: (row["kind"] != "input", row["path"]))


async def _local(settings: Settings, run: str, dest: Path | None) -> tuple[list[Any], list[Path]]:
    from skillweave.cli.compose import open_store

    prefix = keys.run_prefix(run)
    async with open_store(settings) as store:
        refs = [
            ref for ref in await store.list(prefix) if _is_run_file(ref.key.removeprefix(prefix))
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


def _remote(settings: Settings, run: str, dest: Path | None) -> tuple[list[Any], list[Path]]:
    from skillweave.cli.remote import open_remote

    with open_remote(settings) as api:
        files = api.artifacts(run)
        written = download_outputs(api, run, dest) if dest is not None else []
    return files, written


async def _local_file(settings: Settings, run: str, path: str) -> bytes | None:
    """The bytes of the run's file `path`, or None when it has no such file."""
    from skillweave.cli.compose import open_store

    if not _is_run_file(path):
        return None
    key = keys.validate_key(f"{keys.run_prefix(run)}{path}")
    async with open_store(settings) as store:
        ref = await store.stat(key)
        return None if ref is None else await store.get_bytes(ref)


def _remote_file(settings: Settings, run: str, path: str) -> bytes:
    from skillweave.cli.remote import open_remote

    with open_remote(settings) as api:
        return b"".join(api.fetch(run, path))


def _no_files(settings: Settings, run: str) -> typer.Exit:
    where = settings.remote_api_url or f"the {settings.storage.backend} store"
    return fail(
        f"no files of run {run!r} in {where}: check the run id (skillweave runs list), and "
        "that STORAGE__ settings name the store the run ran against"
    )


def _write(data: bytes, path: str, target: Path | None) -> None:
    """`data` into `target`, or to stdout: raw to a pipe, to a terminal only as safe text."""
    if target is not None:
        target.write_bytes(data)
        err.print(Text(terminal_safe(f"{path} written to {target}")), soft_wrap=True)
        return
    if not sys.stdout.isatty():
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(f"{path} is not text: give --to PATH to save it (or pipe the output)") from None
    out.print(Text(terminal_safe(text)), soft_wrap=True, end="")


def _fetch(settings: Settings, run: str, path: str, target: Path | None) -> None:
    """`runs artifacts RUN FILE`: one of the run's files."""
    with errors():
        if settings.remote_api_url:
            data: bytes | None = _remote_file(settings, run, path)
        else:
            data = asyncio.run(_local_file(settings, run, path))
    if data is None:
        raise fail(
            f"run {run!r} has no file {path!r}: `skillweave runs artifacts {run}` lists its files"
        )
    _write(data, path, target)


def artifacts(
    run: Annotated[str, typer.Argument(help="The run id (as `runs list` shows it).")],
    file: Annotated[
        str | None,
        typer.Argument(
            help="Fetch this one file (a path as the listing shows it) to stdout or --to."
        ),
    ] = None,
    *,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Download the run's output files into DIR.")
    ] = None,
    to: Annotated[
        Path | None, typer.Option("--to", help="With FILE: write it to this path, not stdout.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List a run's files; --out downloads its outputs, FILE fetches one (to stdout or --to)."""
    settings = get_settings()
    if file is not None:
        if out_dir is not None or as_json:
            raise fail("FILE is fetched alone: leave out --out and --json", code=EXIT_USAGE)
        _fetch(settings, run, file, to)
        return
    if to is not None:
        raise fail("--to needs FILE (the path of one of the run's files)", code=EXIT_USAGE)
    with errors():
        if settings.remote_api_url:
            files, written = _remote(settings, run, out_dir)
        else:
            files, written = asyncio.run(_local(settings, run, out_dir))
    if not files:
        raise _no_files(settings, run)
    rows = _listed(run, files)
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
