"""Who owns a skill name among uploads and directory skills (DESIGN §8), for ``StoredSkills``.

A package may not bring a skill, at any depth of its tree, whose name (compared by
``names.name_key``: NFKC-normalized and case-folded) a directory skill or another uploaded
skill (its top or any child of its latest version) already has; nor may one source bring two
skills of one name. Both are a :class:`~skillweave.errors.SkillNameTakenError`.
:func:`directory_owners` is also called by the doors that upload (API, CLI, agent publishing)
to name the directory skills' owners.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from skillweave.errors import SkillNameTakenError
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.model import Skill
from skillweave.skills.names import name_key
from skillweave.skills.stored._model import StoredSkill

__all__ = ["check_distinct", "check_owned", "directory_owners", "package_skills"]


def directory_owners(skills: Iterable[Skill]) -> dict[str, str]:
    """The names directory skills own (a namespaced skill known by its qualified name holds
    its own name too), each mapped to its owner in words: the `reserved` of an upload."""
    owned: dict[str, str] = {}
    for skill in skills:
        for name in (skill.name, skill.short_name):
            if name:
                owned.setdefault(name, f"the directory skill {skill.name!r} at {skill.path}")
    return owned


def package_skills(top: str, files: Iterable[str]) -> list[tuple[str, str]]:
    """``(where, name)`` of every skill of a package named `top` with these `files` (relative to
    its folder): the top, then each folder holding a SKILL.md, as ``top/…/child``. Strict
    validation made each child's name equal its folder's, so the paths say the names."""
    found = [(top, top)]
    for path in sorted(files):
        folder, _, file = path.rpartition("/")
        if folder and file == SKILL_FILE:
            found.append((f"{top}/{folder}", folder.rpartition("/")[2]))
    return found


def check_distinct(packages: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> None:
    """Refuse a name that two skills of one source bring: `packages` is each package's top
    name with its skills ``(where, name)``."""
    seen: dict[str, str] = {}
    for top, skills in packages:
        for where, name in skills:
            other = seen.setdefault(name_key(name), top)
            if other != top:
                raise SkillNameTakenError(
                    name, path=where, owner=f"the skill {other!r} of the same source"
                )


def check_owned(
    skills: Iterable[tuple[str, str]],
    *,
    own: str,
    reserved: Mapping[str, str] | Collection[str],
    records: Sequence[StoredSkill],
) -> None:
    """Refuse `skills` (``(where, name)``) when one's name is owned by another source: a
    reserved one, or another uploaded skill of `records` (the upload `own`, whose new version
    this is, excepted)."""
    owners: dict[str, tuple[str, str]] = {}  # name key -> (the owner's spelling, owner)
    for taken in reserved:
        owner = reserved[taken] if isinstance(reserved, Mapping) else "a directory skill"
        owners.setdefault(name_key(taken), (taken, owner))
    for record in records:
        if record.name == own:
            continue
        for where, held in package_skills(record.name, record.latest_version.files):
            owner = f"the uploaded skill {record.name!r}"
            if where != record.name:
                owner += f" (its child skill at {where!r})"
            owners.setdefault(name_key(held), (held, owner))
    for where, name in skills:
        found = owners.get(name_key(name))
        if found is not None:
            raise SkillNameTakenError(name, path=where, owner=found[1], owned_as=found[0])
