"""The skill library as the runtime sees it: :class:`SkillRegistry` and :class:`SkillLibrary`.

A registry is an immutable snapshot of one scan: skills by name, the tree (roots, children),
which skills are enabled, what may be activated given the active set, and relevance search.
A library owns the scanner and its cache and hands out a fresh registry on ``refresh()``; an
unchanged library costs one cheap rescan. Called by the CLI, the agent loop's services, the API
and the MCP front door.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

from skillweave.config import SkillsSettings
from skillweave.errors import SkillNotFoundError
from skillweave.skills.discovery import ScanResult, SkillScanner
from skillweave.skills.model import Skill
from skillweave.skills.relevance import RelevanceIndex, SearchHit, skill_document
from skillweave.skills.spec import Diagnostic

__all__ = ["SkillLibrary", "SkillRegistry"]


class SkillRegistry:
    """Skills by name, with their tree, enabled state and a relevance index.

    Args:
        skills: skills by name, in display order (discovery order).
        diagnostics: what the scan reported.
        disabled: names switched off by configuration, on top of each skill's own state.
    """

    def __init__(
        self,
        skills: Mapping[str, Skill],
        *,
        diagnostics: Sequence[Diagnostic] = (),
        disabled: Collection[str] = (),
    ) -> None:
        self._skills = dict(skills)
        self.diagnostics = tuple(diagnostics)
        self._disabled = frozenset(disabled)

    @classmethod
    def from_scan(cls, result: ScanResult, *, disabled: Collection[str] = ()) -> SkillRegistry:
        """A registry over what a scan found."""
        return cls(result.skills, diagnostics=result.diagnostics, disabled=disabled)

    def __len__(self) -> int:
        return len(self._skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    @property
    def names(self) -> tuple[str, ...]:
        """All skill names, in display order."""
        return tuple(self._skills)

    def get(self, name: str) -> Skill:
        """The skill called `name`.

        Raises:
            SkillNotFoundError: no such skill.
        """
        try:
            return self._skills[name]
        except KeyError:
            raise SkillNotFoundError(name, available=self.attachable()) from None

    def is_enabled(self, name: str) -> bool:
        """True when the skill exists, is enabled itself and not disabled by configuration."""
        skill = self._skills.get(name)
        return skill is not None and skill.enabled and name not in self._disabled

    def roots(self, *, enabled_only: bool = False) -> list[Skill]:
        """Skills that have no parent (what a tree-aware catalog lists)."""
        return [
            s
            for s in self._skills.values()
            if s.parent is None and (not enabled_only or self.is_enabled(s.name))
        ]

    def children_of(self, name: str, *, enabled_only: bool = False) -> list[Skill]:
        """The skills directly inside `name`, sorted by name."""
        return [
            self._skills[child]
            for child in self.get(name).children
            if not enabled_only or self.is_enabled(child)
        ]

    def attachable(self, active: Collection[str] = ()) -> tuple[str, ...]:
        """What ``activate_skill`` may name now: enabled roots, plus the enabled children of
        every active skill (a tree grows as its parents are activated)."""
        names = [s.name for s in self.roots(enabled_only=True)]
        seen = set(names)
        for parent in active:
            if parent not in self._skills:
                continue
            for child in self.children_of(parent, enabled_only=True):
                if child.name not in seen:
                    seen.add(child.name)
                    names.append(child.name)
        return tuple(names)

    def restricted(self, allowed: Collection[str]) -> SkillRegistry:
        """This registry with only `allowed` skills and the trees under them enabled.

        Raises:
            SkillNotFoundError: an allowed name is not a skill here.
        """
        unknown = [name for name in allowed if name not in self._skills]
        if unknown:
            raise SkillNotFoundError(unknown[0], available=self.attachable())
        permitted = set(allowed)
        for skill in self:
            ancestor = skill.parent
            while ancestor is not None and skill.name not in permitted:
                if ancestor in allowed:
                    permitted.add(skill.name)
                ancestor = self._skills[ancestor].parent
        hidden = [name for name in self._skills if name not in permitted]
        return SkillRegistry(
            self._skills, diagnostics=self.diagnostics, disabled=[*self._disabled, *hidden]
        )

    @cached_property
    def _index(self) -> RelevanceIndex:
        return RelevanceIndex(
            [(s.name, skill_document(s.name, s.description, s.body)) for s in self]
        )

    def search(
        self, query: str, *, top_k: int = 5, enabled_only: bool = True, min_score: float = 0.0
    ) -> list[SearchHit]:
        """Skills ranked by BM25 relevance to `query`, best first (see ``relevance``)."""
        allowed = [s.name for s in self if self.is_enabled(s.name)] if enabled_only else None
        return self._index.search(query, top_k=top_k, allowed=allowed, min_score=min_score)


class SkillLibrary:
    """The configured skill directories, rescanned on demand with a cache.

    Args:
        settings: the ``skills`` settings section.
        dirs: roots to use instead of ``settings.dirs`` (lowest precedence first).
    """

    def __init__(self, settings: SkillsSettings, *, dirs: Sequence[Path] | None = None) -> None:
        self.settings = settings
        self.scanner = SkillScanner(
            list(dirs) if dirs is not None else settings.resolved_dirs(),
            max_depth=settings.max_depth,
            max_skills=settings.max_skills,
            max_package_files=settings.package_max_files,
        )
        self._registry: SkillRegistry | None = None
        self._result: ScanResult | None = None

    @property
    def roots(self) -> list[Path]:
        """The library roots, lowest precedence first."""
        return list(self.scanner.roots)

    def refresh(self) -> SkillRegistry:
        """Rescan and return the current registry (the same object when nothing changed)."""
        result = self.scanner.scan()
        if self._registry is None or result is not self._result:
            self._result = result
            self._registry = SkillRegistry.from_scan(result, disabled=self.settings.disabled)
        return self._registry
