"""Shared fixtures. Tests under tests/integration/ are marked `integration` automatically."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skillweave.config import get_settings

REPO = Path(__file__).resolve().parents[1]
BUNDLED_SKILLS = REPO / "skills"

MakeSkill = Callable[..., Path]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _settings_read_afresh() -> Iterator[None]:
    """Every test reads the settings of its own environment: ``get_settings`` is cached per
    process, and a test that ran first must not decide what a later one's CLI sees."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def write_skill(
    folder: Path,
    *,
    name: str | None = None,
    description: str | None = "Does a thing. Use when a thing must be done.",
    body: str = "# Instructions\n\nDo the thing.\n",
    extra: str = "",
    files: dict[str, str | bytes] | None = None,
) -> Path:
    """Create a skill folder with a SKILL.md and optional files; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---"]
    lines.append(f"name: {name if name is not None else folder.name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(textwrap.dedent(extra).strip("\n"))
    lines.append("---")
    (folder / "SKILL.md").write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
    for relative, content in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return folder


@pytest.fixture
def make_skill(tmp_path: Path) -> MakeSkill:
    """Create skill folders under tmp_path/lib (or a given root)."""

    def make(relative: str, *, root: Path | None = None, **kwargs: object) -> Path:
        return write_skill((root or tmp_path / "lib") / relative, **kwargs)  # type: ignore[arg-type]

    return make
