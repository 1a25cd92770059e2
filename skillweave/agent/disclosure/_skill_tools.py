"""An executable skill's own tools: the ones an activation registers from its scripts'
``--help-json`` (:func:`activation_tools`, :func:`skill_tools`: named by the schema,
``<skill>__<tool>`` only when that name is taken), the footer that lists them, and finding the
active skill that registered a tool. Used by the tool specs (``_specs``) and, through the package
front, by the agent loop, the engines and the MCP front door.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, Protocol

from skillweave.agent.disclosure._names import ARTIFACT_LIST, INPUT_ARTIFACTS, OWN_TOOLS
from skillweave.agent.state import ActiveSkill, SkillTool

_TOOL_NAME_MAX: Final = 64


class ToolSchemaLike(Protocol):
    """What a script's ``--help-json`` declares per tool (``skillweave.skills.ToolSchema``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...


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
    schemas: Callable[[str], Awaitable[Sequence[ToolSchemaLike] | str]],
    *,
    skill: str,
    taken: Collection[str],
    notes: Sequence[str],
) -> tuple[list[SkillTool], list[str]]:
    """The tools an activation of `skill` registers, and its notes: each declared tool
    script's tools, asked through `schemas` (which runs ``--help-json``; a string is why it
    could not) and named by :func:`skill_tools` around the tool names `taken` already; none
    when `notes` already say the skill's scripts cannot run. The loop itself does no I/O: the
    caller's `schemas` does."""
    declared: list[tuple[str, Sequence[ToolSchemaLike]]] = []
    said = list(notes)
    for script in scripts if not notes else ():
        found = await schemas(script)
        if isinstance(found, str):
            said.append(found)
        else:
            declared.append((script, found))
    return list(skill_tools(skill, declared, taken=taken)), said


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


def _free_name(skill: str, script: str, tool: str, used: Collection[str]) -> str:
    """The name `tool` of `script` is offered under: its own while no tool has it, else
    ``<skill>__<tool>``, else (two scripts of one skill with the same tool) one that also
    hashes the script's path."""
    for name in (tool, skill_tool_name(skill, tool)):
        if name not in used:
            return name
    digest = hashlib.sha256(f"{skill}/{script}/{tool}".encode()).hexdigest()[:8]
    return skill_tool_name(f"{skill}_{digest}", tool)


def skill_tools(
    skill: str,
    declared: Sequence[tuple[str, Sequence[ToolSchemaLike]]],
    *,
    taken: Collection[str] = (),
) -> tuple[SkillTool, ...]:
    """The tools `skill` registers: for each ``(script, schemas)`` of `declared`, what the
    script's ``--help-json`` declared, in order.

    A tool is offered under the name its schema gives it (``web_scraper``), and under
    ``<skill>__<tool>`` only when that name is taken: by a front door's own tool
    (:data:`OWN_TOOLS`), by a tool `taken` already (those of the skills active before this
    one: a name once offered never changes), or by an earlier tool of this skill.
    """
    used = set(OWN_TOOLS) | set(taken)
    tools: list[SkillTool] = []
    for script, schemas in declared:
        for schema in schemas:
            name = _free_name(skill, script, schema.name, used)
            used.add(name)
            tools.append(
                SkillTool(
                    name=name,
                    tool=schema.name,
                    script=script,
                    description=schema.description,
                    input_schema=schema.input_schema,
                    shared_script=len(schemas) > 1,
                )
            )
    return tuple(tools)


def registered_tools(active: Mapping[str, ActiveSkill]) -> tuple[str, ...]:
    """The names of the tools the skills in `active` registered (what a new tool must avoid)."""
    return tuple(tool.name for skill in active.values() for tool in skill.tools)


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
    properties[INPUT_ARTIFACTS] = ARTIFACT_LIST
    return {**schema, "properties": properties}
