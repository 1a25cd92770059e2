"""The progressive-disclosure rules (DESIGN §4), for every front door that offers skills.

What may be activated now (:func:`attachable`: the roots, then the children of active
parents, so a tree grows as it is opened), the tools offered (:func:`tool_specs` for an agent
job, :func:`front_door_specs` for the MCP front door: the same four tools, plus what only an
MCP client needs), the activation rules (:func:`activation_refusal`, :func:`not_active`) and
their texts, executable-skill tools (:func:`skill_tools`: named by a script's ``--help-json``,
``<skill>__<tool>`` only when that name is taken), what active skills' ``allowed-tools`` let
run (:func:`permits`, :func:`pre_approved`), and what a call's arguments must be before anything
runs (:func:`arguments_refusal`: readable JSON, valid against the tool's schema).

The agent loop (``skillweave.agent.loop``, through ``skillweave.agent.tools``) and the MCP
front door (``mcp_manager.mcp_server``) both import this module, so the model sees the same
names, schemas and refusals whichever door it came through. Pure: no I/O, no clock, no
randomness (it runs inside the Temporal workflow sandbox).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, Protocol

import jsonschema
from referencing.exceptions import Unresolvable

from skillweave.agent.state import ActiveSkill, SkillTool
from skillweave.llm.messages import RAW_ARGUMENTS_KEY, ToolSpec
from skillweave.skills.allowed_tools import AllowedTools

__all__ = [
    "ACTIVATE_SKILL",
    "ARGS_NOT_STRINGS",
    "CREATE_SKILL",
    "FRONT_DOOR_INSTRUCTIONS",
    "INPUT_ARTIFACTS",
    "INPUT_FILES",
    "INPUT_FILES_MAX",
    "LIST_SKILLS",
    "OWN_TOOLS",
    "PUBLISH_SKILL",
    "RAW_ARGUMENTS",
    "READ_SKILL_RESOURCE",
    "RUN_SKILL_SCRIPT",
    "SEARCH_SKILLS",
    "SEARCH_TOP_K_MAX",
    "TOP_K_INVALID",
    "activation_footer",
    "activation_refusal",
    "activation_tools",
    "allowance_note",
    "already_active",
    "arguments_refusal",
    "artifact_list_needed",
    "attachable",
    "cannot_activate",
    "find_skill_tool",
    "front_door_specs",
    "names_preview",
    "needs_string",
    "not_active",
    "not_permitted",
    "package_refused",
    "permits",
    "pre_approved",
    "raw_arguments",
    "registered_tools",
    "skill_tool_name",
    "skill_tools",
    "tool_specs",
    "unknown_tool",
    "unreadable_arguments",
    "with_input_artifacts",
]

ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_RESOURCE: Final = "read_skill_resource"
RUN_SKILL_SCRIPT: Final = "run_skill_script"
SEARCH_SKILLS: Final = "search_skills"
LIST_SKILLS: Final = "list_skills"
"""The MCP front door's tier 1 (an agent job has the catalog in its system prompt)."""
INPUT_FILES: Final = "input_files"
"""The argument an MCP client gives a script its own files by (``run_skill_script`` and skill
tools, over MCP only): ``[{name, content | content_base64 | path}]``."""
INPUT_FILES_MAX: Final = 32
"""The most files one call may give."""
INPUT_ARTIFACTS: Final = "input_artifacts"
"""The argument an executable-skill tool gets on top of its own: artifacts to copy into
``inputs/``. It is taken out before the script sees ``--run-json``."""

CREATE_SKILL: Final = "create_skill"
PUBLISH_SKILL: Final = "publish_skill"
"""An agent job's own authoring tools, when its spec allows (``skillweave.agent.authoring``)."""

OWN_TOOLS: Final = frozenset(
    {
        LIST_SKILLS,
        ACTIVATE_SKILL,
        READ_SKILL_RESOURCE,
        RUN_SKILL_SCRIPT,
        SEARCH_SKILLS,
        CREATE_SKILL,
        PUBLISH_SKILL,
    }
)
"""The tools of the front doors themselves (an executable skill's tools are the others)."""
RAW_ARGUMENTS: Final = RAW_ARGUMENTS_KEY
"""The key under which a provider hands over tool-call arguments that were not a JSON object,
verbatim (defined with the messages, ``skillweave.llm.messages.RAW_ARGUMENTS_KEY``)."""

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
_PROBLEMS_SHOWN: Final = 5
_PROBLEM_CHARS: Final = 200
_RAW_SHOWN: Final = 160
_JSON_TYPES: Final[dict[type, str]] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
_OWN_CHECKS: Final = frozenset({"required", "type", "enum"})
"""Schema rules the front doors' own tools check themselves, in words that say what to do
(``needs_string``, ``not_active``, ``cannot_activate``…); the schema adds the rest."""

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
    properties[INPUT_ARTIFACTS] = _ARTIFACT_LIST
    return {**schema, "properties": properties}


# --- allowed-tools -----------------------------------------------------------------------


def _restricting(active: Mapping[str, ActiveSkill]) -> list[ActiveSkill]:
    return [skill for skill in active.values() if skill.allowed is not None]


def permits(
    active: Mapping[str, ActiveSkill], *, skill: str, script: str, tool: SkillTool | None = None
) -> bool:
    """Whether `script` of the active `skill` (run for `tool`, when it is a skill tool's) may
    run: always while no active skill has ``allowed-tools``; else when one of those allows it
    (the union of what they allow)."""
    restricting = _restricting(active)
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
        for skill in _restricting(active)
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


# --- a call's arguments ------------------------------------------------------------------


def raw_arguments(arguments: Mapping[str, Any]) -> str | None:
    """The text a provider kept in place of a call's arguments because it was not a JSON
    object (``{"_raw": text}``, see :data:`RAW_ARGUMENTS`); None for readable arguments."""
    raw = arguments.get(RAW_ARGUMENTS) if len(arguments) == 1 else None
    return raw if isinstance(raw, str) else None


def unreadable_arguments(tool: str, raw: str, *, cut_off: bool = False) -> str:
    """The refusal of a call of `tool` whose arguments, `raw`, are not a JSON object;
    `cut_off`: the reply that made the call ended at the output token limit."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        why = str(exc)
    else:
        why = f"they are a JSON {_JSON_TYPES.get(type(value), 'value')}, not an object"
    text = (
        f"Your arguments were not valid JSON: {why}. {tool} was not run; call it again with "
        "all its arguments as one JSON object."
    )
    if cut_off:
        text += " Your reply was cut off at the output token limit, which ended them early."
    shown = raw if len(raw) <= _RAW_SHOWN else f"{raw[:_RAW_SHOWN]}…"
    return f"{text} They began: {shown!r}"


def _problem(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    text = f"{where!r}: {error.message}" if where else error.message
    return text if len(text) <= _PROBLEM_CHARS else f"{text[:_PROBLEM_CHARS]}…"


def arguments_refusal(
    tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any], *, cut_off: bool = False
) -> str | None:
    """Why the `arguments` of a call of `tool` are refused before anything runs: they were not
    readable JSON (:func:`unreadable_arguments`; `cut_off` as there), or they do not match
    `schema`, the tool's input schema as offered; None when they may go on.

    An executable skill's tool is held to its whole schema (from ``--help-json``). The front
    doors' own tools (:data:`OWN_TOOLS`) are checked here only for what their own checks do
    not say better (:data:`_OWN_CHECKS`): arguments they do not take. A schema that cannot be
    applied (a reference that does not resolve) is the skill's problem, not the model's: the
    arguments go on to the script, which judges them.
    """
    raw = raw_arguments(arguments)
    if raw is not None:
        return unreadable_arguments(tool, raw, cut_off=cut_off)
    validator = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )(schema)
    try:
        errors = list(validator.iter_errors(dict(arguments)))
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType, Unresolvable):
        return None
    if tool in OWN_TOOLS:
        errors = [error for error in errors if error.validator not in _OWN_CHECKS]
    if not errors:
        return None
    problems = [_problem(error) for error in errors[:_PROBLEMS_SHOWN]]
    more = len(errors) - len(problems)
    listed = "; ".join(problems) + (f"; and {more} more" if more > 0 else "")
    return (
        f"Your arguments to {tool} do not match its schema: {listed}. It was not run; call it "
        "again with arguments that match the schema."
    )


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
        if permits(active, skill=skill.name, script=tool.script, tool=tool)
    ]


def _runs_scripts(active: Mapping[str, ActiveSkill]) -> bool:
    """Whether ``run_skill_script`` is offered: unless skills that limit their tools are
    active and none of them allows a script."""
    restricting = _restricting(active)
    return not restricting or any(
        skill.allowed is not None and skill.allowed.scripts for skill in restricting
    )


def tool_specs(
    *, roots: Sequence[str], active: Mapping[str, ActiveSkill], search: bool
) -> tuple[ToolSpec, ...]:
    """The tools an agent job offers on its next model call.

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
    """The tools the MCP front door offers one session: ``list_skills`` (tier 1, which a job
    has in its system prompt), then a job's tools with search always on, a ``top_k`` the
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
