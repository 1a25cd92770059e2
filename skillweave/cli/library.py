"""The skill library a command reads: the whole library (``skills.library.SkillLibrary``) of
the ``--dir`` roots or ``SKILLS__DIRS``, and the settings' store's skills, scanned with a
spinner on a terminal, its load-time diagnostics on stderr.

A root given with ``--dir``, or set in ``SKILLS__DIRS``, that is not a folder is bad usage
(exit 2, one line); the built-in default roots may be missing. Used by every command that
needs skills: the one-shot ones (``skills``, ``run``, ``demo``, ``sandbox run``) take a
snapshot (:func:`registry_of`, :func:`loaded_library`), whose store skills live in a folder
of this process's own until it exits; the long-running ones (``worker``, ``dev``, ``mcp``)
open it in their event loop (:func:`opened_library`) and keep reloading it
(``skills.reload.reloading``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, Final

import typer
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.config import Settings, get_settings
from skillweave.skills import (
    Diagnostic,
    SkillLibrary,
    SkillRegistry,
    configured_roots,
    process_folder,
)
from skillweave.terminal import terminal_safe

__all__ = [
    "DirsOption",
    "directory_registry",
    "loaded_library",
    "opened_library",
    "print_diagnostics",
    "registry_of",
    "roots_of",
]

DirsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--dir",
        "-d",
        help="Skill library root (repeatable; replaces SKILLS__DIRS; the store's skills stay).",
    ),
]
MAX_SHOWN_WARNINGS: Final = 20


def print_diagnostics(diagnostics: Sequence[Diagnostic], *, limit: int | None = None) -> None:
    """The diagnostics on stderr, at most `limit` of them (then how many more)."""
    shown = diagnostics if limit is None else diagnostics[:limit]
    for diagnostic in shown:
        # At load time a fatal diagnostic means the skill was left out, so say exactly that.
        label, style = ("skipped", "red") if diagnostic.fatal else ("warning", "yellow")
        err.print(Text(terminal_safe(f"{label}: {diagnostic}"), style=style), soft_wrap=True)
    if len(diagnostics) > len(shown):
        rest = len(diagnostics) - len(shown)
        err.print(Text(f"… {rest} more; run `skillweave skills validate` to see all", style="dim"))


def roots_of(dirs: Sequence[Path] | None) -> list[Path]:
    """The directory roots: `dirs`, else ``SKILLS__DIRS``'s; a root the user gave that is
    not a folder is bad usage (one line, exit 2)."""
    if dirs:
        missing = [str(d) for d in dirs if not d.is_dir()]
        if missing:
            raise fail(f"not a directory: {', '.join(missing)}", code=EXIT_USAGE)
        return list(dirs)
    with errors():
        return configured_roots(get_settings().skills)


def loaded_library(dirs: Sequence[Path] | None) -> tuple[SkillLibrary, SkillRegistry]:
    """The whole library of this command (:func:`roots_of` and the store's skills), loaded
    now, what was skipped said on stderr; and its skills. The store's skills are unpacked
    into a folder of this process's own, removed when the process exits."""
    settings = get_settings()
    roots = roots_of(dirs)
    folder = process_folder(settings.skills.uploaded_dir, "cli")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)

    async def load() -> tuple[SkillLibrary, SkillRegistry]:
        from skillweave.cli.compose import open_store  # the engines' stack, only when loading

        async with open_store(settings) as store:
            library = SkillLibrary(settings.skills, dirs=roots, store=store, folder=folder)
            return library, await library.reload()

    with errors():
        if err.is_terminal:
            with err.status("Scanning skill libraries…", spinner="dots"):
                library, registry = asyncio.run(load())
        else:
            library, registry = asyncio.run(load())
    print_diagnostics(registry.diagnostics, limit=MAX_SHOWN_WARNINGS)
    return library, registry


def registry_of(dirs: Sequence[Path] | None) -> SkillRegistry:
    """The skills of :func:`loaded_library`: a snapshot of the whole library."""
    return loaded_library(dirs)[1]


def directory_registry(dirs: Sequence[Path] | None) -> SkillRegistry:
    """The directory roots' skills alone (:func:`roots_of`), scanned now: the names they
    own, which the store's skills may not take (an install checks them)."""
    with errors():
        return SkillLibrary(get_settings().skills, dirs=roots_of(dirs)).refresh()


@contextlib.asynccontextmanager
async def opened_library(
    settings: Settings, *, roots: Sequence[Path]
) -> AsyncIterator[SkillLibrary]:
    """The whole library of a long-running command, over the settings' store while the
    context lasts, loaded now (what was skipped said on stderr). Its store skills are unpacked
    into ``settings.skills.uploaded_dir``, which must be this process's own
    (``skills.library.owned_folder``)."""
    from skillweave.cli.compose import open_store

    async with open_store(settings) as store:
        library = SkillLibrary(
            settings.skills, dirs=roots, store=store, folder=settings.skills.uploaded_dir
        )
        registry = await library.reload()
        print_diagnostics(registry.diagnostics, limit=MAX_SHOWN_WARNINGS)
        yield library
