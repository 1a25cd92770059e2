"""What active skills' ``allowed-tools`` let run: while any of them limit the tools, a run
needs one of them to allow it (:func:`permits`), and a skill's own listing spares a person's
approval (:func:`pre_approved`); the refusal and the activation note that say so. Used by the
tool specs (``_specs``) and, through the package front, by the agent loop and the MCP front door.
"""

from __future__ import annotations

from collections.abc import Mapping

from skillweave.agent.state import ActiveSkill, SkillTool
from skillweave.skills.allowed_tools import AllowedTools


def restricting_skills(active: Mapping[str, ActiveSkill]) -> list[ActiveSkill]:
    """The active skills that limit the tools (have ``allowed-tools``)."""
    return [skill for skill in active.values() if skill.allowed is not None]


def permits(
    active: Mapping[str, ActiveSkill], *, skill: str, script: str, tool: SkillTool | None = None
) -> bool:
    """Whether `script` of the active `skill` (run for `tool`, when it is a skill tool's) may
    run: always while no active skill has ``allowed-tools``; else when one of those allows it
    (the union of what they allow)."""
    restricting = restricting_skills(active)
    if not restricting:
        return True
    names = (tool.name, tool.tool) if tool is not None else ()
    return any(
        held.allowed is not None
        and held.allowed.allows(own=held.name == skill, script=script, tool=names)
        for held in restricting
    )


def pre_approved(
    active: Mapping[str, ActiveSkill], *, skill: str, script: str, tool: SkillTool | None = None
) -> bool:
    """Whether the active `skill` lists this run in its own ``allowed-tools``, which spares it
    a person's approval. Only a skill's own scripts: one skill cannot approve another's."""
    held = active.get(skill)
    if held is None or held.allowed is None:
        return False
    names = (tool.name, tool.tool) if tool is not None else ()
    return held.allowed.allows(own=True, script=script, tool=names)


def not_permitted(active: Mapping[str, ActiveSkill], what: str) -> str:
    """The refusal of a run that no active skill's ``allowed-tools`` allows."""
    allowed = "; ".join(
        f"{skill.name}: {skill.allowed.describe()}"
        for skill in restricting_skills(active)
        if skill.allowed is not None
    )
    return (
        f"{what} is not allowed while skills that limit their tools are active (allowed-tools "
        f"of {allowed}). It was not run; use what they allow."
    )


def allowance_note(allowed: AllowedTools) -> str:
    """What an activation says about the skill's ``allowed-tools``."""
    return (
        f"this skill limits the tools while it is active (allowed-tools): it allows "
        f"{allowed.describe()}; with other such skills active, what any of them allows."
    )
