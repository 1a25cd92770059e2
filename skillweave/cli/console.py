"""The CLI's two consoles and how it writes text that others wrote.

Commands print exact texts (catalog, activation payload) to stdout, tables and progress to
the terminal, and diagnostics to stderr; ``--json`` gives machine-readable output. Text that
comes from scripts, models, skill libraries or remote services is attacker-controlled: it is
printed through :func:`~skillweave.terminal.terminal_safe` (control characters shown as
escapes) and in a ``rich.text.Text`` (never read as markup or emoji codes), and JSON through
:func:`dump` (:func:`~skillweave.terminal.terminal_safe_json`: the same values, with the
characters a terminal would act on written as ``\\u`` escapes).

Every command module prints on :data:`out` and :data:`err`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from skillweave.terminal import terminal_safe_json

__all__ = ["JsonOption", "dump", "err", "out", "shown_path"]

out = Console(highlight=False)
"""stdout: what a command answers."""
err = Console(stderr=True, highlight=False)
"""stderr: diagnostics, progress, notes."""

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def dump(data: object) -> None:
    """`data` as indented JSON on stdout, with what a terminal would act on escaped."""
    sys.stdout.write(terminal_safe_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


def shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
