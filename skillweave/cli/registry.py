"""``skillweave registry build`` (an index of a source's skills, scanned, signed with a key) and
``skillweave skills find`` (search the registries of ``SKILLS__REGISTRIES``), over
:mod:`skillweave.skills.registries`.

Everything an index says is someone else's text: names, descriptions, sources and paths are
printed through :func:`~skillweave.terminal.terminal_safe` in ``rich.text.Text``, JSON through
``console.dump``, and the install commands shown are shell-quoted.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from skillweave.atomic_write import write_atomic
from skillweave.cli.console import JsonOption, dump, err, out, shown_path
from skillweave.cli.exits import EXIT_USAGE, errors, fail, warn
from skillweave.cli.library import registry_of
from skillweave.cli.trust import PASSPHRASE_VARIABLE, KeyIdOption
from skillweave.config import get_settings
from skillweave.skills.signing import load_private_key
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.skills.registries import BuiltIndex, RegistryHit

__all__ = ["build", "find", "install_command", "registry_app"]

_SHORT: Final = 12
MAX_HITS: Final = 100
"""The most hits a search answers (``skills.registries.MAX_HITS``; named here so that the
command's options do not load the registries, and their HTTP client, at start-up)."""
_WHOLE: Final = frozenset({"name", "version"})  # never folded: a name is one word to copy
_DESCRIPTION_CHARS: Final = 80
_NO_REGISTRY: Final = (
    "no skill registry is configured: set SKILLS__REGISTRIES, e.g. "
    'SKILLS__REGISTRIES=\'["index:/srv/skills/index.json", "marketplace:acme/skills"]\''
)

registry_app = typer.Typer(
    help="Skill registries: indexes of skills to find and install.", no_args_is_help=True
)


@registry_app.command("build")
def build(
    source: Annotated[
        str, typer.Argument(help="A git repository (URL or folder), a folder or a ZIP.")
    ],
    *,
    output: Annotated[Path, typer.Option("--out", help="The index file to write.")] = Path(
        "index.json"
    ),
    name: Annotated[
        str | None, typer.Option(help="The index's name (default: from the source).")
    ] = None,
    key: Annotated[
        Path | None,
        typer.Option(help="Sign each skill version and the index with this private key."),
    ] = None,
    key_id: KeyIdOption = None,
    passphrase_env: Annotated[
        str,
        typer.Option(help="The environment variable holding the key's passphrase."),
    ] = PASSPHRASE_VARIABLE,
    ref: Annotated[str | None, typer.Option(help="A branch, tag or commit to read.")] = None,
    path: Annotated[str | None, typer.Option(help="A sub-folder of the source.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Write an index of SOURCE's skills: each version, its scan under the settings' policy,
    and, with --key, its signature and the index's."""
    from skillweave.skills.registries import build_index

    settings = get_settings()
    with errors():
        private = None
        if key is not None:
            secret = os.environ.get(passphrase_env)
            private = load_private_key(key, passphrase=secret.encode() if secret else None)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("indexing", total=None)

            def advance(skill: str, done: int, total: int) -> None:
                progress.update(
                    task, description=terminal_safe(skill)[:40], completed=done, total=total
                )

            built = build_index(
                source,
                settings=settings.skills,
                name=name,
                ref=ref,
                path=path,
                key=private,
                key_id=key_id,
                progress=advance,
            )
    try:
        write_atomic(output, built.index.to_json())
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror}") from None
    for line in built.left_out:
        warn(f"left out {line}")
    if as_json:
        dump(built.index.model_dump(mode="json", exclude_none=True))
        return
    _print_built(built)
    signed = built.index.signature
    how = f", signed by key {signed.key_id!r}" if signed is not None else ", unsigned"
    count = len(built.entries)
    noun = "skill" if count == 1 else "skills"
    out.print(Text(f"wrote {count} {noun} to {shown_path(output)}{terminal_safe(how)}"))


def find(
    query: Annotated[str, typer.Argument(help="What the skill should do.")],
    top: Annotated[
        int, typer.Option("--top", "-k", min=1, max=MAX_HITS, help="How many results.")
    ] = 5,
    registry: Annotated[
        str | None, typer.Option(help="Search only the registry with this label.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Search the skill registries (SKILLS__REGISTRIES) for QUERY, and show how to install
    each skill found."""
    from skillweave.skills.registries import Registries

    settings = get_settings()
    if not settings.skills.registries:
        raise fail(_NO_REGISTRY, code=EXIT_USAGE)
    with errors():
        found = asyncio.run(
            Registries(settings.skills).results(query, top_k=top, registry=registry)
        )
    for problem in found.problems:
        warn(problem)
    here = _installed_here(found.hits)
    if as_json:
        data = found.model_dump(mode="json", exclude_none=True)
        for hit, shown in zip(found.hits, data["hits"], strict=True):
            shown["install"] = install_command(hit)
            shown["here"] = here.get(hit.entry.name)
        dump(data)
        return
    if not found.hits:
        err.print(Text("No registry skill matches that query."))
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("name", "registry", "description", "version", "scan", "signed", "here"):
        table.add_column(column, overflow="fold", no_wrap=column in _WHOLE)
    for hit in found.hits:
        entry = hit.entry
        description = entry.description
        if len(description) > _DESCRIPTION_CHARS:
            description = description[: _DESCRIPTION_CHARS - 1] + "…"
        table.add_row(
            Text(terminal_safe(entry.name)),
            Text(terminal_safe(hit.registry) + (" (stale)" if hit.stale else "")),
            Text(terminal_safe(description)),
            entry.version[:_SHORT],
            Text(terminal_safe(entry.scan.decision if entry.scan else "not scanned")),
            _signed(hit),
            here.get(entry.name) or "",
        )
    out.print(table)
    out.print()
    for hit in found.hits:
        if here.get(hit.entry.name) in (None, _OTHER):  # something an install would do
            out.print(Text(terminal_safe(install_command(hit)), style="dim"), soft_wrap=True)


_SAME: Final = "installed"
_OTHER: Final = "other version"


def _installed_here(hits: Sequence[RegistryHit]) -> dict[str, str]:
    """What this library has of each hit's name: ``installed`` (that very version), ``other
    version`` (an install would update it), or ``directory skill`` (its name is taken: an
    install is refused)."""
    if not hits:
        return {}
    library = registry_of(None)
    here: dict[str, str] = {}
    for hit in hits:
        name = hit.entry.name
        skill = library.claimant(name)  # as installs compare names: case and forms aside
        if skill is None:
            continue
        if library.owner_of(skill.name).kind == "directory":
            here[name] = "directory skill"
        else:
            here[name] = _SAME if skill.version == hit.entry.version else _OTHER
    return here


def install_command(hit: RegistryHit) -> str:
    """The ``skillweave skills install`` command that installs `hit`, shell-quoted; its
    ``--registry`` keeps the registry's label with the origin of what it installs."""
    entry = hit.entry
    words = ["skillweave", "skills", "install", entry.source]
    if entry.commit or entry.ref:
        words += ["--ref", entry.commit or entry.ref or ""]
    if entry.path:
        words += ["--path", entry.path]
    words += ["--skill", entry.name, "--registry", hit.registry]
    return shlex.join(words)


def _signed(hit: RegistryHit) -> str:
    signature = hit.entry.signature
    if signature is None:
        return "no"
    if hit.verified:
        return f"yes ({terminal_safe(signature.key_id)})"
    return f"untrusted ({terminal_safe(signature.key_id)})"


def _print_built(built: BuiltIndex) -> None:
    plugins = any(item.entry.plugin for item in built.entries)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("name", "version", "scan", "signed", "path", *(["plugin"] if plugins else [])):
        table.add_column(column, overflow="fold", no_wrap=column in _WHOLE)
    for item in built.entries:
        entry = item.entry
        scan = entry.scan
        row = [
            Text(terminal_safe(entry.name)),
            entry.version[:_SHORT],
            Text(terminal_safe(f"{scan.decision}: {scan.summary}" if scan else "not scanned")),
            "yes" if entry.signature is not None else "no",
            Text(terminal_safe(entry.path or ".")),
        ]
        if plugins:
            row.append(Text(terminal_safe(entry.plugin or "")))
        table.add_row(*row)
    out.print(table)
