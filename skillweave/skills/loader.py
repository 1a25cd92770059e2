"""Lenient loading of one SKILL.md, as the runtime does it.

:func:`load_skill_file` turns a SKILL.md into a :class:`~skillweave.skills.model.Skill` the way
a forgiving client should, so that libraries written for other agent clients load unchanged:
a name that does not match its folder, over-long fields, unknown keys or a colon that needed
quoting produce warnings and the skill loads; a missing description or unparseable YAML make
the skill unusable, and the loader says so with a :class:`SkillFormatError` naming the file.
A skill whose name is not canonical loads, flagged: it is given no secrets, credentials or
network (``names.bound_name``), and its warnings say so.
Called by discovery (for every skill of a library) and by the validator.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from skillweave.errors import SkillFormatError
from skillweave.skills.frontmatter import Frontmatter, parse_frontmatter
from skillweave.skills.model import SKILL_TYPES, Skill, SkillType
from skillweave.skills.names import NOT_BOUND, bound_name
from skillweave.skills.spec import (
    EXTENSION_KEYS,
    Diagnostic,
    check_frontmatter,
    declares_packages,
    effective_name,
    parse_bool,
)

__all__ = ["LoadedSkill", "load_skill_file", "read_skill_text", "skill_from_frontmatter"]


class LoadedSkill:
    """A loaded skill plus every diagnostic (for strict validation to report)."""

    __slots__ = ("diagnostics", "skill")

    def __init__(self, skill: Skill | None, diagnostics: list[Diagnostic]) -> None:
        self.skill = skill
        self.diagnostics = diagnostics


def read_skill_text(path: Path, *, raw: bytes | None = None) -> str:
    """Read a SKILL.md as UTF-8 (BOM tolerated by the parser).

    Args:
        path: the file.
        raw: its bytes when the caller has read them already.

    Raises:
        SkillFormatError: unreadable or not UTF-8.
    """
    try:
        return (path.read_bytes() if raw is None else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFormatError(str(path), f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SkillFormatError(str(path), f"cannot be read: {exc.strerror}") from None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return " ".join(str(item) for item in value)
    return str(value)


def _words(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(item) for item in value)
    return tuple(str(value).replace(",", " ").split())


def _skill_names(value: Any) -> tuple[str, ...]:
    """`dependencies` as skill names: only a string names skills (``csv-profiler, pdf``); a
    mapping or a list declares packages (see ``skills.dependencies``), not skills."""
    return _words(value) if isinstance(value, str) else ()


def skill_from_frontmatter(front: Frontmatter, *, skill_dir: Path, path: str) -> LoadedSkill:
    """Build a skill from a parsed frontmatter, tolerating what lenient loading tolerates."""
    data = front.data
    diagnostics = check_frontmatter(
        data, path=path, dir_name=skill_dir.name, colon_repaired=front.colon_repaired
    )
    if any(d.fatal for d in diagnostics):
        return LoadedSkill(None, diagnostics)

    # YAML 1.1 turns `name: off` or `name: 2024` into a bool or a number; the folder name is
    # then a better guess than str(False).
    name = effective_name(data.get("name"), skill_dir.name)
    if bound_name(name) is None:
        diagnostics.append(Diagnostic(path, "name", f"{name!r}: {NOT_BOUND}"))
    raw_metadata = data.get("metadata")
    if not isinstance(raw_metadata, Mapping):
        raw_metadata = {}
    # Package dependencies are structured; the environment builder reads them from the file.
    metadata = {
        str(k): str(v)
        for k, v in raw_metadata.items()
        if v is not None and not (k == "dependencies" and declares_packages(v))
    }
    # Extensions: metadata is the spec-sanctioned place; a top-level key is tolerated.
    extensions: dict[str, Any] = {k: data[k] for k in EXTENSION_KEYS if k in data}
    extensions.update({k: v for k, v in metadata.items() if k in EXTENSION_KEYS})

    kind = str(extensions.get("type", "contextual")).strip().lower()
    skill_type: SkillType = kind if kind in SKILL_TYPES else "contextual"  # type: ignore[assignment]
    enabled = parse_bool(extensions.get("enabled", True))
    auto_load = bool(parse_bool(extensions.get("auto_load", False)))
    if auto_load and enabled is False:
        # A skill to activate at every run's start is one the author wants offered.
        diagnostics.append(
            Diagnostic(
                path, "auto_load", "auto_load: true enables the skill; enabled: false is ignored"
            )
        )
        enabled = True

    skill = Skill(
        name=name,
        description=" ".join(str(data["description"]).split()),
        path=skill_dir,
        body=front.body,
        type=skill_type,
        license=_text(data.get("license")),
        compatibility=_text(data.get("compatibility")),
        allowed_tools=_text(data.get("allowed-tools")),
        metadata=MappingProxyType(metadata),
        enabled=True if enabled is None else enabled,
        auto_load=auto_load,
        dependencies=_skill_names(extensions.get("dependencies")),
        tools=_words(extensions.get("tools")),
        warnings=tuple(diagnostics),
    )
    return LoadedSkill(skill, diagnostics)


def load_skill_file(skill_file: Path, *, raw: bytes | None = None) -> LoadedSkill:
    """Load one SKILL.md leniently (`raw`: its bytes, when already read).

    Returns:
        The skill (None when lenient loading refuses it) and all diagnostics; a file that
        cannot be parsed at all yields a single fatal ``frontmatter`` diagnostic.
    """
    path = str(skill_file)
    try:
        front = parse_frontmatter(read_skill_text(skill_file, raw=raw), path=path)
    except SkillFormatError as exc:
        return LoadedSkill(None, [Diagnostic(path, "frontmatter", exc.reason, fatal=True)])
    return skill_from_frontmatter(front, skill_dir=skill_file.parent, path=path)
