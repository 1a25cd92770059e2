"""The Agent Skills frontmatter rules, checked once for both strict and lenient use.

:func:`check_frontmatter` returns every violation of a parsed frontmatter as a
:class:`Diagnostic`. Each diagnostic says whether lenient loading refuses the skill
(``fatal``: no usable description) or loads it anyway with a warning (everything else), so
``skillweave skills validate --strict`` (every diagnostic is an error), plain ``validate`` (only
fatal ones are) and the runtime loader all read the same list. The limits are the spec's
(agentskills.io/specification); our extension keys live under ``metadata``.

Strict validation agrees with the spec's reference validator (skills-ref): it allows only
:data:`SPEC_KEYS` at the top level, so every extension, ``dependencies`` included, belongs
under ``metadata``; lenient loading still reads one at the top level, with a warning. One
extension value is structured: a skill's package dependencies (``metadata.dependencies:
{python: [...], node: {...}}``, or a plain list of Python requirements). The spec describes
``metadata`` values as strings, but the reference validator reads any value there, so such a
mapping or list passes it; here only its shape is checked (each requirement is read by
:mod:`skillweave.skills.dependencies`). A ``dependencies`` *string* names the skills this one
builds on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "COMPATIBILITY_MAX_LENGTH",
    "DESCRIPTION_MAX_LENGTH",
    "EXTENSION_KEYS",
    "NAME_MAX_LENGTH",
    "NAME_PATTERN",
    "PACKAGE_DEPENDENCY_KINDS",
    "SPEC_KEYS",
    "Diagnostic",
    "check_frontmatter",
    "declares_packages",
    "effective_name",
    "name_problems",
    "package_dependency_problems",
    "parse_bool",
]

NAME_MAX_LENGTH: Final = 64
DESCRIPTION_MAX_LENGTH: Final = 1024
COMPATIBILITY_MAX_LENGTH: Final = 500
NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A valid name, to be matched with ``fullmatch`` (``$`` would accept a trailing newline)."""

SPEC_KEYS: Final = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
EXTENSION_KEYS: Final = frozenset({"type", "auto_load", "enabled", "dependencies", "tools"})
"""skillweave's own keys; valid under ``metadata``, tolerated (with a warning that strict
validation makes an error) at the top level."""
PACKAGE_DEPENDENCY_KINDS: Final = ("node", "python")

_INVALID_NAME_CHARS: Final = re.compile(r"[^a-z0-9-]")
# What makes a name unusable however lenient the loading: it could not be one component of a
# path or a store key at all (a separator, a control character, '.' or '..', over 255 chars).
_UNUSABLE_NAME_CHARS: Final = re.compile(r"[/\\\x00-\x1f\x7f]")
_NAME_MAX_CHARS: Final = 255
_SHOWN_NAME_CHARS: Final = 40


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a skill or a skill library.

    Attributes:
        path: the file (or folder) concerned.
        field: the frontmatter field (``name``, ``metadata.type``…) or a category such as
            ``frontmatter`` or ``library``.
        message: what is wrong, in words a skill author can act on.
        fatal: True when lenient loading refuses the skill because of it.
    """

    path: str
    field: str
    message: str
    fatal: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"

    @property
    def severity(self) -> Literal["error", "warning"]:
        """``error`` when lenient loading refuses the skill, else ``warning``."""
        return "error" if self.fatal else "warning"


def name_problems(name: str) -> list[str]:
    """Every way `name` breaks the spec's name rules; empty when it is valid.

    The rules: 1–64 characters, only lowercase ``a-z``, digits and hyphens, no leading or
    trailing hyphen, no two hyphens in a row.
    """
    if not name:
        return ["must not be empty"]
    problems: list[str] = []
    if len(name) > NAME_MAX_LENGTH:
        problems.append(f"is {len(name)} characters; the limit is {NAME_MAX_LENGTH}")
    bad = sorted(set(_INVALID_NAME_CHARS.findall(name)))
    if bad:
        shown = "".join(bad[:10])
        problems.append(f"may contain only a-z, 0-9 and '-' (found {shown!r})")
    if name.startswith("-"):
        problems.append("must not start with a hyphen")
    if name.endswith("-"):
        problems.append("must not end with a hyphen")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    return problems


def effective_name(name: Any, dir_name: str) -> str:
    """The name lenient loading gives a skill: the frontmatter's ``name`` when it is a
    non-empty string (stripped), else the folder's (YAML turns ``name: off`` into a bool)."""
    return name.strip() if isinstance(name, str) and name.strip() else dir_name


def _shown(name: str) -> str:
    """`name` quoted for a message, cut short when long."""
    if len(name) <= _SHOWN_NAME_CHARS:
        return repr(name)
    return f"{name[:_SHOWN_NAME_CHARS]!r}… ({len(name)} characters)"


def _unusable_name(name: Any, dir_name: str | None) -> str | None:
    """Why the name the skill would load under cannot name anything, or None when it can."""
    if dir_name is None and not isinstance(name, str):
        return None
    effective = effective_name(name, dir_name or "")
    if effective in {"", ".", ".."}:
        problem = "it names no folder"
    elif len(effective) > _NAME_MAX_CHARS:
        problem = f"over {_NAME_MAX_CHARS} characters"
    elif found := _UNUSABLE_NAME_CHARS.search(effective):
        problem = f"it contains {found.group()!r}"
    else:
        return None
    return f"{_shown(effective)} cannot be used as a skill name ({problem}); it is not loaded"


def _length_problem(value: str, limit: int) -> str | None:
    if len(value) > limit:
        return f"is {len(value)} characters; the limit is {limit}"
    return None


def check_frontmatter(
    data: Mapping[Any, Any], *, path: str, dir_name: str | None, colon_repaired: bool = False
) -> list[Diagnostic]:
    """Check a parsed frontmatter against the spec and our extensions.

    Args:
        data: the YAML mapping.
        path: the SKILL.md path, used in each diagnostic.
        dir_name: the skill folder's name, which ``name`` must equal (None skips the check).
        colon_repaired: the YAML needed the unquoted-colon repair to parse.

    Returns:
        Every problem, in field order; empty when the frontmatter is strictly valid.
    """
    found: list[Diagnostic] = []
    if colon_repaired:
        found.append(
            Diagnostic(
                path, "frontmatter", "invalid YAML: a value contains ': ' unquoted; quote the value"
            )
        )
    found += (Diagnostic(path, "name", m) for m in _name_messages(data.get("name"), dir_name))
    if unusable := _unusable_name(data.get("name"), dir_name):
        found.append(Diagnostic(path, "name", unusable, fatal=True))
    found += _check_description(data.get("description"), path)
    found += (Diagnostic(path, field, m) for field, m in _optional_field_messages(data))
    if isinstance(data.get("metadata"), Mapping):
        found += _check_extensions(data["metadata"], path=path, prefix="metadata.")
    for key in data:
        if key in SPEC_KEYS:
            continue
        if key in EXTENSION_KEYS:
            message = "is a skillweave extension; the spec puts it under 'metadata'"
            found.append(Diagnostic(path, str(key), message))
            found += _check_extensions({key: data[key]}, path=path, prefix="")
        else:
            allowed = ", ".join(sorted(SPEC_KEYS))
            found.append(Diagnostic(path, str(key), f"unknown key (the spec allows: {allowed})"))
    return found


def declares_packages(value: Any) -> bool:
    """True when a ``dependencies`` value declares packages (a mapping or a list) rather than
    naming skills (a string)."""
    return isinstance(value, Mapping | list)


def package_dependency_problems(value: Any) -> list[str]:
    """Every shape problem of a package ``dependencies`` value; empty when well formed.

    Well formed is a list of requirement strings (Python), or a mapping with ``python`` (a list
    of requirement strings) and/or ``node`` (a mapping of package name to version range). Only
    the shape is checked: whether each string is a valid requirement is for discovery to say.
    """
    if isinstance(value, list):
        return _string_list_problems(value, "")
    if not isinstance(value, Mapping):
        return [f"must be a mapping or a list, not {type(value).__name__}"]
    problems: list[str] = []
    for key in value:
        if key not in PACKAGE_DEPENDENCY_KINDS:
            allowed = ", ".join(PACKAGE_DEPENDENCY_KINDS)
            problems.append(f"unknown key {key!r} (allowed: {allowed})")
    python = value.get("python")
    if python is not None:
        if isinstance(python, list):
            problems += _string_list_problems(python, "python")
        else:
            problems.append(f"python: must be a list of requirements, not {type(python).__name__}")
    node = value.get("node")
    if node is not None:
        if not isinstance(node, Mapping):
            kind = type(node).__name__
            problems.append(f"node: must map package names to version ranges, not {kind}")
        else:
            for name, version_range in node.items():
                if not isinstance(name, str) or not isinstance(version_range, str):
                    problems.append(
                        f"node: {name!r}: {version_range!r} must map a package name (string) "
                        "to a version range (string)"
                    )
    return problems


def _string_list_problems(items: list[Any], label: str) -> list[str]:
    prefix = f"{label}[" if label else "["
    return [
        f"{prefix}{index}]: must be a requirement string, not {type(item).__name__}"
        for index, item in enumerate(items)
        if not isinstance(item, str)
    ]


def _name_messages(name: Any, dir_name: str | None) -> list[str]:
    if name is None:
        return ["is required"]
    if not isinstance(name, str):
        return [f"must be a string, not {type(name).__name__}"]
    messages = name_problems(name)
    if dir_name is not None and name and name != dir_name:
        messages.append(f"{_shown(name)} does not match the directory name {dir_name!r}")
    return messages


def _check_description(description: Any, path: str) -> list[Diagnostic]:
    if description is None or (isinstance(description, str) and not description.strip()):
        return [Diagnostic(path, "description", "is required and must not be empty", True)]
    if not isinstance(description, str):
        # A YAML number or date still reads as a description; a list or mapping does not.
        scalar = isinstance(description, int | float | bool) or hasattr(description, "isoformat")
        message = f"must be a string, not {type(description).__name__}"
        return [Diagnostic(path, "description", message, not scalar)]
    if problem := _length_problem(description, DESCRIPTION_MAX_LENGTH):
        return [Diagnostic(path, "description", problem)]
    return []


def _optional_field_messages(data: Mapping[Any, Any]) -> list[tuple[str, str]]:
    messages: list[tuple[str, str]] = []
    if "compatibility" in data:
        compatibility = data["compatibility"]
        if not isinstance(compatibility, str):
            messages.append(
                ("compatibility", f"must be a string, not {type(compatibility).__name__}")
            )
        elif not compatibility.strip():
            messages.append(("compatibility", "must not be empty when present"))
        elif problem := _length_problem(compatibility, COMPATIBILITY_MAX_LENGTH):
            messages.append(("compatibility", problem))
    if "license" in data and not isinstance(data["license"], str):
        messages.append(("license", f"must be a string, not {type(data['license']).__name__}"))
    tools = data.get("allowed-tools")
    # A space-separated string in the spec; a list of names in DeerFlow's skills (the
    # reference validator does not judge its type).
    if "allowed-tools" in data and not (
        isinstance(tools, str)
        or (isinstance(tools, list) and all(isinstance(item, str) for item in tools))
    ):
        kind = type(tools).__name__
        messages.append(("allowed-tools", f"must be a string or a list of strings, not {kind}"))
    if "metadata" in data:
        metadata = data["metadata"]
        if not isinstance(metadata, Mapping):
            kind = type(metadata).__name__
            messages.append(("metadata", f"must be a mapping of string to string, not {kind}"))
        else:
            for key, value in metadata.items():
                if not isinstance(key, str):
                    messages.append(("metadata", f"key {key!r} must be a string"))
                elif key == "dependencies" and declares_packages(value):
                    continue  # package dependencies: their shape is checked with the extensions
                elif key == "network" and _network_shaped(value):
                    continue  # destinations (a list, or destination -> reason): the egress
                    # policy reads them (skillweave.sandbox.egress_policy)
                elif not isinstance(value, str):
                    messages.append(
                        (f"metadata.{key}", f"must be a string, not {type(value).__name__}")
                    )
    return messages


_TYPES: Final = ("contextual", "executable", "composite")
_BOOLEAN_WORDS: Final = {
    "true": True,
    "yes": True,
    "1": True,
    "false": False,
    "no": False,
    "0": False,
}


def _check_extensions(values: Mapping[Any, Any], *, path: str, prefix: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    dependencies = values.get("dependencies")
    if declares_packages(dependencies):
        problems = package_dependency_problems(dependencies)
        found += (Diagnostic(path, f"{prefix}dependencies", m) for m in problems)
    kind = values.get("type")
    if kind is not None and str(kind) not in _TYPES:
        found.append(Diagnostic(path, f"{prefix}type", f"must be one of {', '.join(_TYPES)}"))
    for key in ("auto_load", "enabled"):
        value = values.get(key)
        if value is not None and parse_bool(value) is None:
            found.append(Diagnostic(path, f"{prefix}{key}", "must be 'true' or 'false'"))
    return found


def _network_shaped(value: Any) -> bool:
    """A ``metadata.network`` of a shape the egress policy reads: a list of strings, or a
    mapping of strings to strings (the reasons)."""
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and isinstance(v, str | None) for k, v in value.items())
    return False


def parse_bool(value: Any) -> bool | None:
    """``True``/``False`` for YAML booleans and the strings true/false/yes/no/1/0, else None."""
    if isinstance(value, bool):
        return value
    return _BOOLEAN_WORDS.get(str(value).strip().lower())
