"""Skills an agent writes (``create_skill``): made into a skill folder, checked as strictly as
an upload, and packaged as a draft of the run that wrote it.

:func:`build_draft` writes the SKILL.md from the name and description the model gave (the
frontmatter is ours, so the model cannot smuggle fields into it) and its instructions as the
body, writes each file after checking its path, validates the folder strictly (every spec
violation refuses it, as an upload's), and returns its version (the digest of its files) and
its package (exactly the files the version hashes, what a sandbox receives). Deterministic:
the same skill always gives the same version and the same bytes, so a retried ``create_skill``
keeps one draft, never two.

What a draft may hold is bounded here: :data:`MAX_FILES` files, :data:`MAX_BYTES` bytes in
all; paths are relative, inside the folder, without hidden or odd names, and may not replace
the SKILL.md.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

import yaml

from skillweave.errors import SkillFormatError
from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.package import build_package
from skillweave.skills.spec import name_problems
from skillweave.skills.validation import validate_paths
from skillweave.skills.versioning import package_version

__all__ = ["MAX_BYTES", "MAX_FILES", "Draft", "build_draft"]

MAX_FILES: Final = 50
MAX_BYTES: Final = 1024 * 1024
MAX_DEPTH: Final = 4
_PART: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True, slots=True)
class Draft:
    """A validated skill an agent wrote: its version, its package and its files' bytes."""

    name: str
    version: str
    package: bytes
    files: Mapping[str, bytes]


def build_draft(
    name: str, description: str, instructions: str, files: Sequence[tuple[str, str]]
) -> Draft:
    """Make, check and package a skill from what the model gave.

    Raises:
        SkillFormatError: a bad name, path or file, or a spec violation (the first few, one
            line, naming each).
    """
    where = f"{name}/{SKILL_FILE}"
    problems = name_problems(name)
    if problems:
        raise SkillFormatError(where, f"name: {'; '.join(problems)}")
    if len(files) > MAX_FILES:
        raise SkillFormatError(name, f"{len(files)} files, over the {MAX_FILES}-file limit")
    front = yaml.safe_dump(
        {"name": name, "description": " ".join(description.split())},
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )
    skill_md = f"---\n{front}---\n\n{instructions.strip()}\n"
    contents: dict[str, bytes] = {SKILL_FILE: skill_md.encode("utf-8")}
    for path, text in files:
        relative = _checked_path(name, path)
        if relative in contents:
            raise SkillFormatError(f"{name}/{relative}", "given twice (or it is the SKILL.md)")
        contents[relative] = text.encode("utf-8")
    total = sum(len(data) for data in contents.values())
    if total > MAX_BYTES:
        raise SkillFormatError(name, f"{total} bytes, over the {MAX_BYTES}-byte limit")
    with tempfile.TemporaryDirectory(prefix="skillweave-draft-") as temp:
        folder = Path(temp) / name
        for relative, data in contents.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if relative.startswith("scripts/"):
                target.chmod(0o755)
        report = validate_paths([folder], strict=True)
        if report.errors:
            shown = "; ".join(
                f"{Path(d.path).relative_to(temp).as_posix()}: {d.field}: {d.message}"
                for d in report.errors[:3]
            )
            raise SkillFormatError(where, f"not a valid skill: {shown}")
        listed = sorted(iter_package_files(folder), key=lambda item: item[0])
        version = package_version((relative, entry.path) for relative, entry in listed)
        package = build_package(folder, include_children=False)
    return Draft(name=name, version=version, package=package, files=contents)


def _checked_path(name: str, path: str) -> str:
    pure = PurePosixPath(path.strip())
    parts = pure.parts
    if (
        not parts
        or pure.is_absolute()
        or len(parts) > MAX_DEPTH
        or not all(_PART.match(part) for part in parts)
    ):
        raise SkillFormatError(
            f"{name}/{path}",
            "a file path is relative, at most 4 folders deep, of letters, digits, '.', '_' "
            "and '-', and does not start with '.' (e.g. scripts/run.py)",
        )
    relative = pure.as_posix()
    if relative.lower() == SKILL_FILE.lower():
        raise SkillFormatError(
            f"{name}/{relative}", "the SKILL.md is made from name, description and instructions"
        )
    return relative
