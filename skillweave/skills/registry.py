"""The skill library as the runtime sees it at one moment: :class:`SkillRegistry`.

A registry is an immutable snapshot of one scan: skills by name, the tree (roots, children),
who owns each name, which skills are enabled, what may be activated given the active set, and
relevance search. ``library.SkillLibrary`` owns the scanner and the store's skills and hands
out a fresh registry on every change. Called by the CLI, the agent loop's services, the API
and the MCP front door.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import cached_property

from skillweave.config import SelectionMode
from skillweave.errors import SkillNotFoundError
from skillweave.skills.discovery import ScanResult
from skillweave.skills.model import Skill
from skillweave.skills.names import SCOPE_SUFFIX, OwnerKind, SkillOwner, is_scope, name_key
from skillweave.skills.relevance import SearchHit
from skillweave.skills.selection import Selector, SkillText, make_selector, resolve_strategy
from skillweave.skills.spec import Diagnostic

__all__ = ["SkillRegistry"]


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
        self.selection: SelectionMode = selection
        self._owners = dict(owners) if owners is not None else {}
        self._keys = {name_key(name): name for name in self._skills}
        # A namespaced skill known by its own name answers to ``ns.name`` too, unless that is
        # another skill's name.
        self._aliases = {
            skill.qualified_name: name
            for name, skill in self._skills.items()
            if skill.qualified_name != name and name_key(skill.qualified_name) not in self._keys
        }
        self._disabled = frozenset(
            name for entry in disabled for name in (self.resolve(entry) or (entry,))
        )

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
        """The skill called `name` (or known by it: ``web.scraper`` for ``scraper``).

        Raises:
            SkillNotFoundError: no such skill.
        """
        try:
            return self._skills[self._aliases.get(name, name)]
        except KeyError:
            raise SkillNotFoundError(
                name, available=self.attachable(), namesakes=self.namesakes(name)
            ) from None

    def namesakes(self, name: str) -> tuple[str, ...]:
        """The skills of other namespaces known by qualified names because each is called
        `name` (``web.parser`` and ``pdf.parser`` for ``parser``)."""
        key = name_key(name)
        return tuple(s.name for s in self if s.short_name and name_key(s.short_name) == key)

    @property
    def aliases(self) -> Mapping[str, str]:
        """The qualified name (``web.scraper``) of each namespaced skill known by its own
        name, mapped to that name."""
        return self._aliases

    def canonical(self, name: str) -> str | None:
        """The name of the skill `name` names (itself, or the skill a qualified name stands
        for); None when it names none."""
        name = self._aliases.get(name, name)
        return name if name in self._skills else None

    def resolve(self, reference: str) -> tuple[str, ...]:
        """The skills `reference` names, in display order: a name or a qualified name (one
        skill), ``ns.*`` (every skill in the namespace ``ns`` and those below it), or ``*``
        (every skill); empty when it names none."""
        if reference == "*":
            return self.names
        if is_scope(reference):
            namespace = reference.removesuffix(SCOPE_SUFFIX)
            return tuple(
                s.name
                for s in self._skills.values()
                if s.namespace == namespace or s.namespace.startswith(f"{namespace}.")
            )
        name = self.canonical(reference)
        return (name,) if name is not None else ()

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
        name = self._aliases.get(name, name)
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

    def owned_by(self, kind: OwnerKind) -> SkillRegistry:
        """This registry with only the skills whose names `kind` sources own (a tree has
        one owner, so trees stay whole), the same switches and ranking settings."""
        kept = {s.name: s for s in self if self.owner_of(s.name).kind == kind}
        return SkillRegistry(
            kept,
            diagnostics=self.diagnostics,
            disabled=[name for name in self._disabled if name in kept],
            selection=self.selection,
            owners={name: owner for name, owner in self._owners.items() if name in kept},
        )

    def restricted(self, allowed: Collection[str]) -> SkillRegistry:
        """This registry with only `allowed` skills and the trees under them enabled; each
        entry as :meth:`resolve` reads it (a name, ``ns.name``, ``ns.*``).

        Raises:
            SkillNotFoundError: an allowed entry names no skill here (an empty namespace too).
        """
        resolved = {entry: self.resolve(entry) for entry in allowed}
        unknown = [entry for entry, names in resolved.items() if not names]
        if unknown:
            raise SkillNotFoundError(
                unknown[0], available=self.attachable(), namesakes=self.namesakes(unknown[0])
            )
        allowed = {name for names in resolved.values() for name in names}
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
