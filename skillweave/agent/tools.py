"""The tools the model sees (DESIGN §4), built from the job's state.

``activate_skill`` takes a ``name`` whose JSON Schema enum is exactly what may be activated
now (the roots, then the children of active parents: a tree grows the enum);
``read_skill_resource`` and ``run_skill_script`` take a skill that must be active;
``search_skills`` is offered when the catalog is ``auto`` or folded; each executable skill
adds its own tools, ``<skill>__<tool>``, when it is activated. Tool specs are rebuilt every
turn, so the model is never offered a call the loop would refuse for a reason it cannot see.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

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

ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_RESOURCE: Final = "read_skill_resource"
RUN_SKILL_SCRIPT: Final = "run_skill_script"
SEARCH_SKILLS: Final = "search_skills"
INPUT_ARTIFACTS: Final = "input_artifacts"
"""The argument an executable-skill tool gets on top of its own: artifacts to copy into
``inputs/``. It is taken out before the script sees ``--run-json``."""

_TOOL_NAME_MAX: Final = 64

_ARTIFACT_LIST: Final[dict[str, Any]] = {
    "type": "array",
    "items": {"type": "string"},
    "description": (
        "Artifact keys (as shown in earlier results, e.g. runs/…/outputs/stats.json) to copy "
        "into the script's inputs/ folder under their file names."
    ),
}


def skill_tool_name(skill: str, tool: str) -> str:
    """``<skill>__<tool>``, shortened with a hash when longer than a tool name may be."""
    name = f"{skill}__{tool}"
    if len(name) <= _TOOL_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    keep = _TOOL_NAME_MAX - len(tool) - len(digest) - 3
    if keep < 1:
        return f"{skill[:20]}_{digest}__{tool[: _TOOL_NAME_MAX - 31]}"
    return f"{skill[:keep]}_{digest}__{tool}"


def with_input_artifacts(schema: dict[str, Any]) -> dict[str, Any]:
    """An executable tool's schema with the optional ``input_artifacts`` argument added."""
    properties = dict(schema.get("properties") or {})
    if INPUT_ARTIFACTS in properties:
        return schema
    properties[INPUT_ARTIFACTS] = _ARTIFACT_LIST
    return {**schema, "properties": properties}


def _activate(state: AgentState) -> ToolSpec:
    names = [n for n in state.attachable() if n not in state.active] or list(state.attachable())
    return ToolSpec(
        name=ACTIVATE_SKILL,
        description=(
            "Load a skill's instructions (and, for a skill with sub-skills, their catalog "
            "entries). Activate a skill before using its resources or scripts."
        ),
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": names}},
            "required": ["name"],
            "additionalProperties": False,
        },
    )


def _active_enum(state: AgentState) -> dict[str, Any]:
    names = list(state.active)
    return {"type": "string", "enum": names} if names else {"type": "string"}


def tool_specs(state: AgentState) -> tuple[ToolSpec, ...]:
    """The tools offered on the next model call."""
    specs = []
    if state.attachable():
        specs.append(_activate(state))
    specs.append(
        ToolSpec(
            name=READ_SKILL_RESOURCE,
            description="Read a text file bundled with an active skill (e.g. references/x.md).",
            input_schema={
                "type": "object",
                "properties": {
                    "skill": _active_enum(state),
                    "path": {"type": "string", "description": "Path inside the skill folder."},
                },
                "required": ["skill", "path"],
                "additionalProperties": False,
            },
        )
    )
    specs.append(
        ToolSpec(
            name=RUN_SKILL_SCRIPT,
            description=(
                "Run a script bundled with an active skill in a fresh, isolated sandbox. The "
                "script runs in a workspace with the skill under skill/, the given artifacts "
                "under inputs/, and every file it writes under outputs/ becomes an artifact."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "skill": _active_enum(state),
                    "script": {"type": "string", "description": "e.g. scripts/run.py"},
                    "args": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Command-line arguments (no shell).",
                    },
                    "inputs": _ARTIFACT_LIST,
                },
                "required": ["skill", "script"],
                "additionalProperties": False,
            },
        )
    )
    if state.search_enabled:
        specs.append(
            ToolSpec(
                name=SEARCH_SKILLS,
                description="Search the skill library for skills that fit a task.",
                input_schema={
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                    "additionalProperties": False,
                },
            )
        )
    for skill in state.active.values():
        specs.extend(
            ToolSpec(
                name=tool.name,
                description=tool.description,
                input_schema=with_input_artifacts(tool.input_schema),
            )
            for tool in skill.tools
        )
    return tuple(specs)
