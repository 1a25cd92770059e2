"""One installation: the skills of a source stored as uploaded skills with their origin, all
or none (:func:`install_skills`).

The source is fetched (``_fetched``) and its skills staged (``_staged``) in a worker thread;
each is then admitted (signature and scan, ``skills.admission``) and the audit log records the
install before :class:`~skillweave.skills.stored.StoredSkills` stores any. Called by
``skillweave skills install`` (``cli.install``) and ``POST /v1/skills/install``
(``api.skill_writes``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillweave.errors import PackageError
from skillweave.skills.admission import Admissions
from skillweave.skills.install._fetched import fetched
from skillweave.skills.install._marketplace import read_marketplace
from skillweave.skills.install._plugins import plugin_folders
from skillweave.skills.install._skills_cli_lock import SKILLS_CLI_LOCK, skills_cli_hash
from skillweave.skills.install._source import SkillSource
from skillweave.skills.install._staged import StagedSkill, staged_skills
from skillweave.skills.package import PackageLimits
from skillweave.skills.signing import read_signature
from skillweave.skills.stored import Check, SkillOrigin, StoredSkill, StoredSkills
from skillweave.storage.audit import AuditEntry

__all__ = ["HashCheck", "Installed", "install_skills"]


HashCheck = Literal["verified", "unverifiable"]
"""What became of a ``skills-lock.json`` ``computedHash``: it matched, or it cannot be
reproduced here (``_skills_cli_lock.skills_cli_hash``); a mismatch refuses the install."""


@dataclass(frozen=True, slots=True)
class Installed:
    """One installed skill: its stored record, the version installed and its origin, and
    what became of the ``computedHash`` it was installed against (None: none given)."""

    record: StoredSkill
    version: str
    origin: SkillOrigin
    cli_hash: HashCheck | None = None


async def install_skills(
    stored: StoredSkills,
    source: SkillSource,
    *,
    only: Sequence[str] = (),
    plugins: Sequence[str] = (),
    reserved: Mapping[str, str] | Collection[str] = (),
    commit: str | None = None,
    expect: Mapping[str, str] | None = None,
    cli_hashes: Mapping[str, str] | None = None,
    admissions: Admissions | None = None,
    allowed: Sequence[str] | None = None,
    registry: str | None = None,
) -> list[Installed]:
    """Install the skills of `source` (those named in `only`) as uploaded skills, all or none.

    Args:
        stored: where they go.
        source: where they come from.
        only: the names to install (default, or ``*``: every skill of the source).
        plugins: install the skills of these plugins of the source's marketplace
            (``.claude-plugin/marketplace.json``; `only` narrows them further).
        reserved: names other sources own (directory skills): refused.
        commit: read a git source at this commit (a locked install).
        expect: name → the version it must have (a locked install); refused otherwise.
        cli_hashes: name → the ``computedHash`` the open ``skills`` CLI's lock gives it:
            checked against its folder before anything is stored; refused when it differs
            (one it cannot reproduce is reported as ``unverifiable``).
        admissions: the signature and scan checks of each version, and the audit log's
            records of them and of the install, all before any is stored
            (``skills.admission``; None: neither checked nor recorded).
        allowed: an allowlist the source's real path must match too (the API's
            ``SKILLS__INSTALL_SOURCES``); None: any source (the CLI's user reads it).
        registry: the label of the skill registry the source was found in, kept on each
            origin (an install an agent asked for, or one ``skills find`` printed); None:
            not from a registry.

    Raises:
        PackageError, SkillFormatError, SkillNameTakenError: one line, nothing stored.
        SignatureError, SkillScanError: what `admissions` refuses; nothing stored.
        AuditLogError: the audit log cannot record the install; nothing stored.
    """
    staged, resolved, checks = await asyncio.to_thread(
        _fetch_and_stage,
        source,
        _Selection(tuple(only), tuple(plugins), dict(cli_hashes or {})),
        commit,
        stored.limits,
        allowed,
    )
    missing = sorted(set(expect or {}) - {skill.name for skill in staged})
    if missing:
        raise PackageError(f"{source.location}: no skill {', '.join(map(repr, missing))} any more")
    origins = [
        SkillOrigin(
            source=source.location,
            kind=source.kind,
            ref=source.ref,
            path="/".join(part for part in (source.path, skill.path) if part) or None,
            commit=resolved,
            registry=registry,
        )
        for skill in staged
    ]
    if admissions is not None:
        admissions.signatures.update(
            {skill.name: skill.signature for skill in staged if skill.signature is not None}
        )
    records = await stored.add_packages(
        [
            (skill.package, origin, (expect or {}).get(skill.name))
            for skill, origin in zip(staged, origins, strict=True)
        ],
        reserved=reserved,
        check=_announcing(admissions, stored, origins) if admissions is not None else None,
    )
    if admissions is not None:
        for record in records:
            await admissions.keep(record.name)
    return [
        Installed(
            record=record, version=record.latest, origin=origin, cli_hash=checks.get(record.name)
        )
        for record, origin in zip(records, origins, strict=True)
    ]


def _announcing(
    admissions: Admissions, stored: StoredSkills, origins: Sequence[SkillOrigin]
) -> Check:
    """The ``check`` of one install's packages (called once each, in order): each admitted
    (``Admissions.check``: its scan and signature recorded), then, once the last one is, the
    ``install`` (or ``update``) records of them all, before any is stored. A record that
    cannot be written raises ``AuditLogError`` from here, and nothing is stored."""
    checked: list[tuple[str, str, bool]] = []

    async def check(name: str, version: str, package: bytes) -> bool:
        held = await admissions.check(name, version, package)
        checked.append((name, version, held))
        if len(checked) == len(origins):
            entries = [
                _install_entry(name, version, held, origin, await stored.get(name))
                for (name, version, held), origin in zip(checked, origins, strict=True)
            ]
            await admissions.announce(entries)
        return held

    return check


def _install_entry(
    name: str, version: str, held: bool, origin: SkillOrigin, earlier: StoredSkill | None
) -> AuditEntry:
    """The record of installing `version` of `name` (an ``update`` of an `earlier` one)."""
    return AuditEntry(
        event="update" if earlier is not None else "install",
        skill=name,
        version=version,
        details={
            "previous": earlier.latest if earlier is not None else None,
            # What the store will make of it: held off, or as the earlier version was.
            "enabled": (earlier.enabled if earlier is not None else True) and not held,
            **origin.model_dump(),
        },
    )


@dataclass(frozen=True, slots=True)
class _Selection:
    only: tuple[str, ...]
    plugins: tuple[str, ...]
    cli_hashes: dict[str, str]


def _fetch_and_stage(
    source: SkillSource,
    selection: _Selection,
    commit: str | None,
    limits: PackageLimits,
    allowed: Sequence[str] | None,
) -> tuple[list[StagedSkill], str | None, dict[str, HashCheck]]:
    with fetched(source, commit=commit, allowed=allowed) as got:
        sidecar = read_signature(Path(source.location)) if source.kind == "zip" else None
        folders = (
            list(plugin_folders(got.root, read_marketplace(got.root), selection.plugins))
            if selection.plugins
            else None
        )
        staged = staged_skills(
            got.root,
            only=selection.only,
            limits=limits,
            signature=sidecar,
            submodules=got.submodules,
            folders=folders,
        )
        checks = {
            skill.name: _check_cli_hash(got.root / skill.path, skill.name, expected)
            for skill in staged
            if (expected := selection.cli_hashes.get(skill.name)) is not None
        }
        return staged, got.commit, checks


def _check_cli_hash(folder: Path, name: str, expected: str) -> HashCheck:
    computed = skills_cli_hash(folder)
    if computed is None:
        return "unverifiable"
    if expected not in computed:
        raise PackageError(
            f"{name}: its files hash to {computed[0][:12]}, not the computedHash"
            f" {expected[:12]} of {SKILLS_CLI_LOCK}: the skill changed since it was locked;"
            " install it by its source to take it as it is now"
        )
    return "verified"
