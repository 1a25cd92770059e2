"""The records of uploaded skills: :class:`StoredSkill`, its :class:`StoredVersion` s and where
an installed version came from (:class:`SkillOrigin`).

A record is the small JSON document kept per skill at ``catalog/skills/{name}.json``
(``_records.SkillRecords`` reads and writes it); :meth:`StoredSkill.with_version` says how a
new version changes it. Used by ``StoredSkills`` and, through the package's front, by the API
schemas, installs and the library. :func:`origin_text` and :func:`origin_notes` are the one
way an origin is put in words (``skills versions``, the API's versions, ``skills install``'s
table).
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from skillweave.skills.names import skill_id

__all__ = [
    "SkillOrigin",
    "SourceKind",
    "StoreSource",
    "StoredSkill",
    "StoredVersion",
    "origin_notes",
    "origin_text",
    "store_source",
]

SourceKind = Literal["git", "zip", "folder", "agent"]

_SHORT: Final = 12
"""Hex digits shown of a commit."""


class SkillOrigin(BaseModel):
    """Where an installed skill version came from (``skillweave.skills.install``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="A git URL as given, or a local path.")
    kind: SourceKind
    ref: str | None = Field(default=None, description="The branch, tag or commit asked for.")
    path: str | None = Field(default=None, description="The skill's folder in the source.")
    commit: str | None = Field(default=None, description="The git commit it was read at.")
    registry: str | None = Field(
        default=None,
        max_length=2_048,
        description="The label of the skill registry it was found in (SKILLS__REGISTRIES): an"
        " install an agent asked for, or one `skills find` printed; none: not from a registry.",
    )


def origin_notes(
    *,
    registry: str | None = None,
    path: str | None = None,
    ref: str | None = None,
    commit: str | None = None,
) -> str:
    """What is said of an origin after its source, each part named (``registry acme, path
    skills/pdf, ref v1, commit 0123456789ab``), so that none runs into the source as if it
    were part of its path or URL; empty when there is nothing to say."""
    parts = [
        f"registry {registry}" if registry else "",
        f"path {path}" if path else "",
        f"ref {ref}" if ref else "",
        f"commit {commit[:_SHORT]}" if commit else "",
    ]
    return ", ".join(part for part in parts if part)


def origin_text(origin: SkillOrigin | None) -> str:
    """Where a version came from, in words: ``uploaded``, ``published by run X``, or the
    source as given with its registry, path, ref and commit
    (``https://…/skills.git (registry acme, path skills/pdf, ref v1, commit 0123456789ab)``)."""
    if origin is None:
        return "uploaded"
    if origin.kind == "agent":
        return f"published by {origin.source}"
    notes = origin_notes(
        registry=origin.registry, path=origin.path, ref=origin.ref, commit=origin.commit
    )
    return f"{origin.source} ({notes})" if notes else origin.source


class StoredVersion(BaseModel):
    """One stored version of an uploaded skill."""

    version: str = Field(description="sha256 of the package's files (paths, sizes and bytes)")
    created_at: datetime
    size: int = Field(ge=0, description="bytes of the stored ZIP")
    sha256: str = Field(description="sha256 of the stored ZIP's bytes")
    files: list[str] = Field(default_factory=list, description="the package's files, sorted")
    origin: SkillOrigin | None = Field(
        default=None, description="where an installed version came from; none: uploaded"
    )


class StoredSkill(BaseModel):
    """An uploaded skill: its record in the store."""

    name: str
    description: str
    enabled: bool = True
    held: bool = Field(
        default=False,
        description="switched off until an operator approves its latest version (the scan"
        " policy said approve); enabling it is the approval",
    )
    latest: str
    versions: list[StoredVersion]
    source: Literal["uploaded"] = "uploaded"

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)

    def version(self, version: str) -> StoredVersion | None:
        """The stored version `version`, or None."""
        return next((v for v in self.versions if v.version == version), None)

    @property
    def latest_version(self) -> StoredVersion:
        """The latest version's entry."""
        found = self.version(self.latest)
        return found if found is not None else self.versions[-1]

    @classmethod
    def first(cls, name: str, entry: StoredVersion, *, description: str, hold: bool) -> StoredSkill:
        """The record of a skill stored for the first time, with its one version `entry`
        (`hold`: switched off until an operator enables it)."""
        return cls(
            name=name,
            description=description,
            enabled=not hold,
            held=hold,
            latest=entry.version,
            versions=[entry],
        )

    def with_version(self, entry: StoredVersion, *, description: str, hold: bool) -> StoredSkill:
        """This record with `entry` stored again as its latest version.

        Re-uploading a version keeps its first date, and makes it the latest again; an install
        of it (an `entry` with an origin) says where it came from. `hold`: the skill is
        switched off until an operator enables (approves) this version; a new version of a
        held skill stays held.
        """
        versions = [v for v in self.versions if v.version != entry.version]
        existing = self.version(entry.version)
        if existing is not None and entry.origin is not None:
            existing = existing.model_copy(update={"origin": entry.origin})
        versions.append(existing if existing is not None else entry)
        return self.model_copy(
            update={
                "description": description,
                "enabled": self.enabled and not hold,
                "held": hold or (self.held and not self.enabled),
                "latest": entry.version,
                "versions": versions,
            }
        )

    def rolled_back(self, version: str, *, description: str, hold: bool) -> StoredSkill:
        """This record with its stored `version` current again (moved last: versions are kept
        in the order they became current), `description` that version's.

        `hold`: switched off until an operator approves it (its scan said approve). Otherwise
        a skill held for its current version's approval is switched on (that version is no
        longer current), and one an operator switched off stays off.
        """
        entry = self.version(version)
        if entry is None:
            raise ValueError(f"{self.name} has no stored version {version}")
        return self.model_copy(
            update={
                "description": description,
                "enabled": (self.enabled or self.held) and not hold,
                "held": hold,
                "latest": version,
                "versions": [*(v for v in self.versions if v.version != version), entry],
            }
        )


StoreSource = Literal["installed", "uploaded", "agent"]
"""Where a store skill's current version came from, as every view names it."""


def store_source(record: StoredSkill) -> StoreSource:
    """Where `record`'s current version came from: installed (from a source), uploaded (over
    the API, no origin) or agent (published by a run)."""
    origin = record.latest_version.origin
    if origin is None:
        return "uploaded"
    return "agent" if origin.kind == "agent" else "installed"
