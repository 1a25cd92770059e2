"""Skills an agent writes itself: the ``create_skill`` and ``publish_skill`` tools.

Offered only to agents whose spec turns ``authoring`` on. ``create_skill`` takes a name, a
description, the instructions (the SKILL.md body) and the skill's files, and examples to test
its scripts with; the runtime validates the skill strictly, scans it and runs each example in
a sandbox, and keeps it as a draft of the run (``skillweave.skills.drafts``), which the run may
activate at once and no other run sees. ``publish_skill`` asks a person (the run's approval
channel: the Temporal signal, the API, ``skillweave runs approve``) with the draft's scan
report first; approved, the draft becomes an uploaded skill that later runs find.

Pure, like :mod:`skillweave.agent.disclosure` (it runs inside the Temporal workflow): the tool
specs, reading a call's arguments into the runtime's input, and the texts the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from skillweave.agent.disclosure import CREATE_SKILL, PUBLISH_SKILL
from skillweave.agent.effect_models import DraftFile, SkillExample
from skillweave.llm.messages import ToolSpec

__all__ = [
    "CREATE_SKILL",
    "PUBLISH_SKILL",
    "AuthoringError",
    "authoring_specs",
    "draft_parts",
    "not_a_draft",
    "too_many_drafts",
]

_FILE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Where in the skill folder, e.g. scripts/parse.py or "
            "references/format.md.",
        },
        "content": {"type": "string", "description": "The file's text."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}
_EXAMPLE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "script": {"type": "string", "description": "One of the files, e.g. scripts/parse.py."},
        "args": {"type": "array", "items": {"type": "string"}},
        "expect": {"type": "string", "description": "Text its output must contain."},
    },
    "required": ["script"],
    "additionalProperties": False,
}


class AuthoringError(Exception):
    """A ``create_skill`` call whose arguments cannot make a draft (the text says why)."""


def authoring_specs(drafts: Mapping[str, str]) -> tuple[ToolSpec, ...]:
    """``create_skill``, and ``publish_skill`` once the run has drafts (its enum)."""
    create = ToolSpec(
        name=CREATE_SKILL,
        description=(
            "Write a new skill when none fits the task: a name (lowercase-hyphenated), a "
            "description saying what it does and when to use it, its instructions "
            "(Markdown), its files (scripts/…, references/…) and examples that test each "
            "script. It is checked, scanned and tested in a sandbox, then kept as a draft "
            "that this run can activate at once; publish_skill offers it to later runs."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                "description": {"type": "string"},
                "instructions": {"type": "string"},
                "files": {"type": "array", "items": _FILE},
                "examples": {"type": "array", "items": _EXAMPLE},
            },
            "required": ["name", "description", "instructions"],
            "additionalProperties": False,
        },
    )
    if not drafts:
        return (create,)
    publish = ToolSpec(
        name=PUBLISH_SKILL,
        description=(
            "Ask a person to publish a skill this run wrote, so that later runs can find "
            "and use it. Waits for their decision."
        ),
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": sorted(drafts)}},
            "required": ["name"],
            "additionalProperties": False,
        },
    )
    return (create, publish)


def draft_parts(
    arguments: Mapping[str, Any],
) -> tuple[str, str, str, tuple[DraftFile, ...], tuple[SkillExample, ...]]:
    """A ``create_skill`` call's name, description, instructions, files and examples.

    Raises:
        AuthoringError: a part is missing or malformed (the text names it).
    """
    fields = {}
    for key in ("name", "description", "instructions"):
        value = arguments.get(key)
        if not isinstance(value, str) or not value.strip():
            raise AuthoringError(f"create_skill needs '{key}' as non-empty text.")
        fields[key] = value
    try:
        files = tuple(DraftFile.model_validate(f) for f in _list(arguments, "files"))
        examples = tuple(SkillExample.model_validate(e) for e in _list(arguments, "examples"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise AuthoringError(f"create_skill: {where}: {first['msg']}.") from None
    return fields["name"], fields["description"], fields["instructions"], files, examples


def _list(arguments: Mapping[str, Any], key: str) -> list[Any]:
    value = arguments.get(key, [])
    if not isinstance(value, list):
        raise AuthoringError(f"create_skill: '{key}' must be a list.")
    return value


def too_many_drafts(limit: int) -> str:
    return (
        f"This run has written {limit} skills, as many as its agent allows; improve one of "
        "them (create_skill with its name) instead."
    )


def not_a_draft(name: str, drafts: Mapping[str, str]) -> str:
    mine = ", ".join(sorted(drafts)) or "none yet"
    return f"{name!r} is not a skill this run wrote (its drafts: {mine})."
