"""What ``/v1/skills`` takes and answers: a skill as listed (:class:`SkillItem`) and shown
(:class:`SkillDetail`), a stored skill as a write answers it (:class:`SkillRecord`), and the
bodies of the writes (:class:`NewSkill`, :class:`InstallRequest`, :class:`SkillPatch`), and
what a source holds before it is installed (:class:`SourcePreview`). The
skill routes (:mod:`skillweave.api.skills`), reads (:mod:`skillweave.api.skill_reads`) and
writes (:mod:`skillweave.api.skill_writes`) use them.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, computed_field

from skillweave.config import ScanSettings
from skillweave.skills import ScanDecision, skill_id
from skillweave.skills.install import Marketplace, SourceListing
from skillweave.skills.scan import ScanReport
from skillweave.skills.stored import SkillOrigin, StoredSkill, StoredVersion

__all__ = [
    "CreatedSkill",
    "InstallRequest",
    "InstalledSkill",
    "NewSkill",
    "PreviewSkill",
    "SignatureStatus",
    "SkillDetail",
    "SkillItem",
    "SkillPage",
    "SkillPatch",
    "SkillRecord",
    "Source",
    "SourcePreview",
]

Source = Literal["directory", "uploaded"]


class NewSkill(BaseModel):
    """A skill given as the text of its SKILL.md."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1024)
    content: str = Field(min_length=1, description="the whole SKILL.md, frontmatter included")


class SkillRecord(BaseModel):
    """A stored skill as a write answers it: its record, its latest version as ``version``."""

    name: str
    description: str
    source: Literal["uploaded"] = "uploaded"
    enabled: bool
    held: bool = Field(description="switched off until an operator approves its version")
    version: str = Field(description="the latest version (sha256 of the package's files)")
    latest: str = Field(
        description="the same as `version` (deprecated: the name older clients read)",
        json_schema_extra={"deprecated": True},
    )
    versions: list[StoredVersion]
    scan: ScanReport | None = Field(
        default=None,
        description="the latest version's scan: every finding (rule, severity, path, line,"
        " message, excerpt: its evidence line, origin: scanner or model) and the model review's"
        " cost; none: stored before scans were kept",
    )
    scan_decision: ScanDecision | None = Field(
        default=None, description="what skills.scan.policy decides for that scan, and why"
    )
    evals: str | None = Field(
        default=None, description="enabling: the version's evals in a line, when it has any"
    )

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)

    @classmethod
    def of(cls, record: StoredSkill, **extra: object) -> Self:
        """The answer for `record` (and `extra` fields of a subclass)."""
        return cls(
            name=record.name,
            description=record.description,
            enabled=record.enabled,
            held=record.held,
            version=record.latest,
            latest=record.latest,
            versions=record.versions,
            **extra,
        )


class CreatedSkill(SkillRecord):
    """A skill stored from SKILL.md text, and what of its frontmatter the request replaced."""

    overridden: list[str] = Field(
        default_factory=list,
        description=(
            "frontmatter fields (name, description) the request's differed from: the stored"
            " SKILL.md has the request's"
        ),
    )


class InstallRequest(BaseModel):
    """Skills to install (or preview) from a git repository, a ZIP or a folder the server can
    read."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(
        min_length=1,
        max_length=2048,
        description="a git URL, owner/repo[/path] (on SKILLS__GIT_HOST), a tree URL "
        "(…/owner/repo/tree/REF/PATH) or an absolute local path",
    )
    ref: str | None = Field(default=None, max_length=200, description="branch, tag or commit")
    path: str | None = Field(default=None, max_length=1024, description="a sub-folder")
    skills: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list, max_length=500, description="only these (default, or '*': all)"
    )
    plugins: list[Annotated[str, Field(max_length=128)]] = Field(
        default_factory=list,
        max_length=100,
        description="the skills of these plugins of the source's .claude-plugin/marketplace.json",
    )


class InstalledSkill(BaseModel):
    """One installed skill: its version, where it came from, and its scan."""

    name: str
    version: str
    origin: SkillOrigin
    enabled: bool | None = Field(
        default=None, description="false: held off until an operator approves its version"
    )
    scan: ScanReport | None = Field(
        default=None, description="its scan: every finding with its evidence (`excerpt`)"
    )
    scan_decision: ScanDecision | None = Field(
        default=None, description="what skills.scan.policy decided for it, and why"
    )


class PreviewSkill(BaseModel):
    """One skill a source holds, as an install of it would store it, and its scan."""

    name: str
    version: str = Field(description="the version an install would store")
    path: str | None = Field(default=None, description="its folder in the source")
    plugins: list[str] = Field(
        default_factory=list, description="the marketplace plugins that list it"
    )
    description: str
    scan: ScanReport
    scan_decision: ScanDecision = Field(description="what skills.scan.policy would decide")


class SourcePreview(BaseModel):
    """What a source holds (``POST /v1/skills/install/preview``): nothing was stored,
    audited or locked."""

    source: str = Field(description="the source's canonical git URL, or its path")
    ref: str | None = None
    path: str | None = None
    commit: str | None = Field(default=None, description="the commit read (a git source)")
    marketplace: Marketplace | None = Field(
        default=None,
        description="its .claude-plugin/marketplace.json: each plugin, and why one cannot be"
        " installed from it (`unavailable`)",
    )
    marketplace_problem: str | None = Field(
        default=None,
        description="why its .claude-plugin/marketplace.json cannot be read (then `plugins`"
        " cannot be asked for); its skills are listed all the same",
    )
    skills: list[PreviewSkill]

    @classmethod
    def of(cls, listing: SourceListing, settings: ScanSettings) -> Self:
        """The answer for `listing`, each scan decided by `settings`."""
        return cls(
            source=listing.source.location,
            ref=listing.source.ref,
            path=listing.source.path,
            commit=listing.commit,
            marketplace=listing.marketplace,
            marketplace_problem=listing.marketplace_problem,
            skills=[
                PreviewSkill(
                    name=item.name,
                    version=item.version,
                    path=item.path or None,
                    plugins=list(item.plugins),
                    description=item.description,
                    scan=item.report,
                    scan_decision=ScanDecision.of(item.report, settings),
                )
                for item in listing.skills
            ],
        )


class SkillPatch(BaseModel):
    """What can change on an uploaded skill."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool


class SkillItem(BaseModel):
    """One skill in a listing."""

    name: str
    description: str
    source: Source
    enabled: bool
    version: str = Field(description="the latest version (sha256 of the package's files)")

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)


class SignatureStatus(BaseModel):
    """A version's signature against ``skills.trust.keys``."""

    status: Literal["valid", "unsigned", "untrusted", "mismatch", "invalid"]
    key_id: str | None = None
    message: str


class SkillDetail(SkillItem):
    """One skill: its versions (uploaded skills), the files of its latest version, and that
    version's scan and signature."""

    versions: list[StoredVersion] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    scan: ScanReport | None = Field(
        default=None,
        description="its scan: every finding (rule, severity, path, line, message, excerpt:"
        " its evidence line, origin: scanner or model) and the model review's cost; none:"
        " stored before scans were kept",
    )
    scan_decision: ScanDecision | None = Field(
        default=None, description="what skills.scan.policy decides for that scan, and why"
    )
    signature: SignatureStatus | None = None
    evals: str | None = Field(
        default=None,
        description="held until approved: its version's evals in a line, when it has any",
    )


class SkillPage(BaseModel):
    """A page of skills."""

    items: list[SkillItem]
    total: int
    limit: int
    offset: int
