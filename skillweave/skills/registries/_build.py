"""Building an index from a source (:func:`build_index`): what ``skillweave registry build``
writes, and how a ``marketplace`` registry is listed.

The source is read as an install reads it (``skills.install``: ``parse_source``, ``fetched``,
``staged_skills``: a git repository at a ref, a folder, a ZIP), so each entry's ``source``,
``commit`` and ``path`` are what an install reads again. Each skill's version is the digest of
its package (``skills.package.archive_version``, as the store and the manager compute it); it
is scanned by the scanner installs use (``skills.scan.scan_package``) and the settings' scan
policy decides; with a key each version is signed (``skills.signing.sign_version``) and the
index as a whole (``_index_signing``). A skill a source brings with its own signature keeps it
when it still matches; one without a description is left out and named.

Blocking work (git, ZIP, scan): callers run it in a thread. Called by ``cli.registry`` and by
the marketplace reader (``_readers``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillweave.config import SkillsSettings
from skillweave.errors import PackageError, SkillFormatError
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.install import (
    StagedSkill,
    fetched,
    parse_source,
    plugin_skill_folders,
    read_marketplace,
    staged_skills,
)
from skillweave.skills.library import package_limits
from skillweave.skills.package import archive_version
from skillweave.skills.registries._index import IndexEntry, RegistryIndex, ScanSummary
from skillweave.skills.registries._index_signing import sign_index
from skillweave.skills.scan import ScanReport, scan_package
from skillweave.skills.signing import SkillSignature, sign_version
from skillweave.skills.spec import DESCRIPTION_MAX_LENGTH

__all__ = [
    "BuiltEntry",
    "BuiltIndex",
    "Progress",
    "build_index",
    "index_name",
    "marketplace_plugins",
]

Progress = Callable[[str, int, int], None]
"""Told of each skill as it is done: its name, how many are done, how many in all."""

_LABEL_CHARS: Final = re.compile(r"[^A-Za-z0-9._@+-]+")


@dataclass(frozen=True, slots=True)
class BuiltEntry:
    """One skill of a built index, with its full scan report (for the builder's table)."""

    entry: IndexEntry
    report: ScanReport


@dataclass(frozen=True, slots=True)
class BuiltIndex:
    """A built index, its entries' reports, and the skills left out (one line each)."""

    index: RegistryIndex
    entries: tuple[BuiltEntry, ...]
    left_out: tuple[str, ...] = field(default=())


def index_name(text: str) -> str:
    """A name for the index of source `text`: its last path part, as an index name may be."""
    last = PurePosixPath(text.rstrip("/").replace("\\", "/").removesuffix(".git")).name
    return (_LABEL_CHARS.sub("-", last).strip("-._@+") or "skills")[:128]


def build_index(
    text: str,
    *,
    settings: SkillsSettings,
    name: str | None = None,
    ref: str | None = None,
    path: str | None = None,
    key: Ed25519PrivateKey | None = None,
    key_id: str | None = None,
    progress: Progress | None = None,
) -> BuiltIndex:
    """Read source `text` and index its skills, scanned, and signed with `key` when given.

    Args:
        text: what ``skills install`` takes (a git URL, ``owner/repo`` of
            ``settings.git_host``, a tree URL, a local repository, a folder, a ZIP).
        settings: ``skills`` (package limits, the scan policy).
        name: the index's name (default: from the source).
        ref: the branch, tag or commit of a git source to read.
        path: a sub-folder of the source to index.
        key: signs each version and the index.
        key_id: the key's id (default: its fingerprint).
        progress: told of each skill as it is done.

    Raises:
        PackageError, SkillFormatError: the source cannot be read or holds no skill.
        ConfigError: the key id is not valid.
    """
    source = parse_source(text, ref=ref, path=path, git_host=settings.git_host)
    with fetched(source) as got:
        staged = staged_skills(got.root, limits=package_limits(settings), submodules=got.submodules)
        # A marketplace file is at the repository's root: read when the whole source is.
        plugin_of = marketplace_plugins(got.root) if source.path is None else {}
        built: list[BuiltEntry] = []
        left_out: list[str] = []
        seen: set[str] = set()
        for done, skill in enumerate(staged, start=1):
            where = "/".join(part for part in (source.path, skill.path) if part) or None
            description = _description(got.root, skill)
            if skill.name in seen:
                left_out.append(f"{where or '.'}: a second skill named {skill.name!r}")
            elif description is None:
                left_out.append(
                    f"{where or '.'}: skill {skill.name!r} has no usable description "
                    f"(1-{DESCRIPTION_MAX_LENGTH} characters)"
                )
            else:
                seen.add(skill.name)
                built.append(
                    _entry(
                        skill,
                        settings,
                        source=source.location,
                        ref=source.ref,
                        commit=got.commit,
                        path=where,
                        description=description,
                        plugin=plugin_of.get(skill.path),
                        key=key,
                        key_id=key_id,
                    )
                )
            if progress is not None:
                progress(skill.name, done, len(staged))
    index = RegistryIndex.new(name or index_name(text), [b.entry for b in built])
    if key is not None:
        index = sign_index(index, key, key_id=key_id)
    return BuiltIndex(index=index, entries=tuple(built), left_out=tuple(left_out))


def marketplace_plugins(root: Path) -> dict[str, str]:
    """Skill folder (relative to `root`) → the first plugin of `root`'s marketplace
    (``.claude-plugin/marketplace.json``) that lists it; empty without one. Plugins not
    installable from this repository, or whose folders cannot be read, list nothing.

    Raises:
        PackageError: the marketplace file is malformed (one line).
    """
    marketplace = read_marketplace(root)
    if marketplace is None:
        return {}
    base = root.resolve()
    found: dict[str, str] = {}
    for plugin in marketplace.plugins:
        if plugin.unavailable is not None:
            continue
        try:
            folders = plugin_skill_folders(root, plugin)
        except PackageError:
            continue
        for folder in folders:
            found.setdefault(folder.relative_to(base).as_posix(), plugin.name)
    return found


def _entry(
    skill: StagedSkill,
    settings: SkillsSettings,
    *,
    source: str,
    ref: str | None,
    commit: str | None,
    path: str | None,
    description: str,
    plugin: str | None,
    key: Ed25519PrivateKey | None,
    key_id: str | None,
) -> BuiltEntry:
    _, version = archive_version(skill.package, limits=package_limits(settings))
    report = scan_package(skill.package, version)
    signature: SkillSignature | None = None
    if key is not None:
        signature = sign_version(key, name=skill.name, version=version, key_id=key_id)
    elif skill.signature is not None and (skill.signature.name, skill.signature.version) == (
        skill.name,
        version,
    ):
        signature = skill.signature  # the source's own, still matching its files
    entry = IndexEntry(
        name=skill.name,
        description=description,
        source=source,
        ref=ref,
        commit=commit,
        path=path,
        version=version,
        signature=signature,
        scan=ScanSummary(
            summary=report.summary(),
            decision=report.decision(settings.scan),
            counts={severity: n for severity, n in report.counts.items() if n},
            scanner=report.scanner[:200],
        ),
        plugin=plugin,
    )
    return BuiltEntry(entry=entry, report=report)


def _description(root: Path, skill: StagedSkill) -> str | None:
    folder = root / skill.path if skill.path else root
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
        value = parse_frontmatter(text, path=f"{skill.path}/{SKILL_FILE}").data.get("description")
    except (OSError, UnicodeDecodeError, SkillFormatError):
        return None
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value if 0 < len(value) <= DESCRIPTION_MAX_LENGTH else None
