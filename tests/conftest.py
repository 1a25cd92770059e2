"""Shared fixtures, and the markers that say what a test costs (STYLE.md rule 17).

Tests under tests/integration/ are marked `integration` automatically. Tests are marked `slow`
by where they live (:data:`SLOW_PATHS`), and every `integration` test is `slow` too: ``make
test-fast`` runs ``-m "not slow"``, ``make test`` everything. tests/test_markers.py guards
the split.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Final

import pytest

from skillweave.config import get_settings

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
BUNDLED_SKILLS = REPO / "skills"

collect_ignore_glob = ["data/*"]
"""Skills kept as data (the scanner's corpora) are not tests, whatever their scripts are named."""

MakeSkill = Callable[..., Path]

SLOW_PATHS: Final = (
    "integration/*",  # real servers from fixtures: Temporal, moto, manager, executors, kmock
    "reliability/*",  # chaos, load, length and hostile suites on the real stack
    "*bench*",  # benchmarks (their --quick mode), environment builds among them
    "mcp_manager/test_environments.py",  # real pip and npm builds in the build sandbox
    "api/test_runs.py",  # a real manager with sandboxed executor processes behind the API
    "api/test_openapi_schema.py",  # the same, behind every operation of the schema
)
"""Test files (fnmatch patterns under tests/, ``*`` crossing folders) whose tests are `slow`:
each starts real servers or processes, or builds environments, and takes seconds."""


def is_slow_path(path: Path) -> bool:
    """Whether the tests of the file at `path` are `slow` by where it lives."""
    path = path.resolve()
    if not path.is_relative_to(TESTS):
        return False
    relative = path.relative_to(TESTS).as_posix()
    return any(fnmatch(relative, pattern) for pattern in SLOW_PATHS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Runs before pytest deselects by `-m`: a conftest's hook comes before the plugins'.
    for item in items:
        if item.path.resolve().is_relative_to(TESTS / "integration"):
            item.add_marker(pytest.mark.integration)
        if is_slow_path(item.path) or item.get_closest_marker("integration") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _settings_read_afresh() -> Iterator[None]:
    """Every test reads the settings of its own environment: ``get_settings`` is cached per
    process, and a test that ran first must not decide what a later one's CLI sees."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(autouse=True)
def _own_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's default store and folder of unpacked store skills are its own, never the
    developer's ~/.skillweave: commands that read the whole library (``skills list``, ``run``)
    read the settings' store. Set in the environment, so the CLI subprocesses a test starts
    inherit it; a test that sets its own (environment or settings) wins."""
    home = tmp_path_factory.mktemp("skillweave-home")
    monkeypatch.setenv("STORAGE__BACKEND", "local")
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(home / "store"))
    monkeypatch.setenv("SKILLS__UPLOADED_DIR", str(home / "uploaded-skills"))


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
