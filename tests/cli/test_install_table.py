"""The table ``skills install`` and ``update`` print: the source and the skill's folder in it
are shown apart and named (never ``source//path``), for local folders and git URLs alike."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from skillweave.cli import install
from skillweave.cli.install import shown_source


def _row(source: str, *, ref: str | None = None, path: str | None = None) -> dict[str, Any]:
    return {
        "name": "pdf-tools",
        "version": "9" * 64,
        "enabled": True,
        "source": source,
        "ref": ref,
        "path": path,
        "commit": "c" * 40 if ref or source.endswith(".git") else None,
        "scan": "no findings",
        "decision": "allow",
        "warning": None,
    }


@pytest.mark.parametrize(
    ("source", "ref", "path", "shown"),
    [
        ("/home/alice/lib", None, None, "/home/alice/lib"),
        ("/home/alice/lib", None, "pdf-tools", "/home/alice/lib (path pdf-tools)"),
        (
            "https://example.com/acme/skills.git",
            "v1",
            "skills/pdf-tools",
            "https://example.com/acme/skills.git (path skills/pdf-tools, ref v1, "
            "commit 0123456789ab)",
        ),
        ("file:///srv/skills", "main", None, "file:///srv/skills (ref main, commit 0123456789ab)"),
    ],
)
def test_shown_source(source: str, ref: str | None, path: str | None, shown: str) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567" if ref else None
    assert shown_source(source, path=path, ref=ref, commit=commit) == shown


def test_the_table_shows_source_and_path_apart_at_80_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(install, "out", Console(file=buffer, color_system=None, width=80))
    rows = [
        _row("file:///home/alice/my-skills", path="pdf-tools"),
        _row("https://example.com/acme/skills.git", ref="v1", path="skills/pdf-tools"),
    ]
    install._show(rows, as_json=False, verb="installed")
    printed = buffer.getvalue()
    assert all(len(line) <= 80 for line in printed.splitlines())
    words = printed.split()
    # Each source whole on its line; its path, ref and commit named, on the line below.
    assert "file:///home/alice/my-skills" in words
    assert "https://example.com/acme/skills.git" in words
    assert "path pdf-tools" in printed
    assert "path skills/pdf-tools, ref v1, commit cccccccccccc" in " ".join(words)
    assert "//pdf-tools" not in printed
    assert "//skills/" not in printed
    assert printed.rstrip().endswith("installed 2 skills")
