"""What a call's arguments must be before anything runs: readable JSON
(:func:`unreadable_arguments`) and valid against the tool's schema as offered
(:func:`arguments_refusal`). Used, through the package front, by the agent loop's dispatch and the
MCP front door.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import jsonschema
from referencing.exceptions import Unresolvable

from skillweave.agent.disclosure._names import OWN_TOOLS, RAW_ARGUMENTS

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
