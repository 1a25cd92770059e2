"""The table ``skills install`` and ``update`` print (``cli.install_table``): the source and the
skill's registry and folder in it are shown apart and named (never ``source//path``), for local
folders and git URLs alike, in the words every door uses (``skills.stored.origin_text``)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from skillweave.cli import install_table
from skillweave.skills.stored import SkillOrigin, origin_text


def _row(
    source: str,
    *,
    ref: str | None = None,
    path: str | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    return {
        "name": "pdf-tools",
        "version": "9" * 64,
        "enabled": True,
        "source": source,
        "registry": registry,
        "ref": ref,
        "path": path,
        "commit": "c" * 40 if ref or source.endswith(".git") else None,
        "scan": "no findings",
        "decision": "allow",
        "warning": None,
    }


@pytest.mark.parametrize(
    ("source", "ref", "path", "registry", "shown"),
    [
        ("/home/alice/lib", None, None, None, "/home/alice/lib"),
        ("/home/alice/lib", None, "pdf-tools", None, "/home/alice/lib (path pdf-tools)"),
        (
            "https://example.com/acme/skills.git",
            "v1",
            "skills/pdf-tools",
            None,
            "https://example.com/acme/skills.git (path skills/pdf-tools, ref v1, "
            "commit 0123456789ab)",
        ),
        (
            "file:///srv/skills",
            "main",
            None,
            None,
            "file:///srv/skills (ref main, commit 0123456789ab)",
        ),
        (
            "https://example.com/acme/skills.git",
            "v1",
            "skills/pdf-tools",
            "acme",
            "https://example.com/acme/skills.git (registry acme, path skills/pdf-tools, ref v1, "
            "commit 0123456789ab)",
        ),
    ],
)
def test_an_origin_in_words(
    source: str, ref: str | None, path: str | None, registry: str | None, shown: str
) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567" if ref else None
    kind = "git" if ref else "folder"
    origin = SkillOrigin(
        source=source, kind=kind, ref=ref, path=path, commit=commit, registry=registry
    )
    assert origin_text(origin) == shown


def test_the_table_shows_source_and_path_apart_at_80_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(install_table, "out", Console(file=buffer, color_system=None, width=80))
    rows = [
        _row("file:///home/alice/my-skills", path="pdf-tools"),
        _row("https://example.com/acme/skills.git", ref="v1", path="skills/pdf-tools"),
        _row("https://example.com/lab/skills.git", path="skills/pdf-tools", registry="lab"),
    ]
    install_table.show_installed(rows, as_json=False, verb="installed")
    printed = buffer.getvalue()
    assert all(len(line) <= 80 for line in printed.splitlines())
    words = printed.split()
    # Each source whole on its line; its path, ref and commit named, on the line below.
    assert "file:///home/alice/my-skills" in words
    assert "https://example.com/acme/skills.git" in words
    assert "path pdf-tools" in printed
    assert "path skills/pdf-tools, ref v1, commit cccccccccccc" in " ".join(words)
    assert "registry lab, path skills/pdf-tools, commit cccccccccccc" in " ".join(words)
    assert "//pdf-tools" not in printed
    assert "//skills/" not in printed
    assert printed.rstrip().endswith("installed 3 skills")
