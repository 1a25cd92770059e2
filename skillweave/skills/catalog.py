"""Tier 1 of progressive disclosure: the catalog of skills in the system prompt.

:func:`build_catalog` picks which skills the model sees, by catalog mode:

- ``all``: every root skill (children appear when their parent is activated);
- ``enabled``: the enabled roots;
- ``auto``: the ``top_k`` enabled skills most relevant to the task (any level of a tree),
  with a pointer to ``search_skills`` for the rest.

:func:`render_catalog` writes them as ``<available_skills>`` (name and description, XML-escaped;
a parent notes how many sub-skills it holds). An empty catalog renders as the empty string, so
a prompt with no skills carries no skills section at all. Called by the agent loop, the CLI
(``skillweave skills catalog``) and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from xml.sax.saxutils import escape

from skillweave.config import CatalogMode
from skillweave.skills.model import Skill
from skillweave.skills.registry import SkillRegistry

__all__ = ["CATALOG_PREAMBLE", "Catalog", "build_catalog", "render_catalog", "render_entries"]

CATALOG_PREAMBLE: Final = (
    "Skills give you instructions and scripts for specialised tasks. When a task matches a "
    "skill's description, call activate_skill with its name before you start."
)


@dataclass(frozen=True, slots=True)
class Catalog:
    """The tier-1 text and what it lists.

    Attributes:
        text: exactly what goes into the system prompt ('' when nothing is listed).
        names: the skills listed, in order.
        hidden: how many enabled skills are not listed (``auto`` mode).
    """

    text: str
    names: tuple[str, ...]
    hidden: int = 0


def render_entries(skills: Sequence[Skill]) -> str:
    """The ``<skill>`` elements for `skills`, one per skill."""
    parts: list[str] = []
    for skill in skills:
        parts.append(f"<skill>\n<name>{escape(skill.name)}</name>\n")
        parts.append(f"<description>{escape(skill.description)}</description>\n")
        if skill.children:
            parts.append(f"<sub_skills>{len(skill.children)}</sub_skills>\n")
        parts.append("</skill>\n")
    return "".join(parts)


def render_catalog(skills: Sequence[Skill], *, hidden: int = 0) -> str:
    """The tier-1 text for `skills`; '' when there are none and none hidden.

    Args:
        skills: the skills to list, in order.
        hidden: how many further skills ``search_skills`` can find.
    """
    if not skills and not hidden:
        return ""
    lines = [CATALOG_PREAMBLE]
    if skills:
        lines.append(f"<available_skills>\n{render_entries(skills)}</available_skills>")
    if hidden:
        lines.append(
            f"{hidden} more skill{'s are' if hidden != 1 else ' is'} not listed; call "
            "search_skills with a few keywords to find one."
        )
    return "\n".join(lines) + "\n"


def build_catalog(
    registry: SkillRegistry,
    *,
    mode: CatalogMode = "enabled",
    query: str | None = None,
    top_k: int = 8,
) -> Catalog:
    """Choose and render the catalog for `mode`.

    Args:
        registry: the skills.
        mode: ``all``, ``enabled`` or ``auto`` (see the module docstring).
        query: the task, for ``auto`` ranking; without one ``auto`` lists enabled roots.
        top_k: how many skills ``auto`` lists at most.
    """
    match mode:
        case "all":
            chosen = registry.roots()
            hidden = 0
        case "enabled":
            chosen = registry.roots(enabled_only=True)
            hidden = 0
        case "auto":
            hits = registry.search(query, top_k=top_k) if query and query.strip() else []
            chosen = [registry.get(hit.name) for hit in hits]
            if not chosen:
                chosen = registry.roots(enabled_only=True)[:top_k]
            enabled = sum(1 for skill in registry if registry.is_enabled(skill.name))
            hidden = enabled - len(chosen)
    return Catalog(
        text=render_catalog(chosen, hidden=hidden),
        names=tuple(s.name for s in chosen),
        hidden=hidden,
    )
