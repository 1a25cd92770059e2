"""ARCHITECTURE.md is the map of the product: every product module is on it, named by its path,
and every path it names exists. A module added, moved or removed without its line fails here,
in the fast loop.

Product modules are the ``.py`` files under ``skillweave/``, ``workflows/``, ``activities/``,
``mcp_manager/`` and ``sandbox_executor/``. A package's ``__init__.py`` (its front) is named
either by that path or by the package's folder (``mcp_manager/kubernetes/``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
MAP: Final = ROOT / "ARCHITECTURE.md"
PRODUCT: Final = ("skillweave", "workflows", "activities", "mcp_manager", "sandbox_executor")

_TOKEN: Final = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]*)*")
"""A word or a path (``skillweave/agent/effects.py``, a folder ``mcp_manager/kubernetes/``)."""

FILE_WORDS: Final = frozenset({".py", "__init__.py", "__main__.py", "execute.py"})
"""Names the map uses for kinds of files, not for one module: any ``.py``, a package's front,
a skill's root ``execute.py``. Any other ``.py`` name must be a path from the root."""


def product_modules() -> list[str]:
    """Every product module, as a path from the repository's root."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for root in PRODUCT
        for path in (ROOT / root).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def named_paths(text: str) -> set[str]:
    """The paths `text` names: words with a slash, or ending in ``.py`` (a sentence's full stop
    or comma after one left off)."""
    tokens = (token.rstrip(".,") for token in _TOKEN.findall(text))
    return {token for token in tokens if "/" in token or token.endswith(".py")}


def top_level() -> set[str]:
    """The entries at the repository's root (a path that starts with one is a repository path;
    ``scripts/x.py`` inside a skill is not)."""
    return {entry.name for entry in ROOT.iterdir()}


def test_every_product_module_is_on_the_map() -> None:
    named = named_paths(MAP.read_text(encoding="utf-8"))
    missing = [
        module
        for module in product_modules()
        if module not in named
        and not (module.endswith("/__init__.py") and module.removesuffix("__init__.py") in named)
    ]
    assert not missing, (
        "ARCHITECTURE.md has no line (what it owns, by its path) for:\n" + "\n".join(missing)
    )


def test_every_path_on_the_map_exists() -> None:
    roots = top_level()
    stale = []
    for path in sorted(named_paths(MAP.read_text(encoding="utf-8"))):
        if path.endswith(".py") and "/" not in path and path not in FILE_WORDS:
            stale.append(f"{path}: name a module by its path from the repository's root")
        elif path.split("/", 1)[0] in roots and not (ROOT / path).exists():
            stale.append(f"{path}: no such file or folder")
    assert not stale, "ARCHITECTURE.md names what is not there:\n" + "\n".join(stale)


def test_the_map_reader_finds_paths_and_folders() -> None:
    text = (
        "`skillweave/agent/effects.py` (see `mcp_manager/kubernetes/`), "
        "skillweave/lazy.py. and `effects.py`, not `run_skill_script`"
    )
    assert named_paths(text) == {
        "skillweave/agent/effects.py",
        "mcp_manager/kubernetes/",
        "skillweave/lazy.py",
        "effects.py",
    }
