"""Uploaded skills: :class:`StoredSkills`, skill packages kept as versions in the artifact store.

Owns the upload path of the API (``/v1/skills``): a SKILL.md posted as text or a ZIP package is
validated strictly (every spec violation refuses it), rebuilt with ``build_package`` so that the
stored bytes are canonical, and stored under ``skills/{name}/{version}.zip`` — the key the MCP
manager runs scripts from. A small JSON record per skill at ``catalog/skills/{name}.json`` lists
its versions, the latest one and whether it is enabled (or held for an operator's approval).
Every change of a record rewrites one small marker (``keys.SKILLS_GENERATION_KEY``), so that a
reader learns of changes with one stat (:meth:`StoredSkills.generation`).
:meth:`StoredSkills.materialize` writes the enabled skills into a folder a ``SkillScanner`` can
read beside the directory libraries (``skills.library`` does).

Names are owned (DESIGN §8): a package may not bring a skill, at any depth of its tree, whose
name (compared by ``names.name_key``: NFKC-normalized and case-folded) a directory skill or
another uploaded skill (its top or any child of its latest version) already has; that is a
:class:`~skillweave.errors.SkillNameTakenError`. A new version of one's own uploaded skill (the
same top name) replaces the old one, children included. Disabled uploads keep their names.

A version is the sha256 of the package's files (``versioning.package_version``, child skills
included), so packages are content-addressed: the same content uploaded twice is one version and
one object. Everything is validated in a temporary folder before the first write, the package is
written before the record, and the record last, so a failure leaves nothing a reader can see.

The package's modules: ``_skills`` (:class:`StoredSkills`, the writer, and :data:`Check`),
``_model`` (the records), ``_records`` (reading and writing them in the store),
``_preparation`` (an upload validated and rebuilt canonically), ``_ownership`` (who owns a
name), ``_materialization`` (the enabled skills written to a folder), ``_versions`` (which
stored version a version or prefix names, the one before, a rollback's outcome),
``_judgement`` (a stored version under today's scan and trust policies; a rollback's check),
``_history`` (a skill's versions as listings show them).

Versions stay: :meth:`StoredSkills.rollback` makes an earlier one current again (validated and
name-checked again, judged and recorded by its caller's check, then written; the generation
marker moves, so every long-running process sees it within ``SKILLS__RELOAD_SECONDS``), and
:meth:`StoredSkills.resolve` turns a pinned prefix into the full version.
"""

from typing import TYPE_CHECKING

from skillweave.errors import SkillNameTakenError
from skillweave.lazy import lazy_exports
from skillweave.skills.stored._model import (
    SkillOrigin,
    SourceKind,
    StoredSkill,
    StoredVersion,
    StoreSource,
    origin_notes,
    origin_text,
    store_source,
)
from skillweave.skills.stored._ownership import directory_owners
from skillweave.skills.stored._skills import Check, StoredSkills
from skillweave.skills.stored._versions import Rollback, RollbackCheck, newest_first

if TYPE_CHECKING:
    from skillweave.skills.stored._history import (
        SkillVersions,
        VersionEntry,
        directory_versions,
        uploaded_versions,
    )
    from skillweave.skills.stored._judgement import (
        Judgement,
        check_version,
        judge_version,
        rollback_check,
    )

# The policies' modules (the scanner, signatures, the audit log) are imported on first use:
# the manager and the sandbox bindings import this front for the records alone.
_LAZY: dict[str, str] = {
    "SkillVersions": "_history",
    "VersionEntry": "_history",
    "directory_versions": "_history",
    "uploaded_versions": "_history",
    "Judgement": "_judgement",
    "check_version": "_judgement",
    "judge_version": "_judgement",
    "rollback_check": "_judgement",
}

__all__ = [
    "Check",
    "Judgement",
    "Rollback",
    "RollbackCheck",
    "SkillNameTakenError",
    "SkillOrigin",
    "SkillVersions",
    "SourceKind",
    "StoreSource",
    "StoredSkill",
    "StoredSkills",
    "StoredVersion",
    "VersionEntry",
    "check_version",
    "directory_owners",
    "directory_versions",
    "judge_version",
    "newest_first",
    "origin_notes",
    "origin_text",
    "rollback_check",
    "store_source",
    "uploaded_versions",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
