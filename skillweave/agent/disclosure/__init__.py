"""The progressive-disclosure rules (DESIGN §4), for every front door that offers skills.

What may be activated now (:func:`attachable`: the roots, then the children of active
parents, so a tree grows as it is opened), the tools offered (:func:`tool_specs` for an agent
run, :func:`front_door_specs` for the MCP front door: the same four tools, plus what only an
MCP client needs), the activation rules (:func:`activation_refusal`, :func:`not_active`) and
their texts, executable-skill tools (:func:`skill_tools`: named by a script's ``--help-json``,
``<skill>__<tool>`` only when that name is taken), what active skills' ``allowed-tools`` let
run (:func:`permits`, :func:`pre_approved`), and what a call's arguments must be before anything
runs (:func:`arguments_refusal`: readable JSON, valid against the tool's schema).

The agent loop (``skillweave.agent.dispatch``, through ``skillweave.agent.tools``) and the MCP
front door (``mcp_manager.mcp_server``) both import this package, so the model sees the same
names, schemas and refusals whichever door it came through. Pure: no I/O, no clock, no
randomness (it runs inside the Temporal workflow sandbox).

This front re-exports the rules, which live in private modules by concern: ``_names`` (the
front doors' tools, arguments and fixed texts), ``_activation`` (what may be activated),
``_texts`` (refusals and notes), ``_skill_tools`` (an executable skill's tools), ``_allowance``
(``allowed-tools``), ``_arguments`` (a call's arguments) and ``_specs`` (the tools offered).
"""

from __future__ import annotations

from skillweave.agent.disclosure._activation import activation_refusal, attachable
from skillweave.agent.disclosure._allowance import (
    allowance_note,
    not_permitted,
    permits,
    pre_approved,
)
from skillweave.agent.disclosure._arguments import (
    arguments_refusal,
    raw_arguments,
    unreadable_arguments,
)
from skillweave.agent.disclosure._names import (
    ACTIVATE_SKILL,
    ARGS_NOT_STRINGS,
    CREATE_SKILL,
    FIND_SKILLS,
    FRONT_DOOR_INSTRUCTIONS,
    INPUT_ARTIFACTS,
    INPUT_FILES,
    INPUT_FILES_MAX,
    LIST_SKILLS,
    OWN_TOOLS,
    PUBLISH_SKILL,
    RAW_ARGUMENTS,
    READ_SKILL_RESOURCE,
    REQUEST_SKILL,
    RUN_SKILL_SCRIPT,
    SEARCH_SKILLS,
    SEARCH_TOP_K_MAX,
    TOP_K_INVALID,
)
from skillweave.agent.disclosure._skill_tools import (
    activation_footer,
    activation_tools,
    find_skill_tool,
    registered_tools,
    skill_tool_name,
    skill_tools,
    with_input_artifacts,
)
from skillweave.agent.disclosure._specs import front_door_specs, tool_specs
from skillweave.agent.disclosure._texts import (
    already_active,
    artifact_list_needed,
    cannot_activate,
    names_preview,
    needs_string,
    not_active,
    package_refused,
    unknown_tool,
)

__all__ = [
    "ACTIVATE_SKILL",
    "ARGS_NOT_STRINGS",
    "CREATE_SKILL",
    "FIND_SKILLS",
    "FRONT_DOOR_INSTRUCTIONS",
    "INPUT_ARTIFACTS",
    "INPUT_FILES",
    "INPUT_FILES_MAX",
    "LIST_SKILLS",
    "OWN_TOOLS",
    "PUBLISH_SKILL",
    "RAW_ARGUMENTS",
    "READ_SKILL_RESOURCE",
    "REQUEST_SKILL",
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
