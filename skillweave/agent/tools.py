"""The tools the model sees in an agent run (DESIGN §4), built from the run's state.

The rules and specs are :mod:`skillweave.agent.disclosure`'s (shared with the MCP front
door); this module applies them to an :class:`AgentState`. Tool specs are rebuilt every turn,
so the model is never offered a call the loop would refuse for a reason it cannot see.
"""

from __future__ import annotations

from skillweave.agent.acquisition import acquisition_specs
from skillweave.agent.authoring import authoring_specs
from skillweave.agent.disclosure import (
    ACTIVATE_SKILL,
    INPUT_ARTIFACTS,
    READ_SKILL_RESOURCE,
    RUN_SKILL_SCRIPT,
    SEARCH_SKILLS,
    skill_tool_name,
    with_input_artifacts,
)
from skillweave.agent.disclosure import tool_specs as _tool_specs
from skillweave.agent.state import AgentState
from skillweave.llm.messages import ToolSpec

__all__ = [
    "ACTIVATE_SKILL",
    "INPUT_ARTIFACTS",
    "READ_SKILL_RESOURCE",
    "RUN_SKILL_SCRIPT",
    "SEARCH_SKILLS",
    "skill_tool_name",
    "tool_specs",
    "with_input_artifacts",
]


def tool_specs(state: AgentState) -> tuple[ToolSpec, ...]:
    """The tools offered on the next model call of the run `state` (with ``create_skill`` and
    ``publish_skill`` when its agent writes skills, ``find_skills`` and ``request_skill`` when
    it asks for registry skills: ``skillweave.agent.acquisition``)."""
    specs = _tool_specs(roots=state.roots, active=state.active, search=state.search_enabled)
    if state.authoring:
        specs = (*specs, *authoring_specs(state.drafts))
    return (*specs, *acquisition_specs(state))
