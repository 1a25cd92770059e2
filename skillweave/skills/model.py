"""The in-memory picture of a skill: :class:`Skill`, built by the loader and discovery.

A ``Skill`` is an immutable snapshot of one skill folder: its spec fields, our extensions
(read from ``metadata``), its place in a skill tree, its version (sha256 of its package) and
the warnings lenient loading raised about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal

from skillweave.skills.spec import Diagnostic

__all__ = ["SKILL_TYPES", "Skill", "SkillType"]

SkillType = Literal["contextual", "executable", "composite"]
SKILL_TYPES: Final[tuple[SkillType, ...]] = ("contextual", "executable", "composite")


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill, as discovered and loaded.

    Attributes:
        name: the skill's name (the frontmatter ``name``, or the folder name when absent).
        description: what the skill does and when to use it; the catalog shows it.
        path: the skill folder (absolute).
        body: the Markdown instructions after the frontmatter.
        type: ``contextual`` (instructions), ``executable`` (scripts are tools) or
            ``composite`` (groups child skills).
        version: sha256 (hex) of the package: every file, paths and bytes, sorted.
        parent: the name of the enclosing skill in a tree, if any.
        children: names of the skills directly inside this one, sorted.
        source: the library root this skill was discovered under.
        namespace: the folders without a ``SKILL.md`` between the library root and the skill
            (its tree's top), joined with dots (``web`` for ``web/scraper``); empty at the root.
        short_name: the skill's own name when another namespace holds a skill of that name too
            and this one is known by its qualified name (``name`` is then ``web.parser``);
            empty otherwise.
        enabled: False hides the skill from the ``enabled`` and ``auto`` catalogs.
        auto_load: activate at the start of every run whose agent allows the skill (the agent
            loop does); it implies ``enabled``.
        dependencies: names of skills this one builds on.
        tools: package paths of scripts that answer ``--help-json`` (executable skills).
        warnings: what lenient loading noticed but tolerated.
    """

    name: str
    description: str
    path: Path
    body: str = ""
    type: SkillType = "contextual"
    version: str = ""
    parent: str | None = None
    children: tuple[str, ...] = ()
    source: Path | None = None
    namespace: str = ""
    short_name: str = ""
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    enabled: bool = True
    auto_load: bool = False
    dependencies: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def skill_file(self) -> Path:
        """The skill's ``SKILL.md``."""
        return self.path / "SKILL.md"

    @property
    def is_parent(self) -> bool:
        """True when other skills live inside this one."""
        return bool(self.children)

    @property
    def qualified_name(self) -> str:
        """``namespace.name`` (the name alone at a library's root): the skill's name wherever
        it is unique, and its only name where another namespace has a skill of the same name."""
        if not self.namespace or self.short_name:
            return self.name
        return f"{self.namespace}.{self.name}"

    @property
    def short_version(self) -> str:
        """The first 12 hex digits of the version, for display."""
        return self.version[:12]
