"""Tool schemas of executable skills: what a script's ``--help-json`` must print.

An executable skill's scripts (listed in ``metadata.tools``, or a root ``execute.py`` and every
file under ``scripts/``) describe themselves when run with ``--help-json``: one JSON object, or
a list of them, each ``{"name", "description", "input_schema"}`` where ``input_schema`` is a
JSON Schema of type ``object`` (``parameters`` and ``inputSchema`` are accepted as aliases, as
OpenAI and MCP spell it). :func:`parse_tool_schemas` validates that output, including the schema
itself against the JSON Schema meta-schema (via ``jsonschema``). At activation the agent
registers each tool under its own name (``<skill>__<tool>`` when that is taken, see
``skillweave.agent.disclosure``) and calls the script with ``--run-json '<args>'`` in a sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import jsonschema
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillweave.errors import ToolSchemaError
from skillweave.skills.model import Skill

__all__ = [
    "ROOT_TOOL_SCRIPTS",
    "TOOL_NAME_PATTERN",
    "ToolSchema",
    "declared_tool_scripts",
    "parse_tool_schemas",
]

TOOL_NAME_PATTERN: Final = r"^[a-zA-Z0-9_-]{1,64}$"
TOOL_DESCRIPTION_MAX_LENGTH: Final = 1024
MAX_TOOLS_PER_SCRIPT: Final = 32
ROOT_TOOL_SCRIPTS: Final = ("execute.py", "execute.js", "execute.mjs", "execute.cjs", "execute.sh")
"""An executable skill's entry point at the top of its folder (the Lazy-Skills layout), a tool
script without being listed."""


class ToolSchema(BaseModel):
    """One tool an executable script offers."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(min_length=1, max_length=TOOL_DESCRIPTION_MAX_LENGTH)
    input_schema: dict[str, Any] = Field(
        validation_alias=AliasChoices("input_schema", "parameters", "inputSchema")
    )

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object":
            raise ValueError('must be a JSON Schema with "type": "object"')
        try:
            validator = jsonschema.validators.validator_for(schema)
            validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"is not a valid JSON Schema: {exc.message}") from None
        return schema


def parse_tool_schemas(output: str | bytes, *, script: str) -> tuple[ToolSchema, ...]:
    """Parse and validate what `script` printed for ``--help-json``.

    Raises:
        ToolSchemaError: not JSON, not an object or list of objects, or an invalid tool.
    """
    try:
        data = json.loads(output)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ToolSchemaError(f"{script}: --help-json did not print JSON ({exc})") from None
    items = data if isinstance(data, list) else [data]
    if not items or len(items) > MAX_TOOLS_PER_SCRIPT:
        limit = MAX_TOOLS_PER_SCRIPT
        raise ToolSchemaError(f"{script}: expected 1 to {limit} tools, got {len(items)}")
    tools: list[ToolSchema] = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise ToolSchemaError(f"{script}: tool {position} is not a JSON object")
        try:
            tools.append(ToolSchema.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "tool"
            raise ToolSchemaError(f"{script}: tool {position}: {field}: {first['msg']}") from None
    names = [tool.name for tool in tools]
    if len(set(names)) != len(names):
        raise ToolSchemaError(f"{script}: duplicate tool names in {names}")
    return tuple(tools)


def declared_tool_scripts(skill: Skill) -> tuple[str, ...]:
    """The package paths of an executable skill's tool scripts.

    ``metadata.tools`` when given; otherwise a root entry point (:data:`ROOT_TOOL_SCRIPTS`,
    the Lazy-Skills layout) and every file directly under ``scripts/`` (those starting with
    ``.`` or ``_`` are helpers). Contextual and composite skills have none.
    """
    if skill.type != "executable":
        return ()
    if skill.tools:
        return skill.tools
    found = [name for name in ROOT_TOOL_SCRIPTS if _plain_file(skill.path / name)]
    scripts = skill.path / "scripts"
    if scripts.is_dir():
        found += (
            f"scripts/{entry.name}"
            for entry in sorted(scripts.iterdir())
            if _plain_file(entry) and not entry.name.startswith((".", "_"))
        )
    return tuple(found)


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()
