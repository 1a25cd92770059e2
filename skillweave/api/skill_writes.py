"""Changing the store's skills over the API: storing a SKILL.md or a ZIP package, installing
from a source (a git URL, ``owner/repo``, a tree URL, a folder; or a marketplace's plugins),
enabling, disabling and deleting; and what a source holds, previewed before it is installed
(:meth:`SkillWrites.preview`: read and scanned, nothing changed, nothing audited).

Every change is in the audit log, recorded before it is made (an upload's and an install's once
their checks passed, ``skills.admission``): a record that cannot be written refuses the change
(``AuditLogError``, 503 ``audit_unavailable``) and nothing is changed. Names are owned: a
package bringing a skill named like a directory skill's (or another upload's) is refused
(``SkillNameTakenError``). After a change the served library is reloaded, and a new version's
environment is prepared (:mod:`skillweave.api.environment_builds`). :class:`SkillWrites` is made
per request over the library as it is then (:mod:`skillweave.api.deps`) and called by the skill
routes (:mod:`skillweave.api.skills`).
"""

from __future__ import annotations

from skillweave.api.environment_builds import EnvironmentBuilds
from skillweave.api.problems import ApiProblem
from skillweave.api.served_skills import ServedSkills
from skillweave.api.skill_schemas import InstalledSkill, InstallRequest, SourcePreview
from skillweave.config import SkillsSettings
from skillweave.errors import SkillNotFoundError
from skillweave.skills import Admissions, ScanDecision
from skillweave.skills.install import (
    Installed,
    SkillSource,
    install_skills,
    list_source,
    parse_source,
    source_allowed,
)
from skillweave.skills.review import SkillReviewer
from skillweave.skills.scan import ScanReport
from skillweave.skills.signing import parse_signature
from skillweave.skills.stored import Check, StoredSkill
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditEntry, AuditLog

__all__ = ["SkillWrites"]


class SkillWrites:
    """Changes the store's skills, each recorded in the audit log first."""

    def __init__(
        self,
        skills: ServedSkills,
        *,
        settings: SkillsSettings,
        store: ArtifactStore,
        audit: AuditLog,
        builds: EnvironmentBuilds,
        reviewer: SkillReviewer | None = None,
    ) -> None:
        self._skills = skills
        self._listed = skills.directory  # as the request began: what the listing showed
        self._stored = skills.stored
        self._settings = settings
        self._store = store
        self._audit = audit
        self._builds = builds
        self._reviewer = reviewer  # the model review (skills.scan.review_model), or None

    async def add_content(self, name: str, description: str, content: str) -> StoredSkill:
        """Validate the SKILL.md `content` strictly and store it as a new version (or the same
        one).

        Raises:
            SkillNameTakenError: a skill of its package has a name another source owns.
        """
        admissions = self._admissions()
        record = await self._stored.add_content(
            name,
            description,
            content,
            reserved=self._skills.reserved(self._listed),
            check=self._uploading(admissions),
        )
        await self._uploaded(admissions, record)
        return record

    async def add_package(
        self,
        data: bytes,
        *,
        name: str | None,
        description: str | None,
        signature: str | None,
    ) -> StoredSkill:
        """Extract the ZIP package `data` safely, validate it strictly, check its signature
        (`signature`, else one found with it) and scan it, and store it rebuilt canonically.

        Raises:
            SkillNameTakenError: a skill of the package has a name another source owns.
        """
        admissions = self._admissions()
        if signature is not None:
            document = parse_signature(signature, source="signature")
            admissions.signatures[document.name] = document
        record = await self._stored.add_package(
            data,
            name=name,
            description=description,
            reserved=self._skills.reserved(self._listed),
            check=self._uploading(admissions),
        )
        await self._uploaded(admissions, record)
        return record

    async def install(self, body: InstallRequest) -> list[InstalledSkill]:
        """Install the source's skills (all or none), each stored with its origin.

        Raises:
            ApiProblem: 403, ``SKILLS__INSTALL_SOURCES`` does not allow the source.
            SkillNameTakenError: a skill of the source has a name another source owns.
        """
        source = self._allowed_source(body)
        admissions = self._admissions()
        installed = await install_skills(
            self._stored,
            source,
            only=body.skills,
            plugins=body.plugins,
            reserved=self._skills.reserved(self._listed),
            admissions=admissions,
            allowed=self._settings.install_sources,
        )
        await self._skills.changed()
        for item in installed:
            self._builds.prepare(item.record)
        answers = []
        for item in installed:
            admission = admissions.admitted.get(item.record.name)
            answers.append(self._installed(item, admission.report if admission else None))
        return answers

    async def preview(self, body: InstallRequest) -> SourcePreview:
        """What installing `body` would store, each skill scanned: nothing is stored, audited
        or locked (nothing changes).

        Raises:
            ApiProblem: 403, ``SKILLS__INSTALL_SOURCES`` does not allow the source.
        """
        source = self._allowed_source(body)
        listing = await list_source(
            source,
            only=body.skills,
            plugins=body.plugins,
            limits=self._stored.limits,
            allowed=self._settings.install_sources,
        )
        return SourcePreview.of(listing, self._settings.scan)

    def _allowed_source(self, body: InstallRequest) -> SkillSource:
        """The source `body` names, judged against ``SKILLS__INSTALL_SOURCES`` by its
        canonical git URL (or real path) before anything is read or looked up.

        Raises:
            ApiProblem: 403, the allowlist does not allow it.
        """
        host = self._settings.git_host
        if not source_allowed(body.source, self._settings.install_sources, git_host=host):
            raise ApiProblem(
                403,
                "SKILLS__INSTALL_SOURCES does not allow this source: an operator adds a pattern"
                " for it (e.g. 'https://github.com/acme/*') to let the API install from it",
            )
        return parse_source(
            body.source, ref=body.ref, path=body.path, git_host=host, relative_paths=False
        )

    def _installed(self, item: Installed, report: ScanReport | None) -> InstalledSkill:
        """One installed skill's answer: its origin, whether it is on, its scan and why the
        policy decided what it did."""
        return InstalledSkill(
            name=item.record.name,
            version=item.version,
            origin=item.origin,
            enabled=item.record.enabled,
            scan=report,
            scan_decision=ScanDecision.of(report, self._settings.scan) if report else None,
        )

    async def set_enabled(self, name: str, enabled: bool) -> StoredSkill:
        """Switch an uploaded skill on or off (directory skills: ``SKILLS__DISABLED``).

        Raises:
            ApiProblem: 409, `name` is a directory skill's.
            SkillNotFoundError: no uploaded skill of that name.
        """
        self._refuse_directory(name, "changed")
        current = await self._uploaded_skill(name)
        # Recorded before it is made: a record that cannot be written refuses it (503).
        await self._audit.record(
            "enable" if enabled else "disable", skill=name, version=current.latest
        )
        record = await self._stored.set_enabled(name, enabled)
        await self._skills.changed()
        return record

    async def delete(self, name: str) -> None:
        """Remove the skill's record and every stored version.

        Raises:
            ApiProblem: 409, `name` is a directory skill's.
            SkillNotFoundError: no uploaded skill of that name.
        """
        self._refuse_directory(name, "deleted")
        current = await self._uploaded_skill(name)
        # Recorded before it is made: a record that cannot be written refuses it (503).
        await self._audit.record("remove", skill=name, version=current.latest)
        await self._stored.delete(name)
        await self._skills.changed()

    def _admissions(self) -> Admissions:
        """The signature and scan checks of what a request stores (``skills.admission``)."""
        return Admissions(self._settings, self._store, audit=self._audit, reviewer=self._reviewer)

    def _uploading(self, admissions: Admissions) -> Check:
        """The ``check`` of one upload: admitted (its scan and signature recorded), then its
        ``upload`` record written, all before it is stored; a record that cannot be written
        raises ``AuditLogError`` (503 ``audit_unavailable``) and nothing is stored."""
        stored = self._stored

        async def check(name: str, version: str, package: bytes) -> bool:
            held = await admissions.check(name, version, package)
            earlier = await stored.get(name)
            enabled = (earlier.enabled if earlier is not None else True) and not held
            entry = AuditEntry("upload", skill=name, version=version, details={"enabled": enabled})
            await admissions.announce([entry])
            return held

        return check

    async def _uploaded(self, admissions: Admissions, record: StoredSkill) -> None:
        """After an upload (recorded before it was stored): its report and signature kept, the
        library told, its environment prepared."""
        await admissions.keep(record.name)
        await self._skills.changed()
        self._builds.prepare(record)

    def _refuse_directory(self, name: str, action: str) -> None:
        if name in self._listed:
            raise ApiProblem(
                409,
                f"{name!r} is a directory skill and cannot be {action} here; switch it off with"
                " SKILLS__DISABLED in the configuration instead",
            )

    async def _uploaded_skill(self, name: str) -> StoredSkill:
        """The uploaded skill a change is about to be recorded for.

        Raises:
            SkillNotFoundError: there is none of that name (404; nothing recorded).
        """
        record = await self._stored.get(name)
        if record is None:
            raise SkillNotFoundError(name)
        return record
