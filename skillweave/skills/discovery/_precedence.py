"""Precedence between sources: which found skill owns each name, and the result it makes
(:func:`resolve`, called by ``SkillScanner`` after each full walk).

A folder without a ``SKILL.md`` on the way from a root to a skill is a **namespace**:
``web/scraper`` is the skill ``scraper`` in the namespace ``web``. A skill keeps its own name
while no other namespace has a skill of that name, and is also known by its qualified name
``web.scraper`` (:attr:`Skill.qualified_name`); when several namespaces have one, each is kept and
known by its qualified name only (``web.parser``, ``pdf.parser``; ``parser`` for one at a root).
A child skill is in its tree's namespace.

Names are owned (DESIGN §8) and compared by :func:`~skillweave.skills.names.name_key`
(NFKC-normalized, case-folded), so 'PDF' and 'pdf' are one name. Roots are given lowest
precedence first: a directory root's skill replaces an earlier directory root's skill of the
same name in the same namespace, with a warning; two skills of one name in one namespace of a
single root keep the first in walk (sorted) order, with a warning. A root holding uploaded
skills (it carries :data:`~skillweave.skills.names.UPLOADED_ROOT_MARKER`; each top folder is
one upload) has no precedence at all: its skills, children included, never replace or sit
beside a directory skill of the same name (in any namespace), and an upload's child never
replaces another upload's skill (the top of an upload owns its name). Each winner's owner is
in :attr:`ScanResult.owners`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from skillweave.skills.discovery._found import FoundSkill, ScanResult
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.model import Skill
from skillweave.skills.names import SkillOwner, name_key
from skillweave.skills.spec import Diagnostic

__all__ = ["resolve"]


def resolve(
    found: list[FoundSkill], roots: list[Path], uploaded: frozenset[int], out: list[Diagnostic]
) -> ScanResult:
    """Give each name to one owner, name the winners, and link parents and children.

    Names (compared by ``name_key``) are owned per namespace: two skills of one name in one
    namespace are settled by :func:`_precedence`; in different namespaces both are kept. An
    uploaded skill never takes a name a directory skill has in any namespace."""
    winners: dict[tuple[str, str], FoundSkill] = {}  # by (namespace key, name key)
    namespaces: dict[str, str] = {}  # by path
    for item in found:
        if item.loaded is None or item.loaded.skill is None:
            continue
        namespace = namespaces[item.path] = _namespace(item, roots, uploaded)
        key = (name_key(namespace), name_key(item.loaded.skill.name))
        previous = winners.get(key)
        if previous is None:
            winners[key] = item
            continue
        if os.path.realpath(item.path) == os.path.realpath(previous.path):
            # The same folder reached through a symlink: one skill, kept under its real path.
            if os.path.realpath(item.path) == item.path:
                winners[key] = item
            continue
        replaces, message = _precedence(previous, item, roots, uploaded)
        out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
        if replaces:
            del winners[key]  # re-insert so that order follows the overriding root
            winners[key] = item

    # An upload may not take a directory skill's name from another namespace either.
    held = {key[1]: item for key, item in winners.items() if item.root_index not in uploaded}
    for key, item in list(winners.items()):
        owner = held.get(key[1])
        if item.root_index in uploaded and owner is not None:
            _, message = _precedence(owner, item, roots, uploaded)
            out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
            del winners[key]

    # A name held in several namespaces is known by its qualified names only.
    holders: dict[str, int] = {}
    for _, name in winners:
        holders[name] = holders.get(name, 0) + 1
    named: dict[str, FoundSkill] = {}
    taken: dict[str, FoundSkill] = {}  # by name key
    for (_, key), item in winners.items():
        bare, namespace = _name(item), namespaces[item.path]
        qualified = f"{namespace}.{bare}" if namespace else bare
        name = qualified if holders[key] > 1 else bare
        previous = taken.get(name_key(name))
        if previous is not None:
            there = os.path.join(previous.path, SKILL_FILE)
            message = f"skill {name!r} is also at {there}, which is kept; this one is ignored"
            out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
            continue
        taken[name_key(name)] = named[name] = item
    return _link(
        named,
        namespaces=namespaces,
        roots=roots,
        uploaded=uploaded,
        out=out,
        found=found,
    )


def _namespace(item: FoundSkill, roots: list[Path], uploaded: frozenset[int]) -> str:
    """The folders between the item's library root and its tree's top skill, joined with
    dots (leading dots of hidden folders dropped); empty at the root and for uploads."""
    if item.root_index in uploaded:
        return ""
    top, root = item.top.path, str(roots[item.root_index])
    if item.top.linked:  # a symlinked folder is in the namespace of where it really is
        top, root = os.path.realpath(top), os.path.realpath(root)
    relative = os.path.relpath(os.path.dirname(top), root)
    if relative == os.curdir:
        return ""
    return ".".join(part.lstrip(".") or part for part in relative.split(os.sep))


def _link(
    winners: dict[str, FoundSkill],
    *,
    namespaces: Mapping[str, str],
    roots: list[Path],
    uploaded: frozenset[int],
    out: list[Diagnostic],
    found: list[FoundSkill],
) -> ScanResult:
    """The scan's result: the winners (by name) with parents and children linked."""
    by_path = {item.path: name for name, item in winners.items()}
    parents: dict[str, str | None] = {}
    children: dict[str, list[str]] = {name: [] for name in winners}
    for name, item in winners.items():
        ancestor = item.parent
        while ancestor is not None and ancestor.path not in by_path:
            ancestor = ancestor.parent  # a refused or overridden parent: attach to the next one up
        parent_name = by_path[ancestor.path] if ancestor is not None else None
        parents[name] = parent_name
        if parent_name is not None:
            children[parent_name].append(name)

    skills: dict[str, Skill] = {}
    for name, item in winners.items():
        loaded = item.loaded.skill if item.loaded is not None else None
        if loaded is None:  # pragma: no cover - winners hold loaded skills only
            continue
        skills[name] = replace(
            loaded,
            name=name,
            version=item.version,
            parent=parents[name],
            children=tuple(sorted(children[name])),
            source=roots[item.root_index],
            namespace=namespaces[item.path],
            short_name=loaded.name if name != loaded.name else "",
        )
    owners = {name: _owner(item, roots, uploaded) for name, item in winners.items()}
    return ScanResult(skills=skills, diagnostics=tuple(out), skill_dirs=len(found), owners=owners)


def _name(item: FoundSkill) -> str:
    skill = item.loaded.skill if item.loaded is not None else None
    return skill.name if skill is not None else os.path.basename(item.path)


def _owner(item: FoundSkill, roots: list[Path], uploaded: frozenset[int]) -> SkillOwner:
    if item.root_index in uploaded:
        return SkillOwner("uploaded", os.path.basename(item.top.path))
    return SkillOwner("directory", str(roots[item.root_index]))


def _precedence(
    previous: FoundSkill, item: FoundSkill, roots: list[Path], uploaded: frozenset[int]
) -> tuple[bool, str]:
    """Whether `item` replaces `previous` (a skill of the same name key, found earlier), and
    the warning that says what happened."""
    name = _name(item)
    there = os.path.join(previous.path, SKILL_FILE)
    previous_upload = previous.root_index in uploaded
    item_upload = item.root_index in uploaded
    taken = f"skill {name!r}: the name is owned by {_owner(previous, roots, uploaded)} ({there})"
    if not previous_upload and not item_upload:
        if previous.root_index == item.root_index:
            return False, f"duplicate skill name {name!r}; {there} is kept, this one is ignored"
        return True, f"skill {name!r} overrides the one in {roots[previous.root_index]}"
    if not item_upload:  # a directory skill always wins over an upload
        owner = _owner(previous, roots, uploaded)
        return (
            True,
            f"directory skill {name!r} owns the name; the one {owner} holds ({there}) is ignored",
        )
    if not previous_upload:
        return False, f"{taken}; an uploaded skill may not shadow it, this one is ignored"
    if previous.top is item.top:
        return False, f"duplicate skill name {name!r}; {there} is kept, this one is ignored"
    if item.parent is None and previous.parent is not None:
        # The top of an upload owns its name; another upload's child may not take it.
        return True, f"uploaded skill {name!r} owns the name; the child at {there} is ignored"
    return False, f"{taken}; another upload's skill may not shadow it, this one is ignored"
