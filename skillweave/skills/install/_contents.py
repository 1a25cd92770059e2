"""What a source holds, read and scanned but installed nowhere (:func:`list_source`): each
skill's name, folder, version, description, the marketplace plugins that list it, and its scan,
for ``skills install SOURCE --list`` and ``POST /v1/skills/install/preview``.

The source is read exactly as an install reads it (``_fetched``, ``_staged``: the same
confinement, limits and selection, ``--skill`` and ``--plugin`` included), and each package is
scanned by the scanner installs use (``skills.scan.scan_package``); nothing is stored, audited
or locked, since nothing changes. The scan policy's decision is the caller's to apply
(``ScanDecision.of(report, settings.skills.scan)``), as every door words it the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from skillweave.errors import PackageError
from skillweave.skills.install._fetched import fetched
from skillweave.skills.install._marketplace import Marketplace, read_marketplace
from skillweave.skills.install._plugins import marketplace_plugins, plugin_folders
from skillweave.skills.install._source import SkillSource
from skillweave.skills.install._staged import staged_skills
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, archive_version
from skillweave.skills.scan import ScanReport, scan_package

__all__ = ["ListedSkill", "SourceListing", "list_source"]


@dataclass(frozen=True, slots=True)
class ListedSkill:
    """One skill a source holds: what an install of it would store, and its scan."""

    name: str
    path: str
    version: str
    description: str
    plugins: tuple[str, ...]
    report: ScanReport


@dataclass(frozen=True, slots=True)
class SourceListing:
    """What a source holds: the commit read (a git source), its marketplace if it has one
    (or why the one it has cannot be read: its plugins cannot be installed), and its skills
    (those an install with the same options would take)."""

    source: SkillSource
    commit: str | None
    marketplace: Marketplace | None
    skills: tuple[ListedSkill, ...]
    marketplace_problem: str | None = None


async def list_source(
    source: SkillSource,
    *,
    only: Sequence[str] = (),
    plugins: Sequence[str] = (),
    limits: PackageLimits = DEFAULT_LIMITS,
    allowed: Sequence[str] | None = None,
) -> SourceListing:
    """Read `source` and scan what an install with `only` and `plugins` would take.

    Raises:
        PackageError, SkillFormatError: the source cannot be read, or a skill or plugin
            named is not in it (one line, as an install says it).
    """
    return await asyncio.to_thread(_list, source, tuple(only), tuple(plugins), limits, allowed)


def _list(
    source: SkillSource,
    only: tuple[str, ...],
    plugins: tuple[str, ...],
    limits: PackageLimits,
    allowed: Sequence[str] | None,
) -> SourceListing:
    with fetched(source, allowed=allowed) as got:
        problem = None
        try:
            marketplace = read_marketplace(got.root)
        except PackageError as exc:
            if plugins:
                raise
            # Its skills are listed all the same, as an install without --plugin takes them.
            marketplace, problem = None, str(exc)
        chosen = plugin_folders(got.root, marketplace, plugins) if plugins else None
        listed_by = chosen if chosen is not None else marketplace_plugins(marketplace, got.root)
        staged = staged_skills(
            got.root,
            only=only,
            limits=limits,
            submodules=got.submodules,
            folders=list(chosen) if chosen is not None else None,
        )
        by_path = {
            folder.resolve().relative_to(got.root.resolve()).as_posix(): names
            for folder, names in listed_by.items()
        }
        skills = []
        for skill in staged:
            _, version = archive_version(skill.package, limits=limits)
            skills.append(
                ListedSkill(
                    name=skill.name,
                    path="/".join(part for part in (source.path, skill.path) if part),
                    version=version,
                    description=skill.description,
                    plugins=by_path.get(skill.path or ".", ()),
                    report=scan_package(skill.package, version),
                )
            )
        return SourceListing(
            source=source,
            commit=got.commit,
            marketplace=marketplace,
            skills=tuple(skills),
            marketplace_problem=problem,
        )
