"""`SkillViews`: the skill library as one run sees it, and its tier-1 catalog.

A run sees the library restricted to the skills its agent allows, or, once it has activated
skills, those skills pinned at their versions even after the library moved on
(``sandbox.pinned``). ``AgentServices`` answers ``prepare_catalog`` here, and its other
collaborators (activation, resource reads, search, authoring) look skills up here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from skillweave.agent import CatalogInput, CatalogResult, PinnedSkill
from skillweave.config import SkillsSettings
from skillweave.errors import ConfigError, SkillNotFoundError
from skillweave.sandbox import skill_at
from skillweave.skills import Skill, SkillRegistry, build_catalog
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

    def use(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on; the views built from the old one are dropped."""
        self.registry = registry
        self._views.clear()
        self._pinned_views.clear()

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
        """What a run sees: its pinned skills at their versions, else :meth:`view`."""
        if pinned is None:
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
