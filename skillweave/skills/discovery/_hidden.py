"""The hint for skills kept in hidden folders: :func:`hidden_skills_hint` and its diagnostic's
field, :data:`HIDDEN_SKILLS_FIELD`.

Hidden folders outside skills are walked only when ``include_hidden`` is set. Otherwise
``SkillScanner`` asks here about a root that yielded no skill: it is walked once more as if
they were included, and a diagnostic says how many ``SKILL.md`` files its hidden folders
hold, in which folders, and how to include them (libraries written for other agents keep
skills under ``skills/.curated/`` and the like). The CLI and strict validation match on
:data:`HIDDEN_SKILLS_FIELD` to say the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from skillweave.skills.discovery._found import FoundSkill
from skillweave.skills.discovery._walk import RootWalker
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.spec import Diagnostic

__all__ = ["HIDDEN_SKILLS_FIELD", "hidden_skills_hint"]

HIDDEN_SKILLS_FIELD: Final = "hidden folders"
"""The field of the diagnostic that says a root found no skills but its hidden folders hold
some (the CLI matches on it to say how to include them)."""
_SHOWN_HIDDEN_FOLDERS: Final = 5


def hidden_skills_hint(
    walker: RootWalker, root: Path, index: int, dirs_seen: list[tuple[str, int]]
) -> Diagnostic | None:
    """For a root that found no skills: walk it again with hidden folders included and,
    if that finds skill folders, the diagnostic that says where and how to include them.

    The folders of this walk join `dirs_seen` (the snapshot's), so that a skill added to a
    hidden folder later updates the hint."""
    probe: list[FoundSkill] = []
    probe_dirs: list[tuple[str, int]] = []
    walker.walk(root, index, probe, probe_dirs, [], include_hidden=True)
    seen = {path for path, _ in dirs_seen}
    dirs_seen += (entry for entry in probe_dirs if entry[0] not in seen)
    if not probe:
        return None
    folders: dict[str, int] = {}
    for item in probe:
        folder = _hidden_folder(os.path.relpath(item.path, root))
        folders[folder] = folders.get(folder, 0) + 1
    counts = sorted(folders.items())
    shown = ", ".join(f"{folder} ({count})" for folder, count in counts[:_SHOWN_HIDDEN_FOLDERS])
    if len(counts) > _SHOWN_HIDDEN_FOLDERS:
        shown += f" and {len(counts) - _SHOWN_HIDDEN_FOLDERS} more"
    message = (
        f"no skills found, but hidden folders here hold {len(probe)} {SKILL_FILE} "
        f"file(s), skipped because their folders start with '.': {shown}. To include "
        "them, set SKILLS__INCLUDE_HIDDEN=true (skills.include_hidden), or add each "
        "folder as a library root of its own (--dir, SKILLS__DIRS)"
    )
    return Diagnostic(str(root), HIDDEN_SKILLS_FIELD, message)


def _hidden_folder(relative: str) -> str:
    """The first hidden folder of a skill's path relative to its root, with the folders
    above it (``skills/.curated/pdf`` → ``skills/.curated``)."""
    parts = relative.split(os.sep)
    for position, part in enumerate(parts):
        if part.startswith("."):
            return "/".join(parts[: position + 1])
    return relative  # pragma: no cover - only skills under hidden folders are asked about
