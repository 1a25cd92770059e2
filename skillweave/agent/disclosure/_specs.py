"""The tools offered: :func:`tool_specs` for an agent run's next model call,
:func:`front_door_specs` for an MCP session (the same tools, plus ``list_skills``, a ``top_k``
and ``input_files``). Built from the activation rules, the skill tools and ``allowed-tools``
(the sibling modules). Used, through the package front, by ``skillweave.agent.tools`` and the MCP
front door.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillweave.agent.disclosure._activation import attachable
from skillweave.agent.disclosure._allowance import permits, restricting_skills
from skillweave.agent.disclosure._names import (
    ACTIVATE_SKILL,
    ARTIFACT_LIST,
    INPUT_FILES,
    INPUT_FILES_MAX,
    LIST_SKILLS,
    OWN_TOOLS,
    READ_SKILL_RESOURCE,
    RUN_SKILL_SCRIPT,
    SEARCH_SKILLS,
    SEARCH_TOP_K_MAX,
)
from skillweave.agent.disclosure._skill_tools import with_input_artifacts
from skillweave.agent.state import ActiveSkill
from skillweave.llm.messages import ToolSpec


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
                "inputs": ARTIFACT_LIST,
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
        if permits(active, skill=skill.name, script=tool.script, tool=tool)
    ]


def _runs_scripts(active: Mapping[str, ActiveSkill]) -> bool:
    """Whether ``run_skill_script`` is offered: unless skills that limit their tools are
    active and none of them allows a script."""
    restricting = restricting_skills(active)
    return not restricting or any(
        skill.allowed is not None and skill.allowed.scripts for skill in restricting
    )


def tool_specs(
    *, roots: Sequence[str], active: Mapping[str, ActiveSkill], search: bool
) -> tuple[ToolSpec, ...]:
    """The tools an agent run offers on its next model call.

    ``activate_skill`` (when anything is attachable; its enum is what is attachable and not
    active yet, or everything attachable once all is active), ``read_skill_resource`` and
    ``run_skill_script`` (their ``skill`` an enum of the active skills), ``search_skills``
    when `search` is on, then each active executable skill's tools. While active skills limit
    the tools (``allowed-tools``), only what they allow of ``run_skill_script`` and the skill
    tools is offered (:func:`permits`); the others reveal skill content and stay.
    """
    names = attachable(roots, active)
    specs = [_activate(names, active)] if names else []
    specs.append(_read(active))
    if _runs_scripts(active):
        specs.append(_run(active))
    if search:
        specs.append(_search())
    return (*specs, *_skill_tool_specs(active))


def _input_files(*, local_paths: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": {
            "type": "string",
            "description": "Where the file lands under the script's inputs/ (e.g. form.pdf).",
        },
        "content": {"type": "string", "description": "The file's text (UTF-8)."},
        "content_base64": {"type": "string", "description": "The file's bytes, in base64."},
    }
    how = "Give each file's content, as text or in base64"
    if local_paths:
        item["path"] = {
            "type": "string",
            "description": "A file on this machine, in a folder the server allows.",
        }
        how += ", or a local path"
    else:  # said here, so that a path given anyway gets the answer that says why
        item["path"] = {"type": "string", "description": "Local paths work over stdio only."}
    return {
        "type": "array",
        "maxItems": INPUT_FILES_MAX,
        "items": {
            "type": "object",
            "properties": item,
            "required": ["name"],
            "additionalProperties": False,
        },
        "description": f"Files of your own to copy into the script's inputs/ folder. {how}.",
    }


def _with_input_files(spec: ToolSpec, files: dict[str, Any]) -> ToolSpec:
    """`spec` (``run_skill_script`` or a skill tool) taking :data:`INPUT_FILES` too."""
    schema = spec.input_schema
    properties = dict(schema.get("properties") or {})
    if INPUT_FILES in properties:
        return spec  # a skill tool's own argument of that name: its schema wins
    properties[INPUT_FILES] = files
    return spec.model_copy(update={"input_schema": {**schema, "properties": properties}})


def front_door_specs(
    *, roots: Sequence[str], active: Mapping[str, ActiveSkill], local_paths: bool = False
) -> tuple[ToolSpec, ...]:
    """The tools the MCP front door offers one session: ``list_skills`` (tier 1, which a run
    has in its system prompt), then a run's tools with search always on, a ``top_k`` the
    client may set, and :data:`INPUT_FILES` on whatever runs a script (with a local ``path``
    per file when `local_paths`: over stdio, where the client's machine is the server's)."""
    listing = ToolSpec(
        name=LIST_SKILLS,
        description=(
            "List the skills available (name and description). In auto mode pass the task as "
            "query to get the most relevant ones."
        ),
        input_schema=_object({"query": {"type": "string", "description": "The task."}}, []),
    )
    top_k = {"top_k": {"type": "integer", "minimum": 1, "maximum": SEARCH_TOP_K_MAX}}
    files = _input_files(local_paths=local_paths)

    def for_mcp(spec: ToolSpec) -> ToolSpec:
        if spec.name == SEARCH_SKILLS:
            return _search(top_k)
        if spec.name not in OWN_TOOLS or spec.name == RUN_SKILL_SCRIPT:
            return _with_input_files(spec, files)
        return spec

    return (listing, *map(for_mcp, tool_specs(roots=roots, active=active, search=True)))
