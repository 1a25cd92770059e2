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

from skillweave.config import SelectionMode, SkillsSettings
from skillweave.errors import SkillNotFoundError
from skillweave.skills.discovery import ScanResult, SkillScanner
from skillweave.skills.model import Skill
from skillweave.skills.names import SkillOwner, name_key
from skillweave.skills.relevance import SearchHit
from skillweave.skills.selection import Selector, SkillText, make_selector, resolve_strategy
from skillweave.skills.spec import Diagnostic

__all__ = ["SkillLibrary", "SkillRegistry"]


class SkillRegistry:
    """Skills by name, with their tree, enabled state and a selector that ranks them.

    Args:
        skills: skills by name, in display order (discovery order).
        diagnostics: what the scan reported.
        disabled: names switched off by configuration, on top of each skill's own state.
        selection: how :meth:`search` ranks (``skills.selection``; see ``selection``).
        owners: who owns each skill's name (a scan says; see ``names``). A skill missing here
            is taken to belong to its directory library.
    """

    def __init__(
        self,
        skills: Mapping[str, Skill],
        *,
        diagnostics: Sequence[Diagnostic] = (),
        disabled: Collection[str] = (),
        selection: SelectionMode = "auto",
        owners: Mapping[str, SkillOwner] | None = None,
    ) -> None:
        self._skills = dict(skills)
        self.diagnostics = tuple(diagnostics)
        self._disabled = frozenset(disabled)
        self.selection: SelectionMode = selection
        self._owners = dict(owners) if owners is not None else {}
        self._keys = {name_key(name): name for name in self._skills}

    @classmethod
    def from_scan(
        cls,
        result: ScanResult,
        *,
        disabled: Collection[str] = (),
        selection: SelectionMode = "auto",
    ) -> SkillRegistry:
        """A registry over what a scan found."""
        return cls(
            result.skills,
            diagnostics=result.diagnostics,
            disabled=disabled,
            selection=selection,
            owners=result.owners,
        )

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

    def owner_of(self, name: str) -> SkillOwner:
        """Who owns the skill `name`'s name: the upload that holds it, or its directory library.

        Raises:
            SkillNotFoundError: no such skill.
        """
        skill = self.get(name)
        owner = self._owners.get(name)
        if owner is not None:
            return owner
        return SkillOwner("directory", str(skill.source if skill.source else skill.path.parent))

    def claimant(self, name: str) -> Skill | None:
        """The skill whose name is `name` compared as names are (``names.name_key``: case and
        Unicode forms aside), or None."""
        found = self._keys.get(name_key(name))
        return self._skills[found] if found is not None else None

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
        view = SkillRegistry(
            self._skills,
            diagnostics=self.diagnostics,
            disabled=[*self._disabled, *hidden],
            selection=self.selection,
            owners=self._owners,
        )
        if "selector" in self.__dict__:  # same skills, same ranking: built once, shared
            view.__dict__["selector"] = self.selector
        return view

    @cached_property
    def selector(self) -> Selector:
        """What ranks these skills: the ``skills.selection`` strategy, built on first use."""
        return make_selector(
            resolve_strategy(self.selection),
            [SkillText(s.name, s.description, s.body) for s in self],
        )

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        enabled_only: bool = True,
        min_score: float | None = None,
    ) -> list[SearchHit]:
        """Skills ranked by relevance to `query`, best first (see ``selection``).

        Args:
            query: free text.
            top_k: at most this many.
            enabled_only: only enabled skills can be hits.
            min_score: only hits above this score, on the strategy's scale; None: any match.
        """
        allowed = [s.name for s in self if self.is_enabled(s.name)] if enabled_only else None
        return self.selector.search(query, top_k=top_k, allowed=allowed, min_score=min_score or 0.0)


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
            include_hidden=settings.include_hidden,
        )
        self._registry: SkillRegistry | None = None
        self._result: ScanResult | None = None
        resolve_strategy(settings.selection)  # a strategy this install cannot run: say so now

    @property
    def roots(self) -> list[Path]:
        """The library roots, lowest precedence first."""
        return list(self.scanner.roots)

    def refresh(self) -> SkillRegistry:
        """Rescan and return the current registry (the same object when nothing changed)."""
        result = self.scanner.scan()
        if self._registry is None or result is not self._result:
            self._result = result
            self._registry = SkillRegistry.from_scan(
                result, disabled=self.settings.disabled, selection=self.settings.selection
            )
        return self._registry
