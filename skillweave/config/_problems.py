"""What is wrong with the settings, said as the environment spells it: invalid settings as
one line (:func:`settings_problem`, for :func:`~skillweave.config.get_settings` and the
executor's ``EXECUTOR__*`` settings) and variables that name no setting
(:func:`unknown_settings`, said by every command and logged by every server)."""

from __future__ import annotations

import difflib
import json
import os
import types
from pathlib import Path
from typing import Annotated, Any, Final, Union, get_args, get_origin

from pydantic import BaseModel, SecretBytes, SecretStr, ValidationError
from pydantic_settings import BaseSettings, NoDecode, SettingsError

from skillweave.config._settings import Settings

__all__ = ["settings_problem", "unknown_settings"]

_SHOWN_VALUE_CHARS: Final = 60
_SHOWN_PROBLEMS: Final = 3
_JSON_FORMS: Final = {
    "list": 'a JSON list, e.g. \'["a", "b"]\'',
    "object": 'a JSON object, e.g. \'{"name": "value"}\'',
}


def settings_problem(
    exc: ValidationError | SettingsError, settings_cls: type[BaseSettings] = Settings
) -> str:
    """One line for invalid settings of `settings_cls`: each offending variable as the
    environment spells it (``SKILLS__CATALOG_TOP_K``), its value unless it is a secret, and
    what it accepts. Used for skillweave's settings and the executor's ``EXECUTOR__*`` ones."""
    if isinstance(exc, SettingsError):
        return _undecodable(exc, settings_cls)
    prefix = str(settings_cls.model_config.get("env_prefix") or "")
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    problems = []
    for error in exc.errors():
        names = [part for part in error["loc"] if isinstance(part, str)]
        items = [str(part) for part in error["loc"] if isinstance(part, int)]
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            closest = _closest_setting(settings_cls, [name.lower() for name in names])
            message = (
                f"not a setting; did you mean {prefix}{delimiter.join(closest).upper()}?"
                if closest
                else "not a setting: check its spelling (README, Configuration)"
            )
        section = _annotation_at(settings_cls, [name.lower() for name in names])
        if isinstance(section, type) and issubclass(section, BaseModel):
            problems.append(message)  # a rule across a section's fields names them itself
            continue
        variable = prefix + delimiter.join(names).upper()
        shown = variable + "".join(f"[{item}]" for item in items)  # an item of a list
        if not _is_secret(settings_cls, names) and isinstance(error["input"], str | int | float):
            value = str(error["input"])
            if len(value) > _SHOWN_VALUE_CHARS:
                value = value[:_SHOWN_VALUE_CHARS] + "…"
            shown += f"={value!r}"
        problems.append(f"{shown}: {message}")
    more = len(problems) - _SHOWN_PROBLEMS
    line = "; ".join(problems[:_SHOWN_PROBLEMS]) + (f" (and {more} more)" if more > 0 else "")
    return f"invalid setting: {line}"


def unknown_settings(settings_cls: type[BaseSettings] = Settings) -> list[str]:
    """One line for each variable (environment, then ``.env``) that names a section of
    `settings_cls` (or, for a class with an ``env_prefix``, carries it) but no setting in it,
    with the closest setting: ``SKILLS__DIRZ is not a setting; did you mean SKILLS__DIRS?``.

    pydantic-settings ignores such a variable, so a misspelt setting would go unnoticed: every
    command says so on stderr, and every server logs it at start. Dynamic keys count as
    settings (``MODEL__PROFILES__<NAME>__…``, ``SANDBOX__SKILL_SECRETS__<SKILL>__…``); in a
    section that forbids unknown keys (``SKILLS__SCAN``, ``SKILLS__TRUST``, ``AUDIT``,
    ``SANDBOX__EGRESS``) such a variable is an invalid setting instead (:func:`get_settings`,
    :func:`settings_problem`, with the same suggestion), so it is not listed here.
    """
    prefix = str(settings_cls.model_config.get("env_prefix") or "").lower()
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    sections = {
        name
        for name, field in settings_cls.model_fields.items()
        if isinstance(_unwrap(field.annotation), type)
        and issubclass(_unwrap(field.annotation), BaseModel)
    }
    lines: list[str] = []
    for origin, variables in _setting_sources(settings_cls):
        for name in variables:
            lowered = name.lower()
            if not lowered.startswith(prefix):
                continue
            parts = lowered[len(prefix) :].split(delimiter)
            if not prefix and (len(parts) < 2 or parts[0] not in sections):
                continue  # not ours: only a section's variables are skillweave's
            if _first_unknown(settings_cls, parts) is None:
                continue
            closest = _closest_setting(settings_cls, parts)
            guess = (
                f"; did you mean {prefix.upper()}{delimiter.join(closest).upper()}?"
                if closest
                else ": check its spelling (README, Configuration)"
            )
            lines.append(f"{name}{origin} is not a setting{guess}")
    return lines


def _first_unknown(model: type[BaseModel], parts: list[str]) -> int | None:
    """The index of the first of a variable's name parts that names no setting, walking
    sections, their fields and mappings' keys; None when the name is a setting, or when the
    unknown part is in a section that forbids unknown keys (validation reports it)."""
    annotation: Any = model
    for index, part in enumerate(parts):
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            if part not in fields:
                return None if annotation.model_config.get("extra") == "forbid" else index
            annotation = fields[part].annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]  # any key: a profile's name, a skill's
        else:
            return index  # more parts after a plain value
    return None


def _closest_setting(model: type[BaseModel], parts: list[str]) -> list[str] | None:
    """The setting a misspelt variable most likely meant, as name parts: the first unknown
    part replaced by the closest name there (the parts after it kept when the result is a
    setting), or the value it runs past; None when nothing is close."""
    annotation: Any = model
    for index, part in enumerate(parts):
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            if part in fields:
                annotation = fields[part].annotation
                continue
            close = difflib.get_close_matches(part, list(fields), n=1, cutoff=0.6)
            if not close:
                return None
            guess = [*parts[:index], close[0]]
            whole = [*guess, *parts[index + 1 :]]
            return whole if _annotation_at(model, whole) is not None else guess
        if get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
            continue
        return parts[:index] or None
    return None


def _undecodable(exc: SettingsError, settings_cls: type[BaseSettings]) -> str:
    """pydantic-settings does not say which list or mapping setting's text is not JSON: find
    the variables (environment, then ``.env``) that hold such text."""
    prefix = str(settings_cls.model_config.get("env_prefix") or "")
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    found: list[str] = []
    for origin, variables in _setting_sources(settings_cls):
        for name, value in variables.items():
            upper = name.upper()
            if not upper.startswith(prefix.upper()) or value is None:
                continue
            parts = upper[len(prefix) :].lower().split(delimiter)
            form = _json_form(_annotation_at(settings_cls, parts, json_only=True))
            if form is None:
                continue
            try:
                json.loads(value)
            except ValueError:
                found.append(f"{upper}{origin}: expected {_JSON_FORMS[form]}")
    if not found:
        return f"invalid setting: a list or mapping value is not valid JSON ({exc})"
    return "invalid setting: " + "; ".join(found[:_SHOWN_PROBLEMS])


def _setting_sources(settings_cls: type[BaseSettings]) -> list[tuple[str, dict[str, str | None]]]:
    sources: list[tuple[str, dict[str, str | None]]] = [("", dict(os.environ))]
    env_file = settings_cls.model_config.get("env_file")
    if isinstance(env_file, str | Path) and Path(env_file).is_file():
        from dotenv import dotenv_values  # pydantic-settings' own .env reader

        sources.append((f" (in {env_file})", dict(dotenv_values(env_file))))
    return sources


def _unwrap(annotation: Any) -> Any:
    """`X | None` → X; ``Annotated[X, ...]`` → X."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _annotation_at(model: type[BaseModel], parts: list[str], *, json_only: bool = False) -> Any:
    """The type a variable's name parts lead to, through sections and mappings; None when the
    name is not a setting (or, `json_only`, is one whose text is never read as JSON)."""
    annotation: Any = model
    for part in parts:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            field = fields.get(part)
            if field is None or (json_only and NoDecode in field.metadata):
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    return _unwrap(annotation)


def _json_form(annotation: Any) -> str | None:
    """``"list"`` or ``"object"`` when the environment gives this type as JSON, else None."""
    origin = get_origin(annotation)
    if origin in (list, set, tuple, frozenset):
        return "list"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "object"
    return None


def _is_secret(model: type[BaseModel], parts: list[str]) -> bool:
    """Whether the setting at these name parts holds a secret (its value is never shown)."""
    annotation = _annotation_at(model, [part.lower() for part in parts])
    return annotation is None or _holds_secret(annotation)


def _holds_secret(annotation: Any) -> bool:
    if annotation in (SecretStr, SecretBytes):
        return True
    return any(_holds_secret(_unwrap(arg)) for arg in get_args(annotation))
