"""What a run's skill is given, and when: secrets, credential bindings and network approvals
follow one owned name (:func:`configured_for`, :func:`check_bound_names`, :class:`SkillOwnership`).

The rule, in one place for the manager's execution service (``mcp_manager.executions``: the
``SANDBOX__SKILL_SECRETS``), its egress service (``mcp_manager.egress``: the
``SANDBOX__EGRESS__CREDENTIALS``) and the network approvals (``sandbox.approvals``: the
``SANDBOX__EGRESS__APPROVALS`` and those made over the API):

1. **One canonical name.** Every configured key is a canonical spec name (``a-z0-9``, single
   hyphens, 1–64 characters: ``skills.names.bound_name``); any other key stops the process at
   start-up with one line naming the key and its canonical form. A run's skill is given what
   is configured only for exactly its own name: never a folded, case or compatibility form of
   it, so a directory skill ``PROBE-A`` (or ``ｐｒｏｂｅ-ａ``), which lenient loading still
   loads, gets nothing of ``probe-a``'s, and the loader flags it (``skills.names.NOT_BOUND``).
2. **Its owner's versions.** The version run must be one that the owner of the name holds, by
   the ownership rules uploads follow (``skills.names``, ``skills.stored``): a skill of the
   manager's own library (``SKILLS__DIRS``: the version it holds now, or held since the
   manager started), else an uploaded or installed skill whose record in the store
   (``catalog/skills/{name}.json``) lists the version. A package published under the name by
   anything else (an agent's draft, a worker or CLI whose library the manager does not share)
   gets nothing: :meth:`SkillOwnership.refusal` says why, and the manager logs it (once per
   version) and writes it into every such run's audit record (``unbound``). A name no owner
   is known for binds nothing either: fail closed. Only what is configured for a name is
   looked up: a run whose canonical name has nothing configured asks no owner. Not covered:
   the child skills of an uploaded package (its record lists its top's versions only) and a
   directory version edited away before the manager saw it (a restart forgets earlier
   versions); those run without what is configured for them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TypeVar

from skillweave.config import SandboxSettings
from skillweave.errors import ConfigError, SkillweaveError
from skillweave.skills import NOT_BOUND, Skill, bound_name, canonical_form, name_key
from skillweave.skills.stored import StoredSkills
from skillweave.storage import ArtifactStore

__all__ = ["SkillOwnership", "check_bound_names", "check_bound_settings", "configured_for"]

logger = logging.getLogger("skillweave.sandbox")

T = TypeVar("T")


def check_bound_names(setting: str, names: Iterable[str]) -> None:
    """Refuse a configured table whose keys are not all canonical skill names.

    Raises:
        ConfigError: one line naming `setting`, the key and its canonical form.
    """
    for name in names:
        if bound_name(name) is None:
            form = canonical_form(name)
            fix = f"write it as {form!r}" if form else "use the skill's canonical name"
            raise ConfigError(
                f"{setting} names {name!r}, which is not a canonical skill name (a-z, 0-9 and"
                f" single hyphens, 1-64 characters): {fix}; only a skill of exactly that name"
                " gets it"
            )


def check_bound_settings(settings: SandboxSettings) -> None:
    """:func:`check_bound_names` over every table of `settings` keyed by skill: the secrets,
    the network approvals and the credential bindings (the manager's start-up check).

    Raises:
        ConfigError: the first key that is not canonical, in one line.
    """
    check_bound_names("SANDBOX__SKILL_SECRETS", settings.skill_secrets)
    check_bound_names("SANDBOX__EGRESS__APPROVALS", settings.egress.approvals)
    check_bound_names("SANDBOX__EGRESS__CREDENTIALS", settings.egress.credentials)


def configured_for(table: Mapping[str, T], skill: str) -> T | None:
    """What `table` (keyed by canonical names, :func:`check_bound_names`) holds for exactly
    `skill`'s name; None when its name is not canonical or has no entry."""
    name = bound_name(skill)
    return table.get(name) if name is not None else None


class SkillOwnership:
    """Whether a skill version is its name's owner's: the manager's library (every version of
    it seen since start) and the store's records of uploaded skills.

    Args:
        store: where the records of uploaded skills are.
        skills: the manager's library as scanned at start-up (:meth:`use_registry`).
    """

    def __init__(self, store: ArtifactStore, skills: Iterable[Skill] = ()) -> None:
        self._stored = StoredSkills(store)
        self._directory: dict[str, tuple[str, set[str]]] = {}  # name key -> (name, versions)
        self.use_registry(skills)

    def use_registry(self, skills: Iterable[Skill]) -> None:
        """Take the manager's library as scanned now; the versions seen before are kept."""
        for skill in skills:
            key = name_key(skill.name)
            name, versions = self._directory.get(key, (skill.name, set()))
            if name != skill.name:  # another spelling owns the name now
                name, versions = skill.name, set()
            versions.add(skill.version)
            self._directory[key] = (name, versions)

    async def refusal(self, skill: str, version: str) -> str | None:
        """Why the run of `skill` at `version` is given nothing configured for a name; None
        when it is bound (its name is canonical and the version its owner's)."""
        if bound_name(skill) is None:
            return NOT_BOUND
        held = self._directory.get(name_key(skill))
        if held is not None:
            name, versions = held
            if name != skill:
                return f"the name belongs to the directory skill {name!r}"
            if version not in versions:
                return (
                    f"version {version[:12]} is not one the manager's library holds for it:"
                    " it was published by something that does not own the name"
                )
            return None
        try:
            record = await self._stored.get(skill)
        except SkillweaveError as exc:
            logger.warning(
                "skill %r: its record cannot be read (%s); it is given nothing", skill, exc
            )
            return "the record of its owner cannot be read"
        if record is None:
            return (
                "no owner of the name is known to the manager (its library does not hold it,"
                " and no uploaded skill has it)"
            )
        if record.version(version) is None:
            return (
                f"version {version[:12]} is not one of the uploaded skill's versions: it was"
                " published by something that does not own the name"
            )
        return None
