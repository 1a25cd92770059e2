"""Pinning a run's skills: each skill its agent lists, at the version the library holds when
the run starts, its package put in the store, so that uploading a new version or deleting the
skill while the run goes on does not change what the run activates, reads or runs.

No skill vanishes silently: a listed skill that is deleted, disabled, or whose name now resolves
to another source than the listing shows (shadowed) refuses the run
(:class:`~skillweave.errors.SkillUnavailableError`, a 409 naming the skill and the reason).
:class:`SkillPins` is used by the launcher (:mod:`skillweave.api.run_launcher`).

An agent may pin a skill's version itself: ``name@VERSION`` in its ``skill_ids`` (a unique
prefix resolved to the full version here, where the run starts). The skill must still be
available as above; the run then gets it at that version (the library's copy with its tree when
it is the library's version, else that stored version's package alone), unless the store holds
no such version (409) or today's scan or trust policy refuses it
(``skills.stored.check_version``: 422, 403). A rollback later changes nothing for the run.
"""

from __future__ import annotations

from skillweave.agent import PinnedSkill
from skillweave.api.agent_store import Agent
from skillweave.api.problems import ApiProblem
from skillweave.api.served_skills import NoSkills, ServedSkills
from skillweave.errors import (
    InvalidKeyError,
    PackageError,
    SkillError,
    SkillNotFoundError,
    SkillUnavailableError,
)
from skillweave.sandbox import publish_skill
from skillweave.skills import Skill, SkillRegistry, is_scope, parse_pin
from skillweave.skills.stored import StoredSkill, StoredSkills, check_version
from skillweave.storage import ArtifactStore

__all__ = ["SkillPins"]


class SkillPins:
    """Pins an agent's skills for a run, against the library the API serves."""

    def __init__(self, store: ArtifactStore, skills: ServedSkills | NoSkills) -> None:
        self._store = store
        self._skills = skills

    async def pin(self, agent: Agent) -> tuple[PinnedSkill, ...] | None:
        """The agent's skills (their trees too) at their current versions, each package put
        in the store, so that the run sees them whatever the library holds later. A skill the
        agent lists must be there, enabled, and resolve to the owner the listing shows
        (:meth:`_check_available`); inside its tree, disabled skills and the trees under them
        are left out, as a run would not see them.

        A skill the agent pins (``name@VERSION``) is given at that version instead (alone,
        unless it is the library's version).

        Raises:
            SkillUnavailableError: a listed skill is deleted, disabled or shadowed.
            ApiProblem: 409, no stored version, or several, is the one pinned.
            SkillScanError, SignatureError: today's policies refuse the version pinned.
        """
        skills = self._skills
        if isinstance(skills, NoSkills):  # an API composed without the skills routes
            return None
        registry = skills.registry
        listed: list[str] = []
        asked: dict[str, str] = {}  # name -> the version (or prefix) the agent pins it to
        for entry in dict.fromkeys(agent.skill_ids):
            pin = parse_pin(entry)
            if pin.version is not None:
                asked[pin.name] = pin.version
            elif is_scope(entry):  # a namespace: what it holds now (its disabled skills left out)
                held = [name for name in registry.resolve(entry) if registry.is_enabled(name)]
                if not held:
                    raise SkillUnavailableError(
                        entry,
                        reason="deleted",
                        detail="no enabled skill is in that namespace any more; change the "
                        "agent's skill_ids",
                    )
                listed += held
            else:
                listed.append(registry.canonical(entry) or entry)
        await self._check_available(skills.stored, registry, list(asked))
        versions = {}  # the pinned skills at versions other than the library's
        for name, version in asked.items():
            full = await _pinned_version(skills.stored, registry, name, version)
            if full == registry.get(name).version:
                listed.append(name)  # the library's copy, its tree with it
            else:
                await check_version(self._store, skills.settings, name, full)
                versions[name] = full
        listed = [name for name in dict.fromkeys(listed) if name not in versions]
        await self._check_available(skills.stored, registry, listed)
        try:
            view = registry.restricted(listed)
        except SkillNotFoundError as exc:  # pragma: no cover - checked just above
            raise SkillUnavailableError(
                exc.name, reason="deleted", detail="no skill of that name exists any more"
            ) from None

        def visible(skill: Skill) -> bool:
            if not view.is_enabled(skill.name):
                return False
            if skill.name in listed:  # listed itself: a root of the run, whatever its parent
                return True
            return skill.parent is not None and visible(view.get(skill.parent))

        pinned = []
        for skill in view:
            if visible(skill) and skill.name not in versions:
                try:
                    await publish_skill(self._store, skill)
                except (PackageError, InvalidKeyError) as exc:
                    raise ApiProblem(
                        409,
                        f"the agent's skill {skill.name!r} cannot be packaged for a run: {exc}",
                        title="Skill cannot run",
                    ) from None
                pinned.append(
                    PinnedSkill(name=skill.name, version=skill.version, parent=skill.parent)
                )
        # A pinned version's package is in the store already (a stored version's).
        pinned += [PinnedSkill(name=name, version=full) for name, full in versions.items()]
        return tuple(pinned)

    async def _check_available(
        self, stored: StoredSkills, registry: SkillRegistry, names: list[str]
    ) -> None:
        """Refuse the run when a skill the agent lists would not be the one the listing shows.

        Raises:
            SkillUnavailableError: the first listed skill that is deleted, disabled or shadowed.
        """
        for name in names:
            record = await stored.get(name)
            refusal = _unavailable(name, registry, record)
            if refusal is not None:
                raise refusal


async def _pinned_version(
    stored: StoredSkills, registry: SkillRegistry, name: str, version: str
) -> str:
    """The full version `version` (a prefix, or whole) of the available skill `name` names:
    the library's when it begins so, else the one stored version it begins.

    Raises:
        ApiProblem: 409, the store holds no such version, or several begin so.
    """
    current = registry.get(name).version
    if current.startswith(version):
        return current
    try:
        return await stored.resolve(name, version)
    except SkillError as exc:
        raise ApiProblem(
            409,
            f"the agent's skill {name}@{version} cannot be pinned: {exc}; change the agent's"
            " skill_ids",
            title="Skill version unavailable",
        ) from None


def _unavailable(
    name: str, registry: SkillRegistry, record: StoredSkill | None
) -> SkillUnavailableError | None:
    """Why the skill `name` an agent lists cannot be given to a run, or None when it can.

    The listing (``/v1/skills``) shows `name` as a directory skill or as the uploaded skill
    `record`; the run gets what the registry resolves `name` to. They must be the same owner.
    """
    change = "change the agent's skill_ids"
    if name in registry:
        skill = registry.get(name)
        owner = registry.owner_of(name)
        if owner.kind == "directory" and record is not None:
            return SkillUnavailableError(
                name,
                reason="shadowed",
                detail=f"the directory skill at {skill.path} and the uploaded skill {name!r} both"
                " claim the name, and runs would get the directory one; delete the upload or"
                f" {change}",
            )
        if owner.kind == "uploaded" and owner.source != name:
            # The name now belongs to a child of another upload: not the skill the agent listed.
            if record is not None and not record.enabled:
                return _disabled_upload(name)
            gone = "deleted" if record is None else "shadowed"
            return SkillUnavailableError(
                name,
                reason=gone,
                detail=f"the skill the agent listed is {gone}; the name now resolves to a child"
                f" skill of {owner}; {change}",
            )
        if not registry.is_enabled(name):
            why = (
                "SKILLS__DISABLED or its own `enabled: false`"
                if owner.kind == "directory"
                else "its own `enabled: false`"
            )
            return SkillUnavailableError(
                name, reason="disabled", detail=f"it is switched off ({why}); {change}"
            )
        return None
    if record is not None and not record.enabled:
        return _disabled_upload(name)
    holder = registry.claimant(name)
    if holder is not None:
        return SkillUnavailableError(
            name,
            reason="shadowed",
            detail=f"the name resolves to the skill {holder.name!r} of"
            f" {registry.owner_of(holder.name)} (names are compared case-insensitively);"
            f" {change}",
        )
    if record is not None:
        return SkillUnavailableError(
            name,
            reason="shadowed",
            detail=f"the uploaded skill is not served: another source owns its name; {change}",
        )
    return SkillUnavailableError(
        name, reason="deleted", detail=f"no skill of that name exists any more; {change}"
    )


def _disabled_upload(name: str) -> SkillUnavailableError:
    return SkillUnavailableError(
        name,
        reason="disabled",
        detail=f"the uploaded skill is switched off; enable it (PATCH /v1/skills/{name}) or"
        " change the agent's skill_ids",
    )
