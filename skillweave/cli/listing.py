"""How ``skillweave skills`` shows the library: the table and JSON of ``skills list`` (every
skill with its source and state), the line ``skills show`` says about one, and a store skill
that is not served (held for approval or disabled: its SKILL.md read from the store).

Called by :mod:`skillweave.cli.skills`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Final

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import dump, err, out
from skillweave.cli.exits import errors
from skillweave.config import get_settings
from skillweave.skills import (
    HIDDEN_SKILLS_FIELD,
    SKILL_FILE,
    LibraryEntry,
    Skill,
    SkillLibrary,
    SkillRegistry,
    SkillState,
    package_limits,
)
from skillweave.skills.stored import StoredSkills
from skillweave.terminal import counted, terminal_safe

__all__ = ["print_library", "print_not_served", "say_entry", "skill_json"]

_NAME_WIDTH: Final = 40
"""The widest a name column is kept whole; longer names fold onto a second line."""
_DESCRIPTION_WIDTH: Final = 20
_VERSION_SHOWN: Final = 8

_STATE_SHOWN: Final[dict[SkillState, str]] = {
    "enabled": "enabled",
    "held": "held for approval",
    "disabled": "disabled",
}
_STATE_STYLE: Final[dict[SkillState, str]] = {
    "enabled": "green",
    "held": "yellow",
    "disabled": "dim",
}


def skill_json(skill: Skill) -> dict[str, Any]:
    """A skill's fields as the JSON of ``skills list`` shows them (``root``: its library
    root)."""
    return {
        "name": skill.name,
        "namespace": skill.namespace,
        "qualified_name": skill.qualified_name,
        "auto_load": skill.auto_load,
        "description": skill.description,
        "path": str(skill.path),
        "version": skill.version,
        "type": skill.type,
        "parent": skill.parent,
        "children": list(skill.children),
        "enabled": skill.enabled,
        "root": str(skill.source) if skill.source else None,
    }


def _entry_json(entry: LibraryEntry) -> dict[str, Any]:
    """One skill of ``skills list --json``: the skill's fields (a store skill that is not
    served: the record's), its source and its state."""
    if entry.skill is not None:
        shown = skill_json(entry.skill)
    else:
        shown = {
            "name": entry.name,
            "description": entry.description,
            "version": entry.version,
            "enabled": False,
        }
    return {**shown, "source": entry.source, "state": entry.state}


def print_library(library: SkillLibrary, registry: SkillRegistry, *, as_json: bool) -> None:
    """``skills list``: every skill of `library` as a tree, with its source and state (or
    JSON, one object per skill); on stderr what to do when there is none."""
    entries = library.entries()
    if as_json:
        dump([_entry_json(entry) for entry in entries])
        return
    if not entries:
        if any(d.field == HIDDEN_SKILLS_FIELD for d in registry.diagnostics):
            err.print(
                "No skills found outside hidden folders (see above). Set "
                "SKILLS__INCLUDE_HIDDEN=true to include them, or pass each folder with --dir.",
                soft_wrap=True,
            )
        else:
            err.print(
                "No skills found. Point --dir at a skill library, set SKILLS__DIRS, or "
                "`skillweave skills install` one."
            )
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    namespaced = any(entry.skill is not None and entry.skill.namespace for entry in entries)
    columns = ("skill", "namespace") if namespaced else ("skill",)
    # Names are never cut (a user types them next); the description gives way first.
    widest = {
        "skill": max(
            cell_len(terminal_safe(e.name)) + _indent(_depth_of(registry, e)) for e in entries
        ),
        "namespace": max(
            cell_len(terminal_safe(e.skill.namespace)) if e.skill else 0 for e in entries
        ),
    }
    widest["source"] = max(len("source"), *(len(e.source) for e in entries))
    widest["state"] = max(len("state"), *(len(e.state) for e in entries))
    widest["version"] = _VERSION_SHOWN
    for column in (*columns, "source", "state", "version"):
        table.add_column(
            column,
            overflow="fold" if column in columns else "ellipsis",
            no_wrap=column not in columns,
            min_width=min(widest[column], _NAME_WIDTH) if column in columns else widest[column],
        )
    # One line per skill: the description gives way, cut to the terminal (whole in --json and
    # `skills show`); a name is folded, never cut.
    # (Its width is set: rich would rather fold the names away than cut a no_wrap column.)
    used = sum(min(widest[c], _NAME_WIDTH) + 2 for c in (*columns, "source", "state", "version"))
    table.add_column(
        "description",
        overflow="ellipsis",
        no_wrap=True,
        max_width=max(_DESCRIPTION_WIDTH, out.width - used),
    )
    for entry in entries:
        skill = entry.skill
        depth = _depth_of(registry, entry)
        name = Text(" " * (_indent(depth) - 2) + "└ " if depth else "")
        name.append(terminal_safe(entry.name))
        if entry.state != "enabled":
            name.stylize("dim")
        where = [Text(terminal_safe(skill.namespace if skill else ""))] if namespaced else []
        table.add_row(
            name,
            *where,
            Text(entry.source),
            Text(entry.state, style=_STATE_STYLE[entry.state]),
            Text(terminal_safe(entry.version[:_VERSION_SHOWN])),
            Text(terminal_safe(entry.description)),
        )
    out.print(table)
    roots = sum(1 for entry in entries if entry.skill is None or entry.skill.parent is None)
    out.print(Text(f"{counted(len(entries), 'skill')} in {counted(roots, 'root')}", style="dim"))
    if any(entry.state == "held" for entry in entries):
        out.print(
            Text(
                "held: stored off until approved (its scan asked for a review): "
                "`skillweave skills show NAME`, then `skillweave skills approve NAME`",
                style="yellow",
            ),
            soft_wrap=True,
        )


def _depth_of(registry: SkillRegistry, entry: LibraryEntry) -> int:
    """How deep in its tree the entry's skill is (0: a root, or not served)."""
    depth, parent = 0, entry.skill.parent if entry.skill is not None else None
    while parent is not None:
        depth, parent = depth + 1, registry.get(parent).parent
    return depth


def say_entry(entry: LibraryEntry) -> None:
    """One line on stderr: the skill's source, state and version."""
    about = (
        f"{entry.name}: source {entry.source} · state {_STATE_SHOWN[entry.state]} · "
        f"version {entry.version[:12]}"
    )
    err.print(Text(terminal_safe(about), style="dim"), soft_wrap=True)


def print_not_served(entry: LibraryEntry) -> None:
    """A store skill that is not served: its SKILL.md as stored (stdout), and how to serve it
    (stderr)."""
    from skillweave.cli.compose import open_store  # the engines' stack, only for this

    record = entry.record
    if record is None:
        raise ValueError(f"{entry.name} is not a store skill")
    settings = get_settings()

    async def read() -> bytes:
        async with open_store(settings) as store:
            stored = StoredSkills(store, limits=package_limits(settings.skills))
            return await stored.read_file(record.name, record.latest, SKILL_FILE)

    with errors():
        text = asyncio.run(read()).decode("utf-8", errors="replace")
    sys.stdout.write(terminal_safe(text))
    how = (
        f"`skillweave skills approve {record.name}` after reviewing it"
        if entry.state == "held"
        else f"enable it (PATCH /v1/skills/{record.name} with enabled true)"
    )
    err.print(Text(terminal_safe(f"not served to runs: {how}"), style="yellow"), soft_wrap=True)


def _indent(depth: int) -> int:
    """How many characters a skill's tree position takes before its name (``  └ ``)."""
    return 2 * depth + 2 if depth else 0
