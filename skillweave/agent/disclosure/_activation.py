"""What may be activated now: the roots, then the children of active parents (a tree grows as
it is opened), and why an activation is refused. Used by the tool specs (``_specs``) and, through
the package front, by the agent loop and the MCP front door.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skillweave.agent.disclosure._texts import already_active, cannot_activate
from skillweave.agent.state import ActiveSkill


def attachable(roots: Sequence[str], active: Mapping[str, ActiveSkill]) -> tuple[str, ...]:
    """What ``activate_skill`` accepts now: `roots`, then the children of `active` skills
    (in activation order, each name once)."""
    names = list(roots)
    seen = set(names)
    for skill in active.values():
        for child in skill.children:
            if child not in seen:
                seen.add(child)
                names.append(child)
    return tuple(names)


def activation_refusal(
    name: str, *, roots: Sequence[str], active: Mapping[str, ActiveSkill]
) -> str | None:
    """Why ``activate_skill(name)`` is refused, or None when `name` may be activated."""
    if name in active:
        return already_active(name)
    can = attachable(roots, active)
    if name not in can:
        return cannot_activate(name, can)
    return None
