"""The skills of a fetched source, found and packaged (:func:`staged_skills`): one skill, or
every skill of a repository of skills, each a ZIP under its frontmatter name with the
signature that came with it.

Called by the install flow (``_installation``) on a source ``_fetched`` has read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillweave.errors import PackageError, SkillFormatError
from skillweave.skills.files import SKILL_FILE, is_skipped_dir
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, build_package
from skillweave.skills.signing import SkillSignature, read_signature
from skillweave.skills.spec import name_problems

__all__ = ["ALL_SKILLS", "StagedSkill", "find_skills", "staged_skills"]

ALL_SKILLS: Final = "*"
"""``--skill '*'``: every skill of the source, as the open ``skills`` CLI reads it."""

_MAX_SKILLS: Final = 500
_MAX_DEPTH: Final = 6


@dataclass(frozen=True, slots=True)
class StagedSkill:
    """One skill found in a source, packaged: its name, where in the source, its ZIP, and the
    signature that came with it (``.skillweave-signature.json`` in its folder)."""

    name: str
    path: str
    package: bytes
    signature: SkillSignature | None = None
    description: str = ""


def find_skills(root: Path) -> list[Path]:
    """The skill folders of a source: `root` when it is one, else every top-most folder below
    it (hidden and VCS folders aside) that holds a SKILL.md; a skill's own sub-folders are
    its own (children), not found again.

    Raises:
        PackageError: no skill, or more than the installer takes at once.
    """
    if (root / SKILL_FILE).is_file():
        return [root]
    found: list[Path] = []
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or is_skipped_dir(entry.name):
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if (path / SKILL_FILE).is_file():
                found.append(path)
                if len(found) > _MAX_SKILLS:
                    raise PackageError(f"more than {_MAX_SKILLS} skills in one source")
            elif depth + 1 < _MAX_DEPTH:
                stack.append((path, depth + 1))
    if not found:
        raise PackageError(f"no {SKILL_FILE} in the source (looked {_MAX_DEPTH} folders deep)")
    return sorted(found)


def staged_skills(
    root: Path,
    *,
    only: Sequence[str] = (),
    limits: PackageLimits = DEFAULT_LIMITS,
    signature: SkillSignature | None = None,
    submodules: Sequence[Path] = (),
    folders: Sequence[Path] | None = None,
) -> list[StagedSkill]:
    """Every skill of a fetched source (those named in `only`, when given; ``*``: every
    one), packaged under its frontmatter name (a repository's root folder is rarely named
    like its skill), each with the signature in its folder (else `signature`: a ZIP's, beside
    it).

    Args:
        folders: the skill folders to take (a marketplace plugin's); None: every skill of
            the source (:func:`find_skills`).

    Raises:
        PackageError: a name of `only` is not in the source (the line lists those there are);
            a folder cannot be packaged; a submodule (of `submodules`) lies inside a skill.
        SkillFormatError: a SKILL.md has no readable name.
    """
    staged = []
    every = not only or ALL_SKILLS in only
    named: dict[Path, tuple[str, str]] = {}
    for folder in find_skills(root) if folders is None else folders:
        named[folder] = _skill_name(folder)
    for folder, (name, description) in named.items():
        if not every and name not in only:
            continue
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
        for link in submodules:
            if link.is_relative_to(folder):
                inner = link.relative_to(root).as_posix()
                raise PackageError(
                    f"{inner}: a submodule (another repository's commit) inside the skill"
                    f" {name!r}; an install reads no submodule: commit its files into this"
                    " repository, or install that repository on its own"
                )
        package = build_package(folder, limits=limits, top=name)
        staged.append(
            StagedSkill(
                name=name,
                path="" if relative == "." else relative,
                package=package,
                signature=read_signature(folder) or signature,
                description=description,
            )
        )
    missing = sorted(set(only) - {skill.name for skill in staged} - {ALL_SKILLS})
    if missing:
        there = ", ".join(sorted({name for name, _ in named.values()}))
        raise PackageError(
            f"the source has no skill named {', '.join(map(repr, missing))}; its skills: {there}"
        )
    return staged


def _skill_name(folder: Path) -> tuple[str, str]:
    where = f"{folder.name}/{SKILL_FILE}"
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillFormatError(where, f"cannot be read: {exc}") from None
    data = parse_frontmatter(text, path=where).data
    name = data.get("name")
    problems = name_problems(name) if isinstance(name, str) else ["no name"]
    if problems or not isinstance(name, str):
        raise SkillFormatError(where, f"name: {'; '.join(problems)}")
    description = data.get("description")
    return name, description if isinstance(description, str) else ""
