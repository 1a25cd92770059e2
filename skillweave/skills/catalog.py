"""Tier 1 of progressive disclosure: the catalog of skills in the system prompt.

:func:`build_catalog` picks which skills the model sees, by catalog mode:

- ``all``: every root skill (children appear when their parent is activated);
- ``enabled``: the enabled roots;
- ``auto``: the ``top_k`` enabled skills most relevant to the task (any level of a tree),
  with a pointer to ``search_skills`` for the rest.

:func:`render_catalog` writes them as ``<available_skills>``, one
``<skill name="…">description</skill>`` line each (XML-escaped; a parent carries a
``sub_skills`` count). An empty catalog renders as the empty string, so a prompt with no skills
carries no skills section at all. :func:`fit_catalog` keeps the text within a character budget
(``skills.catalog_max_chars``) whatever the shape of the library. Called by the agent loop, the
CLI (``skillweave skills catalog``) and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final
from xml.sax.saxutils import escape, quoteattr

from skillweave.config import CatalogMode
from skillweave.skills.model import Skill
from skillweave.skills.registry import SkillRegistry

__all__ = [
    "CATALOG_PREAMBLE",
    "MIN_DESCRIPTION_CHARS",
    "SHORTENED_MARK",
    "Catalog",
    "build_catalog",
    "fit_catalog",
    "render_catalog",
    "render_entries",
]

CATALOG_PREAMBLE: Final = (
    "Skills give you instructions and scripts for specialised tasks. When a task matches a "
    "skill's description, call activate_skill with its name before you start."
)


MIN_DESCRIPTION_CHARS: Final = 80
"""A budget never cuts a description shorter than this; entries are folded away instead."""
SHORTENED_MARK: Final = "…"
"""Ends every description the budget shortened."""


@dataclass(frozen=True, slots=True)
class Catalog:
    """The tier-1 text and what it lists.

    Attributes:
        text: exactly what goes into the system prompt ('' when nothing is listed).
        names: the skills listed, in order.
        hidden: how many enabled skills are not listed (``auto`` mode, or over the budget);
            when positive, the model needs ``search_skills`` to reach them.
        shortened: how many descriptions the budget shortened.
    """

    text: str
    names: tuple[str, ...]
    hidden: int = 0
    shortened: int = 0


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    description: str
    sub_skills: int


def _entries(skills: Sequence[Skill]) -> list[_Entry]:
    return [_Entry(s.name, s.description, len(s.children)) for s in skills]


def _entry_text(entry: _Entry) -> str:
    extra = f' sub_skills="{entry.sub_skills}"' if entry.sub_skills else ""
    return f"<skill name={quoteattr(entry.name)}{extra}>{escape(entry.description)}</skill>\n"


def _render(entries: Sequence[_Entry], hidden: int) -> str:
    if not entries and not hidden:
        return ""
    lines = [CATALOG_PREAMBLE]
    if entries:
        body = "".join(_entry_text(entry) for entry in entries)
        lines.append(f"<available_skills>\n{body}</available_skills>")
    if hidden:
        lines.append(
            f"{hidden} more skill{'s are' if hidden != 1 else ' is'} not listed; call "
            "search_skills with a few keywords to find one."
        )
    return "\n".join(lines) + "\n"


def render_entries(skills: Sequence[Skill]) -> str:
    """The ``<skill name="…">description</skill>`` lines for `skills`."""
    return "".join(_entry_text(entry) for entry in _entries(skills))


def render_catalog(skills: Sequence[Skill], *, hidden: int = 0) -> str:
    """The tier-1 text for `skills`, unbudgeted; '' when there are none and none hidden.

    Args:
        skills: the skills to list, in order.
        hidden: how many further skills ``search_skills`` can find.
    """
    return _render(_entries(skills), hidden)


def _shorten(text: str, limit: int) -> str:
    """`text` within `limit` characters. A shortened text is cut at its last word boundary
    that fits and always ends with :data:`SHORTENED_MARK`, so the model knows that more was
    said (a sentence such as "Do not use for …" may be what was cut). Only when a single word
    runs over the last 40% of the limit (a long URL) is it cut inside that word."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit)  # text[:space] is whole words and leaves room for '…'
    kept = text[:space].rstrip(" ,;:.!?-") if space > 0 else ""
    if len(kept) < limit * 0.6:
        kept = text[: limit - 1]
    return kept + SHORTENED_MARK


def _capped(entries: Sequence[_Entry], limit: int) -> list[_Entry]:
    return [replace(e, description=_shorten(e.description, limit)) for e in entries]


def fit_catalog(skills: Sequence[Skill], *, hidden: int = 0, max_chars: int | None) -> Catalog:
    """Render `skills` within `max_chars` characters (None or 0: no limit).

    Over the budget, the longest descriptions are shortened first, all to one common length
    (short ones stay whole), as long as that length is at least
    :data:`MIN_DESCRIPTION_CHARS`; if even that does not fit, the last entries are folded away
    and counted as hidden, for ``search_skills`` to find.
    """
    entries = _entries(skills)
    text = _render(entries, hidden)
    if not max_chars or len(text) <= max_chars:
        return Catalog(text, tuple(e.name for e in entries), hidden)

    # Fold: keep the longest prefix that fits with every description at the minimum length.
    floor = _capped(entries, MIN_DESCRIPTION_CHARS)
    worst_note = len(_render([], hidden + len(entries)))  # the note with the most digits
    used = worst_note + len("<available_skills>\n</available_skills>\n")
    keep = 0
    for entry in floor:
        used += len(_entry_text(entry))
        if used > max_chars:
            break
        keep += 1
    hidden += len(entries) - keep
    entries = entries[:keep]

    # Then the largest common description length that fits.
    low, high = MIN_DESCRIPTION_CHARS, max((len(e.description) for e in entries), default=0)
    while low < high:
        middle = (low + high + 1) // 2
        if len(_render(_capped(entries, middle), hidden)) <= max_chars:
            low = middle
        else:
            high = middle - 1
    fitted = _capped(entries, low)
    shortened = sum(1 for a, b in zip(entries, fitted, strict=True) if a != b)
    return Catalog(_render(fitted, hidden), tuple(e.name for e in fitted), hidden, shortened)


def build_catalog(
    registry: SkillRegistry,
    *,
    mode: CatalogMode = "enabled",
    query: str | None = None,
    top_k: int = 8,
    max_chars: int | None = None,
) -> Catalog:
    """Choose and render the catalog for `mode`.

    Args:
        registry: the skills.
        mode: ``all``, ``enabled`` or ``auto`` (see the module docstring).
        query: the task, for ``auto`` ranking; without one ``auto`` lists enabled roots.
        top_k: how many skills ``auto`` lists at most.
        max_chars: the character budget of the whole text (``skills.catalog_max_chars``);
            None or 0 for none.
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
    return fit_catalog(chosen, hidden=hidden, max_chars=max_chars)
