"""The skill library a command reads: ``--dir`` roots or ``SKILLS__DIRS``, scanned with a
spinner on a terminal, its load-time diagnostics on stderr.

Used by every command that needs skills (``skills``, ``run``, ``demo``, ``worker``, ``dev``,
``sandbox run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Final

import typer
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.errors import EXIT_USAGE, errors, fail
from skillweave.config import get_settings
from skillweave.skills import Diagnostic, SkillLibrary, SkillRegistry
from skillweave.terminal import terminal_safe

__all__ = ["DirsOption", "library_of", "print_diagnostics", "registry_of", "scanned_library"]

DirsOption = Annotated[
    list[Path] | None,
    typer.Option("--dir", "-d", help="Skill library root (repeatable; overrides SKILLS__DIRS)."),
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


def library_of(dirs: list[Path] | None) -> SkillLibrary:
    """The library of the `dirs` roots, else of ``SKILLS__DIRS``; a missing root is bad usage."""
    settings = get_settings().skills
    if dirs:
        missing = [str(d) for d in dirs if not d.is_dir()]
        if missing:
            raise fail(f"not a directory: {', '.join(missing)}", code=EXIT_USAGE)
    with errors():
        return SkillLibrary(settings, dirs=dirs or None)


def scanned_library(dirs: list[Path] | None) -> tuple[SkillLibrary, SkillRegistry]:
    """:func:`library_of`, scanned now (what was skipped is said on stderr), and its skills;
    a long-running command keeps the library to reload it."""
    library = library_of(dirs)
    if err.is_terminal:
        with err.status("Scanning skill libraries…", spinner="dots"):
            registry = library.refresh()
    else:
        registry = library.refresh()
    print_diagnostics(registry.diagnostics, limit=MAX_SHOWN_WARNINGS)
    return library, registry


def registry_of(dirs: list[Path] | None) -> SkillRegistry:
    """The skills of :func:`library_of`, scanned now; what was skipped is said on stderr."""
    return scanned_library(dirs)[1]
