"""A skill registry for tests of installs an agent asks for: a local git repository holding
skills, and a static JSON index of it (``skillweave registry build``'s), as a
``SKILLS__REGISTRIES`` entry labelled :data:`LABEL`.

Used by ``tests/agent/test_acquisition.py``, ``tests/engines/test_acquisition.py`` and
``tests/integration/temporal/test_acquisition.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Final

from skillweave.config import SkillsSettings
from skillweave.skills.registries import build_index

LABEL: Final = "lab"
"""The registry's label (what hits and origins name)."""

TALLY: Final = "word-tally"
"""The registry skill every test asks for: it counts the words of its arguments."""

TALLY_PY: Final = "import sys\nprint('tally:', len(' '.join(sys.argv[1:]).split()))\n"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)},
    )
    return done.stdout.strip()


def skill_repository(root: Path, skills: dict[str, dict[str, str]] | None = None) -> Path:
    """A git repository at `root` laid out like a public skill library: ``skills/<name>/``
    per skill (default: :data:`TALLY`), each `skills[name]` its files besides SKILL.md."""
    skills = skills if skills is not None else {TALLY: {"scripts/tally.py": TALLY_PY}}
    root.mkdir(parents=True, exist_ok=True)
    for name, files in skills.items():
        folder = root / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Tallies the words of a text. Use when words "
            f"must be tallied.\n---\n\n# {name}\n\nRun scripts/tally.py with the text as "
            "arguments.\n"
        )
        for path, text in files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "skills")
    return root


def write_index(repo: Path, index: Path, *, settings: SkillsSettings | None = None) -> Path:
    """The static index of `repo` at `index` (``skillweave registry build``'s)."""
    built = build_index(str(repo), settings=settings or SkillsSettings(), name="lab-index")
    index.write_bytes(built.index.to_json())
    return index


def registry_settings(index: Path) -> dict[str, Any]:
    """The ``skills`` settings of a registry: ``SKILLS__REGISTRIES`` naming `index`, labelled
    :data:`LABEL`, read afresh on every search, its cache beside it (never the developer's)."""
    return {
        "registries": [{"kind": "index", "location": str(index), "name": LABEL}],
        "registry_cache_seconds": 0,
        "registry_cache_dir": str(index.parent / "registry-cache"),
    }


def lie_about_version(index: Path, name: str, version: str) -> None:
    """Rewrite `index` so that its entry `name` claims `version` (a registry that lies)."""
    document = json.loads(index.read_text())
    for entry in document["skills"]:
        if entry["name"] == name:
            entry["version"] = version
            entry.pop("signature", None)
    index.write_text(json.dumps(document))


def commit_change(repo: Path, path: str, text: str) -> str:
    """Commit `text` at `path` in `repo`; the new commit id."""
    (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return _git(repo, "rev-parse", "HEAD")
