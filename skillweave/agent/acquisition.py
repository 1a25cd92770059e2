"""Skills an agent asks to have installed: the ``find_skills`` and ``request_skill`` tools.

Offered only to agents whose spec turns ``acquisition`` on. ``find_skills`` searches the
registries the agent may use (``SKILLS__REGISTRIES``, narrowed by ``acquisition.registries``)
and lists each hit's name, description, registry, version, scan and whether it is signed;
``request_skill`` names one of those hits. The runtime fetches it at its entry's commit,
checks that its files hash to the entry's version, scans it and checks its signature before a
person is asked (the run's approval channel); approved, it is installed for the whole library
and this run may activate it at once.

When ``find_skills`` is offered (:func:`offers_find`):

- ``always``: from the first turn;
- ``on_miss`` (the default): once the run looked in its own library first: after its first
  ``search_skills`` call, or from the first turn when the run has no ``search_skills`` (its
  whole catalog is in view). The model judges the miss: a relevance search ranks whatever
  the library holds, so "found nothing" is no signal, but a model that read the hits and
  found none fitting can go on to the registries.

Once offered, it stays offered; ``request_skill`` is offered once ``find_skills`` found
something (its enum: the names found), like ``publish_skill`` once there are drafts.

Pure, like :mod:`skillweave.agent.disclosure` (it runs inside the Temporal workflow): the tool
specs, the rule above, and the texts the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from skillweave.agent.disclosure import FIND_SKILLS, REQUEST_SKILL, SEARCH_SKILLS
from skillweave.agent.refusals import because
from skillweave.agent.state import AgentState, FoundSkill
from skillweave.llm.messages import ToolSpec

__all__ = [
    "FIND_SKILLS",
    "FOUND_MAX",
    "REQUEST_SKILL",
    "acquisition_specs",
    "already_acquired",
    "not_approved",
    "not_found",
    "offers_find",
    "too_many_installs",
]

FOUND_MAX: Final = 50
"""The most registry skills a run remembers as found (the oldest are forgotten first)."""


def offers_find(state: AgentState) -> bool:
    """Whether ``find_skills`` is offered on the run's next model call (the module's rule)."""
    match state.acquisition:
        case "off":
            return False
        case "always":
            return True
        case "on_miss":
            return state.library_searched or bool(state.found)


def acquisition_specs(state: AgentState) -> tuple[ToolSpec, ...]:
    """``find_skills`` when :func:`offers_find`, and ``request_skill`` once it found skills."""
    if not offers_find(state):
        return ()
    find = ToolSpec(
        name=FIND_SKILLS,
        description=(
            "Search the skill registries for a skill this library does not have yet. Each "
            "hit shows its name, description, registry, version, scan and whether it is "
            "signed; request_skill asks to install one."
        ),
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What the skill does."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    )
    if not state.found:
        return (find,)
    request = ToolSpec(
        name=REQUEST_SKILL,
        description=(
            "Ask for a registry skill find_skills found: it is checked (version, scan, "
            "signature), then a person decides whether to install it. Approved, you can "
            "activate it at once. Waits for their decision."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": sorted(state.found)},
                "registry": {
                    "type": "string",
                    "enum": sorted({hit.registry for hit in state.found.values()}),
                    "description": "The registry find_skills named (default: that one).",
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    )
    return (find, request)


def not_found(name: str, found: Mapping[str, FoundSkill]) -> str:
    """The refusal of a request for a skill ``find_skills`` did not find."""
    names = ", ".join(sorted(found)) or "none yet"
    return (
        f"{name!r} is not a registry skill this run found (found: {names}); call "
        f"{FIND_SKILLS} first and request one of its hits."
    )


def already_acquired(name: str) -> str:
    """The refusal of a second request for a skill this run had installed."""
    return f"{name!r} is installed for this run already; activate it with activate_skill."


def too_many_installs(limit: int) -> str:
    """The refusal of a request past ``acquisition.max_installs``."""
    return (
        f"This run has had {limit} skills installed, as many as its agent allows; use the "
        f"skills it has, or {SEARCH_SKILLS} the library again."
    )


def not_approved(name: str, note: str) -> str:
    """The refusal of a request the person did not approve (their note, if any)."""
    return f"Installing {name!r} was not approved{because(note)} Do not request it again unchanged."
