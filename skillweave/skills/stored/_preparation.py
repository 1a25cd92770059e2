"""Turning an upload into a canonical package: :class:`PackagePreparer` and what it makes,
:class:`PreparedPackage`.

A SKILL.md posted as text or a ZIP package is written to a temporary folder, validated
strictly (every spec violation refuses it), checked against the name and description the
caller gave, and rebuilt with ``build_package`` so that the stored bytes are canonical. Its
version is the sha256 of its files (``versioning.package_version``, child skills included).
Nothing is written to the store here: ``StoredSkills`` stores what this prepared. Blocking
(files and CPU): the caller runs it in a thread.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillweave.errors import PackageError, SkillFormatError
from skillweave.skills.files import SKILL_FILE, is_skipped_dir, is_skipped_file, iter_package_files
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.package import PackageLimits, build_package, extract_package
from skillweave.skills.spec import name_problems
from skillweave.skills.stored._ownership import package_skills
from skillweave.skills.validation import validate_paths
from skillweave.skills.versioning import package_version

__all__ = ["PackagePreparer", "PreparedPackage", "check_name"]

# Folders archivers add beside the content; they never make a package "two skills".
_IGNORED_TOP_LEVEL: Final = frozenset({"__MACOSX"})


@dataclass(frozen=True, slots=True)
class PreparedPackage:
    """A validated, canonical package ready to store."""

    name: str
    description: str
    version: str
    files: list[str]
    data: bytes

    @property
    def skills(self) -> list[tuple[str, str]]:
        """``(where in the package, name)`` of every skill in it, the top first."""
        return package_skills(self.name, self.files)

    def expect(self, version: str | None) -> None:
        """Refuse the package unless its version is `version` (a locked install; None: any).

        Raises:
            PackageError: its files hash to another version.
        """
        if version is not None and self.version != version:
            raise PackageError(
                f"{self.name}: its files hash to version {self.version[:12]}, not the"
                f" locked {version[:12]}: the source (or the lock) changed since; check it,"
                " then `skillweave skills update` locks what it holds now"
            )


class PackagePreparer:
    """Validates uploads strictly and builds their canonical packages.

    Args:
        limits: what one package may hold (extraction and building both refuse more).
    """

    def __init__(self, limits: PackageLimits) -> None:
        self.limits = limits

    def content(self, name: str, description: str, content: str) -> PreparedPackage:
        """A skill given as the text of its SKILL.md (`name` already checked)."""
        with tempfile.TemporaryDirectory(prefix="skillweave-upload-") as temp:
            folder = Path(temp) / name
            folder.mkdir()
            (folder / SKILL_FILE).write_text(content, encoding="utf-8")
            return self._folder(folder, temp=Path(temp), name=name, description=description)

    def package(self, data: bytes, name: str | None, description: str | None) -> PreparedPackage:
        """A skill uploaded as a ZIP, holding exactly one top skill."""
        if name is not None:
            check_name(name, where="name")
        with tempfile.TemporaryDirectory(prefix="skillweave-upload-") as temp:
            extracted = Path(temp) / "package"
            skill_dirs = extract_package(data, extracted, limits=self.limits)
            top = skill_dirs[0]
            if top == extracted:
                # A SKILL.md at the archive's root: the folder takes the frontmatter's name.
                top = extracted.rename(Path(temp) / _frontmatter_name(extracted))
            else:
                _check_single_top(extracted, top)
            return self._folder(top, temp=Path(temp), name=name, description=description)

    def _folder(
        self, folder: Path, *, temp: Path, name: str | None, description: str | None
    ) -> PreparedPackage:
        """Validate a skill folder strictly and build its canonical package."""
        report = validate_paths([folder], strict=True)
        if report.errors:
            shown = "; ".join(
                _relative(d.path, temp) + f": {d.field}: {d.message}" for d in report.errors[:5]
            )
            more = f" (and {len(report.errors) - 5} more)" if len(report.errors) > 5 else ""
            raise SkillFormatError(
                _relative(str(folder), temp), f"not a valid skill: {shown}{more}"
            )
        front = parse_frontmatter(
            (folder / SKILL_FILE).read_text(encoding="utf-8"), path=f"{folder.name}/{SKILL_FILE}"
        )
        skill_name = str(front.data["name"])
        skill_description = " ".join(str(front.data["description"]).split())
        where = f"{folder.name}/{SKILL_FILE}"
        if name is not None and name != skill_name:
            raise SkillFormatError(
                where, f"the frontmatter name {skill_name!r} does not match the name {name!r}"
            )
        if description is not None and " ".join(description.split()) != skill_description:
            raise SkillFormatError(
                where, "the frontmatter description does not match the description given"
            )
        files = sorted(iter_package_files(folder, include_children=True), key=lambda item: item[0])
        version = package_version((relative, entry.path) for relative, entry in files)
        data = build_package(folder, limits=self.limits)
        return PreparedPackage(
            name=skill_name,
            description=skill_description,
            version=version,
            files=[relative for relative, _ in files],
            data=data,
        )


def check_name(name: str, *, where: str) -> None:
    """Refuse a name the spec does not allow.

    Raises:
        SkillFormatError: `name` breaks a spec rule; `where` says which field gave it.
    """
    problems = name_problems(name)
    if problems:
        raise SkillFormatError(where, f"{name!r} is not a valid skill name: {'; '.join(problems)}")


def _relative(path: str, temp: Path) -> str:
    try:
        return str(Path(path).relative_to(temp))
    except ValueError:
        return path


def _frontmatter_name(folder: Path) -> str:
    front = parse_frontmatter(
        (folder / SKILL_FILE).read_text(encoding="utf-8", errors="replace"), path=SKILL_FILE
    )
    name = front.data.get("name")
    if not isinstance(name, str) or name_problems(name):
        raise SkillFormatError(SKILL_FILE, f"name {name!r} is missing or not a valid skill name")
    return name


def _check_single_top(extracted: Path, top: Path) -> None:
    """The archive holds one top folder, the skill, and nothing beside it."""
    if top.parent != extracted:
        raise PackageError(
            f"{top.relative_to(extracted).as_posix()}/{SKILL_FILE}: the skill must be at the"
            " archive's root or in its one top folder"
        )
    for entry in extracted.iterdir():
        if entry == top or entry.name in _IGNORED_TOP_LEVEL:
            continue
        if entry.is_dir() and is_skipped_dir(entry.name):
            continue
        if entry.is_file() and is_skipped_file(entry.name):
            continue
        raise PackageError(
            f"{entry.name}: the archive must hold one top skill folder ({top.name}/) and"
            " nothing beside it"
        )
