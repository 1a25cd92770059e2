"""`SkillViews`: the skill library as one run sees it, and its tier-1 catalog.

A run sees the library restricted to the skills its agent allows, or, once it has activated
skills, those skills pinned at their versions even after the library moved on
(``sandbox.pinned``). ``AgentServices`` answers ``prepare_catalog`` here, and its other
collaborators (activation, resource reads, search, authoring) look skills up here.

An agent may pin a skill itself: an allowed entry ``name@VERSION`` (``skills.parse_pin``) shows
the run that skill at that version whatever the library holds (its package from the store:
any stored version, or one a run published; the rest of the allowed skills as the library has
them). The door that starts a run resolves a prefix to the full version first (the CLI, the
API's ``skill_pins``); one that reaches here is resolved against the store. A version the
store does not hold refuses the run in one line (:class:`~skillweave.skills.SkillVersionError`),
and so does one today's scan or trust policy refuses (``skills.stored.check_version``).
A pinned version other than the library's comes without its child skills.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from skillweave.agent import CatalogInput, CatalogResult, PinnedSkill
from skillweave.config import SkillsSettings
from skillweave.errors import ArtifactNotFoundError, ConfigError, SkillNotFoundError
from skillweave.sandbox import skill_at
from skillweave.skills import (
    Skill,
    SkillRegistry,
    SkillVersionError,
    build_catalog,
    parse_pin,
)
from skillweave.skills.stored import StoredSkills, check_version
from skillweave.storage import ArtifactStore, store_identity

__all__ = ["SkillViews"]

_PINNED_VIEWS: Final = 64  # the pinned skill sets kept built (one per agent × versions)


class SkillViews:
    """The registry runs use, the views of it they see, and the catalog they start from.

    Args:
        registry: the skill library snapshot runs use (:meth:`use` replaces it).
        store: where pinned versions and the store's id are found.
        settings: the catalog budget and where pinned skills are unpacked.
    """

    def __init__(
        self, registry: SkillRegistry, *, store: ArtifactStore, settings: SkillsSettings
    ) -> None:
        self.registry = registry
        self._store = store
        self._settings = settings
        self._views: dict[tuple[str, ...] | None, SkillRegistry] = {}
        self._pinned_views: dict[tuple[PinnedSkill, ...], SkillRegistry] = {}
        self._spec_views: dict[tuple[str, ...], SkillRegistry] = {}

    def use(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on; the views built from the old one are dropped."""
        self.registry = registry
        self._views.clear()
        self._pinned_views.clear()
        self._spec_views.clear()

    def view(self, allowed: Sequence[str] | None) -> SkillRegistry:
        """The registry restricted to `allowed` skills and their trees (None: everything)."""
        key = tuple(allowed) if allowed is not None else None
        cached = self._views.get(key)
        if cached is not None:
            return cached
        view = self.registry if key is None else self.registry.restricted(key)
        self._views[key] = view
        return view

    async def of_run(
        self, allowed: Sequence[str] | None, pinned: Sequence[PinnedSkill] | None
    ) -> SkillRegistry:
        """What a run sees: its pinned skills at their versions, else the allowed skills (those
        the agent pins at theirs: :meth:`_spec_pinned`), else :meth:`view`."""
        if pinned is None:
            if allowed is not None and any(parse_pin(entry).version for entry in allowed):
                return await self._spec_pinned(tuple(allowed))
            return self.view(allowed)
        key = tuple(pinned)
        cached = self._pinned_views.get(key)
        if cached is not None:
            return cached
        children: dict[str, list[str]] = {pin.name: [] for pin in pinned}
        for pin in pinned:
            if pin.parent in children:
                children[pin.parent].append(pin.name)
        skills = {}
        for pin in pinned:
            skill = await self.skill_at(pin.name, pin.version)
            skills[pin.name] = dataclasses.replace(
                skill,
                parent=pin.parent if pin.parent in children else None,
                children=tuple(sorted(children[pin.name])),
                enabled=True,
            )
        view = SkillRegistry(skills)
        while len(self._pinned_views) >= _PINNED_VIEWS:
            self._pinned_views.pop(next(iter(self._pinned_views)))
        self._pinned_views[key] = view
        return view

    async def _spec_pinned(self, allowed: tuple[str, ...]) -> SkillRegistry:
        """The allowed skills, each ``name@VERSION`` entry at that version (its child skills
        left out unless it is the library's version), the rest as :meth:`view` has them.

        Raises:
            SkillVersionError: the store holds no such version (or a prefix names several).
            SkillScanError, SignatureError: today's policies refuse the pinned version.
            SkillNotFoundError: an entry names no skill.
        """
        cached = self._spec_views.get(allowed)
        if cached is not None:
            return cached
        plain: list[str] = []
        pinned: dict[str, Skill] = {}
        for entry in allowed:
            pin = parse_pin(entry)
            if pin.version is None:
                plain.append(entry)
                continue
            version = pin.version if pin.exact else await self._full_version(pin.name, pin.version)
            if pin.name in self.registry and self.registry.get(pin.name).version == version:
                plain.append(pin.name)  # the library's own copy, with its tree
                continue
            try:
                skill = await self.skill_at(pin.name, version)
            except ArtifactNotFoundError:
                raise SkillVersionError(pin.name, version, problem="unknown") from None
            await check_version(self._store, self._settings, pin.name, version)
            pinned[skill.name] = dataclasses.replace(skill, parent=None, children=(), enabled=True)
        skills: dict[str, Skill] = {}
        disabled: list[str] = []
        base = self.registry.restricted(plain)  # everything else hidden (disabled)
        for skill in base:
            ancestor: str | None = skill.name
            while ancestor is not None and ancestor not in pinned:
                ancestor = base.get(ancestor).parent
            if ancestor is None:  # not in (nor under) a pinned skill: the library's
                skills[skill.name] = skill
                if not base.is_enabled(skill.name):
                    disabled.append(skill.name)
        view = SkillRegistry(
            {**skills, **pinned}, disabled=disabled, selection=self.registry.selection
        )
        while len(self._spec_views) >= _PINNED_VIEWS:
            self._spec_views.pop(next(iter(self._spec_views)))
        self._spec_views[allowed] = view
        return view

    async def _full_version(self, name: str, version: str) -> str:
        """The full version a prefix names: the library's when it begins so, else the one
        stored version it begins (``StoredSkills.resolve``)."""
        if name in self.registry and self.registry.get(name).version.startswith(version):
            return self.registry.get(name).version
        try:
            return await StoredSkills(self._store).resolve(name, version)
        except SkillNotFoundError:
            raise SkillVersionError(name, version, problem="unknown") from None

    async def skill(
        self, name: str, allowed: Sequence[str] | None, pinned: Sequence[PinnedSkill] | None
    ) -> tuple[Skill, SkillRegistry]:
        """The skill `name` as a run sees it, and the run's view.

        Raises:
            SkillNotFoundError: the run cannot see it (or it is disabled).
        """
        view = await self.of_run(allowed, pinned)
        if not view.is_enabled(name):
            raise SkillNotFoundError(name, available=view.attachable())
        return view.get(name), view

    async def skill_at(self, name: str, version: str) -> Skill:
        """`name` at `version`, even after the library moved on (``sandbox.pinned``)."""
        return await skill_at(
            self._store, self.registry, name, version, pinned_dir=self._settings.pinned_dir
        )

    async def catalog(self, request: CatalogInput) -> CatalogResult:
        """The tier-1 catalog, what may be activated at the start, a preload pick, and the
        skills to activate at the start (``auto_load``: every one the agent allows).

        Raises:
            ConfigError: the run was started against another store than this process's.
        """
        if request.store_id is not None:
            own = await store_identity(self._store)
            if own != request.store_id:
                raise ConfigError(
                    f"run {request.run_id!r} was started against the store {request.store_id}, "
                    f"and this process's store is {own}: its inputs and outputs are not here. "
                    "Clients, workers and managers must share one store (the same STORAGE__ "
                    "settings); `skillweave doctor` prints each process's store id"
                )
        view = await self.of_run(request.allowed, request.pinned)
        catalog = build_catalog(
            view,
            mode=request.mode,
            query=request.task,
            top_k=request.top_k,
            max_chars=self._settings.catalog_max_chars,
        )
        roots = catalog.names
        preload = None
        if request.preload or request.preload_threshold is not None:
            threshold = request.preload_threshold
            if threshold is None:
                threshold = view.selector.preload_min_score
            hits = view.search(request.task, top_k=1, min_score=threshold)
            if hits:
                preload = hits[0].name
                if preload not in roots:
                    roots = (*roots, preload)
        auto_load = tuple(s.name for s in view if s.auto_load and view.is_enabled(s.name))
        roots = (*roots, *(name for name in auto_load if name not in roots))
        return CatalogResult(
            catalog=catalog.text,
            roots=roots,
            search_enabled=request.mode == "auto" or catalog.hidden > 0,
            preload=preload,
            auto_load=auto_load,
            aliases={alias: name for alias, name in view.aliases.items() if view.is_enabled(name)},
        )
