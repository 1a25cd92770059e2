"""The progressive-disclosure rules (DESIGN §4), for every front door that offers skills.

What may be activated now (:func:`attachable`: the roots, then the children of active
parents, so a tree grows as it is opened), the tools offered (:func:`tool_specs` for an agent
job, :func:`front_door_specs` for the MCP front door: the same four tools, plus what only an
MCP client needs), the activation rules (:func:`activation_refusal`, :func:`not_active`) and
their texts, and executable-skill tools (``<skill>__<tool>`` from a script's ``--help-json``).

The agent loop (``skillweave.agent.loop``, through ``skillweave.agent.tools``) and the MCP
front door (``mcp_manager.mcp_server``) both import this module, so the model sees the same
names, schemas and refusals whichever door it came through. Pure: no I/O, no clock, no
randomness (it runs inside the Temporal workflow sandbox).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Protocol

from skillweave.agent.state import ActiveSkill, SkillTool
from skillweave.llm.messages import ToolSpec

__all__ = [
    "ACTIVATE_SKILL",
    "ARGS_NOT_STRINGS",
    "FRONT_DOOR_INSTRUCTIONS",
    "INPUT_ARTIFACTS",
    "LIST_SKILLS",
    "READ_SKILL_RESOURCE",
    "RUN_SKILL_SCRIPT",
    "SEARCH_SKILLS",
    "SEARCH_TOP_K_MAX",
    "TOP_K_INVALID",
    "activation_footer",
    "activation_refusal",
    "activation_tools",
    "already_active",
    "artifact_list_needed",
    "attachable",
    "cannot_activate",
    "find_skill_tool",
    "front_door_specs",
    "names_preview",
    "needs_string",
    "not_active",
    "package_refused",
    "skill_tool_name",
    "skill_tools",
    "tool_specs",
    "unknown_tool",
    "with_input_artifacts",
]

ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_RESOURCE: Final = "read_skill_resource"
RUN_SKILL_SCRIPT: Final = "run_skill_script"
SEARCH_SKILLS: Final = "search_skills"
LIST_SKILLS: Final = "list_skills"
"""The MCP front door's tier 1 (an agent job has the catalog in its system prompt)."""
INPUT_ARTIFACTS: Final = "input_artifacts"
"""The argument an executable-skill tool gets on top of its own: artifacts to copy into
``inputs/``. It is taken out before the script sees ``--run-json``."""

SEARCH_TOP_K_MAX: Final = 50
"""The most hits an MCP client may ask ``search_skills`` for."""

ARGS_NOT_STRINGS: Final = "'args' must be a list of strings."
TOP_K_INVALID: Final = f"top_k must be a whole number from 1 to {SEARCH_TOP_K_MAX}."

FRONT_DOOR_INSTRUCTIONS: Final = (
    f"Skills give you instructions, reference files and scripts for specialised tasks. Call "
    f"{LIST_SKILLS} (or {SEARCH_SKILLS}) to see them, {ACTIVATE_SKILL} before using one, then "
    f"{READ_SKILL_RESOURCE} and {RUN_SKILL_SCRIPT} as its instructions say. Scripts run in "
    "isolated sandboxes; their output files come back to you."
)
"""What the MCP front door tells a client when it connects."""

_TOOL_NAME_MAX: Final = 64
_PREVIEW_NAMES: Final = 12

_ARTIFACT_LIST: Final[dict[str, Any]] = {
    "type": "array",
    "items": {"type": "string"},
    "description": (
        "Artifact keys (as shown in earlier results, e.g. runs/…/outputs/stats.json) to copy "
        "into the script's inputs/ folder under their file names."
    ),
}


class ToolSchemaLike(Protocol):
    """What a script's ``--help-json`` declares per tool (``skillweave.skills.ToolSchema``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...


# --- what may be activated ---------------------------------------------------------------


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


def names_preview(names: Sequence[str]) -> str:
    """Up to a dozen names, comma-separated, then how many more; ``(none)`` when empty."""
    shown = ", ".join(names[:_PREVIEW_NAMES])
    more = len(names) - _PREVIEW_NAMES
    return shown + (f" and {more} more" if more > 0 else "") if names else "(none)"


def already_active(name: str) -> str:
    """The note a repeated activation gets."""
    return f"Skill {name!r} is already active; its instructions are above."


def cannot_activate(name: str, attachable: Sequence[str]) -> str:
    """The refusal of an activation `name` is not allowed now (unknown, or a closed tree)."""
    return (
        f"Skill {name!r} cannot be activated now. Skills that can: {names_preview(attachable)}."
        " A sub-skill becomes available once its parent skill is active."
    )


def not_active(name: str, attachable: Sequence[str]) -> str:
    """The refusal of a resource read or a script run for a skill that is not active."""
    hint = (
        f"activate it first with {ACTIVATE_SKILL}(name={name!r})"
        if name in attachable
        else f"skills that can be activated now: {names_preview(attachable)}"
    )
    return f"Skill {name!r} is not active; {hint}."


def unknown_tool(name: str, offered: Sequence[str]) -> str:
    """The answer to a call of a tool that is not offered."""
    return f"There is no tool named {name!r}. Tools available now: {names_preview(offered)}."


def needs_string(tool: str, argument: str) -> str:
    """The refusal of a call whose string `argument` is missing or empty."""
    return f"{tool} needs {argument!r}, a non-empty string."


def artifact_list_needed(argument: str) -> str:
    """The refusal of a call whose artifact-list `argument` is not a list of strings."""
    return f"{argument!r} must be a list of artifact keys (strings)."


def package_refused(reason: object) -> str:
    """The activation note of a skill whose package the store refused: its instructions still
    help, its scripts cannot run (the manager runs packages)."""
    return f"this skill's scripts cannot run: its package is refused ({reason})"


def activation_footer(tools: Sequence[SkillTool], notes: Sequence[str]) -> str:
    """What follows a skill's ``<skill_content>`` at activation: the tools it registered and
    the problems met registering them."""
    text = ""
    if tools:
        text += f"\nTools registered by this skill: {', '.join(tool.name for tool in tools)}.\n"
    for note in notes:
        text += f"\nNote: {note}\n"
    return text


async def activation_tools(
    scripts: Sequence[str],
    schemas: Callable[[str], Awaitable[tuple[SkillTool, ...] | str]],
    *,
    notes: Sequence[str],
) -> tuple[list[SkillTool], list[str]]:
    """The tools an activation registers, and its notes: each declared tool script's tools,
    asked through `schemas` (which runs ``--help-json``; a string is why it could not), none
    when `notes` already say the skill's scripts cannot run. The loop itself does no I/O: the
    caller's `schemas` does."""
    tools: list[SkillTool] = []
    said = list(notes)
    for script in scripts if not notes else ():
        found = await schemas(script)
        if isinstance(found, str):
            said.append(found)
        else:
            tools.extend(found)
    return tools, said


# --- executable-skill tools --------------------------------------------------------------


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


def skill_tools(
    skill: str, script: str, schemas: Sequence[ToolSchemaLike]
) -> tuple[SkillTool, ...]:
    """The tools `script` of `skill` registers, from what its ``--help-json`` declared."""
    return tuple(
        SkillTool(
            name=skill_tool_name(skill, schema.name),
            tool=schema.name,
            script=script,
            description=schema.description,
            input_schema=schema.input_schema,
            shared_script=len(schemas) > 1,
        )
        for schema in schemas
    )


def find_skill_tool(
    active: Mapping[str, ActiveSkill], name: str
) -> tuple[ActiveSkill, SkillTool] | None:
    """The active skill that registered the tool `name`, and the tool; None if none did."""
    for skill in active.values():
        for tool in skill.tools:
            if tool.name == name:
                return skill, tool
    return None


def with_input_artifacts(schema: dict[str, Any]) -> dict[str, Any]:
    """An executable tool's schema with the optional ``input_artifacts`` argument added."""
    properties = dict(schema.get("properties") or {})
    if INPUT_ARTIFACTS in properties:
        return schema
    properties[INPUT_ARTIFACTS] = _ARTIFACT_LIST
    return {**schema, "properties": properties}


# --- the tools offered -------------------------------------------------------------------


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _activate(names: Sequence[str], active: Mapping[str, ActiveSkill]) -> ToolSpec:
    enum = [n for n in names if n not in active] or list(names)
    return ToolSpec(
        name=ACTIVATE_SKILL,
        description=(
            "Load a skill's instructions (and, for a skill with sub-skills, their catalog "
            "entries). Activate a skill before using its resources or scripts."
        ),
        input_schema=_object({"name": {"type": "string", "enum": enum}}, ["name"]),
    )


def _active_enum(active: Mapping[str, ActiveSkill]) -> dict[str, Any]:
    names = list(active)
    return {"type": "string", "enum": names} if names else {"type": "string"}


def _read(active: Mapping[str, ActiveSkill]) -> ToolSpec:
    return ToolSpec(
        name=READ_SKILL_RESOURCE,
        description="Read a text file bundled with an active skill (e.g. references/x.md).",
        input_schema=_object(
            {
                "skill": _active_enum(active),
                "path": {"type": "string", "description": "Path inside the skill folder."},
            },
            ["skill", "path"],
        ),
    )


def _run(active: Mapping[str, ActiveSkill]) -> ToolSpec:
    return ToolSpec(
        name=RUN_SKILL_SCRIPT,
        description=(
            "Run a script bundled with an active skill in a fresh, isolated sandbox. The "
            "script runs in a workspace with the skill under skill/, the given artifacts "
            "under inputs/, and every file it writes under outputs/ becomes an artifact."
        ),
        input_schema=_object(
            {
                "skill": _active_enum(active),
                "script": {"type": "string", "description": "e.g. scripts/run.py"},
                "args": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Command-line arguments (no shell).",
                },
                "inputs": _ARTIFACT_LIST,
            },
            ["skill", "script"],
        ),
    )


def _search(extra: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(
        name=SEARCH_SKILLS,
        description="Search the skill library for skills that fit a task.",
        input_schema=_object({"query": {"type": "string"}, **(extra or {})}, ["query"]),
    )


def _skill_tool_specs(active: Mapping[str, ActiveSkill]) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=tool.name,
            description=tool.description,
            input_schema=with_input_artifacts(tool.input_schema),
        )
        for skill in active.values()
        for tool in skill.tools
    ]


def tool_specs(
    *, roots: Sequence[str], active: Mapping[str, ActiveSkill], search: bool
) -> tuple[ToolSpec, ...]:
    """The tools an agent job offers on its next model call.

    ``activate_skill`` (when anything is attachable; its enum is what is attachable and not
    active yet, or everything attachable once all is active), ``read_skill_resource`` and
    ``run_skill_script`` (their ``skill`` an enum of the active skills), ``search_skills``
    when `search` is on, then each active executable skill's tools.
    """
    names = attachable(roots, active)
    specs = [_activate(names, active)] if names else []
    specs += [_read(active), _run(active)]
    if search:
        specs.append(_search())
    return (*specs, *_skill_tool_specs(active))


def front_door_specs(
    *, roots: Sequence[str], active: Mapping[str, ActiveSkill]
) -> tuple[ToolSpec, ...]:
    """The tools the MCP front door offers one session: ``list_skills`` (tier 1, which a job
    has in its system prompt), then a job's tools with search always on, and a ``top_k``
    the client may set."""
    listing = ToolSpec(
        name=LIST_SKILLS,
        description=(
            "List the skills available (name and description). In auto mode pass the task as "
            "query to get the most relevant ones."
        ),
        input_schema=_object({"query": {"type": "string", "description": "The task."}}, []),
    )
    top_k = {"top_k": {"type": "integer", "minimum": 1, "maximum": SEARCH_TOP_K_MAX}}
    specs = [
        _search(top_k) if spec.name == SEARCH_SKILLS else spec
        for spec in tool_specs(roots=roots, active=active, search=True)
    ]
    return (listing, *specs)
