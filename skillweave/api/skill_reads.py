"""Reading the skills the API serves: the listing (directory and stored skills), one skill with
its versions, files, scan and signature, and one file of a version.

Directory skills are read from their folders (off the event loop), stored ones from the store.
:class:`SkillReader` is made per request over the library as it is then
(:mod:`skillweave.api.deps`) and called by the skill routes (:mod:`skillweave.api.skills`).
"""

from __future__ import annotations

import asyncio
from typing import TypedDict

from skillweave.api.problems import ApiProblem
from skillweave.api.served_skills import ServedSkills
from skillweave.api.skill_schemas import SignatureStatus, SkillDetail, SkillItem, SkillPage, Source
from skillweave.config import SkillsSettings
from skillweave.errors import ResourceNotFoundError
from skillweave.evals import summary as eval_summaries
from skillweave.skills import ScanDecision, Skill, SkillRegistry, list_resources, stored_report
from skillweave.skills.scan import ScanReport, scan_folder
from skillweave.skills.signing import (
    SkillSignature,
    parse_signature,
    read_signature,
    verify_signature,
)
from skillweave.skills.stored import StoredSkill
from skillweave.storage import ArtifactStore, keys

__all__ = ["ScanFields", "SkillReader"]


class ScanFields(TypedDict):
    """A skill answer's scan fields (:class:`~skillweave.api.skill_schemas.SkillDetail`,
    :class:`~skillweave.api.skill_schemas.SkillRecord`)."""

    scan: ScanReport | None
    scan_decision: ScanDecision | None


class SkillReader:
    """Reads the library's directory part (as a request began with it) and its stored skills."""

    def __init__(
        self, skills: ServedSkills, *, settings: SkillsSettings, store: ArtifactStore
    ) -> None:
        self._library = skills.directory
        self._registry = skills.registry
        self._stored = skills.stored
        self._settings = settings
        self._store = store

    async def page(
        self,
        *,
        q: str | None,
        source: Source | None,
        enabled: bool | None,
        limit: int,
        offset: int,
    ) -> SkillPage:
        """Directory and uploaded skills, sorted by name, filtered and paged."""
        library = self._library
        items: list[SkillItem] = []
        if source in (None, "directory"):
            items += (_directory_item(library, skill) for skill in library)
        if source in (None, "uploaded"):
            items += (_uploaded_item(skill) for skill in await self._stored.list())
        if q:
            needle = q.casefold()
            items = [
                i
                for i in items
                if needle in i.name.casefold() or needle in i.description.casefold()
            ]
        if enabled is not None:
            items = [i for i in items if i.enabled == enabled]
        items.sort(key=lambda i: (i.name, i.source))
        return SkillPage(
            items=items[offset : offset + limit], total=len(items), limit=limit, offset=offset
        )

    async def detail(self, name: str) -> SkillDetail:
        """The skill, its versions, the files of its latest version, and that version's scan
        and signature (``skills.scan``, ``skills.trust``).

        Raises:
            ApiProblem: 404, no skill of that name.
        """
        library = self._library
        if name in library:
            skill = library.get(name)
            item = _directory_item(library, skill)
            files = await asyncio.to_thread(_directory_files, skill)
            report = await asyncio.to_thread(scan_folder, skill.path)
            signature = await asyncio.to_thread(read_signature, skill.path)
            return SkillDetail(
                **item.model_dump(),
                files=files,
                **self._explained(report),
                signature=self._signature_status(skill.short_name or name, item.version, signature),
            )
        record = await self._stored.get(name)
        if record is None:
            raise ApiProblem(404, f"no skill named {name!r}")
        signature = None
        ref = await self._store.stat(keys.skill_signature_key(name, record.latest))
        if ref is not None:
            signature = parse_signature(await self._store.get_bytes(ref), source=ref.key)
        return SkillDetail(
            **_uploaded_item(record).model_dump(),
            versions=record.versions,
            files=record.latest_version.files,
            **await self.scanned(name, record.latest),
            signature=self._signature_status(name, record.latest, signature),
            evals=await self.evals(name, record.latest) if record.held else None,
        )

    async def evals(self, name: str, version: str) -> str | None:
        """A version's evals in a line (``skillweave.evals.summary``), what its approver reads
        beside its scan; None: it has none."""
        summary = await eval_summaries.eval_summary(
            self._registry, self._store, name, version, settings=self._settings
        )
        return summary.line() if summary is not None else None

    async def scanned(self, name: str, version: str) -> ScanFields:
        """A stored version's ``scan`` (the report kept beside it) and ``scan_decision`` (what
        ``skills.scan.policy`` decides for it, and why): the fields every skill answer has."""
        return self._explained(await stored_report(self._store, name, version))

    def _explained(self, report: ScanReport | None) -> ScanFields:
        decided = ScanDecision.of(report, self._settings.scan) if report is not None else None
        return {"scan": report, "scan_decision": decided}

    async def file(self, name: str, version: str, path: str) -> bytes:
        """The bytes of one file of a skill's version.

        Raises:
            ApiProblem: 404, a directory skill has no such version.
            ResourceNotFoundError: no such file in the skill.
        """
        library = self._library
        if name not in library:
            return await self._stored.read_file(name, version, path)
        skill = library.get(name)
        if version != skill.version:
            raise ApiProblem(404, f"directory skill {name!r} has no version {version!r}")
        files = await asyncio.to_thread(_directory_files, skill)
        if path not in files:
            raise ResourceNotFoundError(name, path, "no such file in the skill")
        # Only a listed file can be named: no '..', no symlink, no hidden file gets through.
        return await asyncio.to_thread((skill.path / path).read_bytes)

    def _signature_status(
        self, name: str, version: str, signature: SkillSignature | None
    ) -> SignatureStatus:
        check = verify_signature(
            signature, name=name, version=version, trusted=self._settings.trust.keys
        )
        return SignatureStatus(status=check.status, key_id=check.key_id, message=check.message)


def _directory_item(library: SkillRegistry, skill: Skill) -> SkillItem:
    return SkillItem(
        name=skill.name,
        description=skill.description,
        source="directory",
        enabled=library.is_enabled(skill.name),
        version=skill.version,
    )


def _uploaded_item(skill: StoredSkill) -> SkillItem:
    return SkillItem(
        name=skill.name,
        description=skill.description,
        source="uploaded",
        enabled=skill.enabled,
        version=skill.latest,
    )


def _directory_files(skill: Skill) -> list[str]:
    """The skill's own files (child skills excluded), sorted."""
    return sorted(["SKILL.md", *list_resources(skill)])
