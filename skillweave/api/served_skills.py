"""The skill library the API serves (:class:`ServedSkills`), or none (:class:`NoSkills`).

:class:`ServedSkills` is the whole library (``skills.library.SkillLibrary``: the directories and
the store's skills, whoever wrote them) as the routes see it: the store's skills, the directory
part the listing shows, and the registry runs are pinned against; reloaded every
``SKILLS__RELOAD_SECONDS`` and whenever a change is made here (:meth:`ServedSkills.changed`).
An app composed without the skills routes' start-up hook (``open_skills``) serves
:class:`NoSkills`: its agents know no skill and its runs pin none. The start-up hooks of
:mod:`skillweave.api.skills` open it; agents, runs and the skill routes read it through
:class:`~skillweave.api.state.ApiState`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from skillweave.config import SkillsSettings
from skillweave.errors import SkillError
from skillweave.skills import (
    SKILL_ID_PATTERN,
    SkillLibrary,
    SkillPin,
    SkillRegistry,
    parse_pin,
    reloading,
    skill_id,
)
from skillweave.skills.stored import StoredSkills, directory_owners
from skillweave.storage import ArtifactStore

__all__ = ["NoSkills", "ServedSkills", "SkillReferences"]

SkillReferences = tuple[list[str], list[str]]
"""Skills an agent names, resolved: their names (deduplicated, in order), and the unknown."""


class ServedSkills:
    """The library the API serves, kept current.

    Attributes:
        stored: the store's skills (uploaded, installed, written by agents).
        directory: the directory libraries, which the skill listing shows.
        registry: the whole library runs are pinned against: directory skills and the enabled
            stored ones; rebuilt after every change made here, and when a rescan finds the
            folders changed.
        listeners: told every new :attr:`registry` (in-process engines' services).
    """

    def __init__(self, library: SkillLibrary, registry: SkillRegistry) -> None:
        assert library.stored is not None  # a library given the store has its skills
        self._library = library
        self.stored: StoredSkills = library.stored
        self.listeners: list[Callable[[SkillRegistry], None]] = []
        self.directory = registry.owned_by("directory")
        self.registry = registry

    @classmethod
    async def open(
        cls,
        settings: SkillsSettings,
        store: ArtifactStore,
        *,
        resources: contextlib.AsyncExitStack,
    ) -> ServedSkills:
        """The library of `settings` over `store` (its skills unpacked into
        ``SKILLS__UPLOADED_DIR``), reloaded every ``SKILLS__RELOAD_SECONDS`` while `resources`
        stay open."""
        library = SkillLibrary(settings, store=store, folder=settings.uploaded_dir)
        served = cls(library, await library.reload())
        await resources.enter_async_context(
            reloading(library, served.serve, every=settings.reload_seconds)
        )
        return served

    def serve(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on, and tell the listeners."""
        self.directory = registry.owned_by("directory")
        self.registry = registry
        for listener in self.listeners:
            listener(registry)

    async def changed(self) -> None:
        """The store's skills changed (here, or a run published one): reload and serve."""
        self.serve(await self._library.reload())

    async def references(self, given: list[str]) -> SkillReferences:
        """The skills `given` names, each as its name, as the id the API shows (``sk-…``), as
        a directory skill's qualified name (``web.scraper``) or as a namespace (``web.*``)."""
        library, stored = self.directory, self.stored
        names = [s.name for s in library]
        by_id: dict[str, str] | None = None
        resolved: list[str] = []
        missing: list[str] = []
        for item in dict.fromkeys(given):
            if SKILL_ID_PATTERN.fullmatch(item) is not None:
                if by_id is None:
                    uploaded = [r.name for r in await stored.list()]
                    by_id = {skill_id(name): name for name in [*uploaded, *names]}
                found = by_id.get(item)
            elif (pin := parse_pin(item)).version is not None:  # name@VERSION
                found = item if await self._holds(pin) else None
            elif item in names or await stored.get(item) is not None:
                found = item
            elif library.resolve(item):
                found = item  # ns.name or ns.* (a namespace): resolved when a run starts
            else:
                found = None
            if found is None:
                missing.append(item)
            else:
                resolved.append(found)
        return list(dict.fromkeys(resolved)), missing

    @property
    def settings(self) -> SkillsSettings:
        """The library's settings (``SKILLS__``): its policies too."""
        return self._library.settings

    async def _holds(self, pin: SkillPin) -> bool:
        """Whether the pinned version is one the library or the store holds (one alone, for a
        prefix): the library's current version, or a stored version of an uploaded skill."""
        assert pin.version is not None
        if pin.name in self.registry and self.registry.get(pin.name).version.startswith(
            pin.version
        ):
            return True
        try:
            await self.stored.resolve(pin.name, pin.version)
        except SkillError:  # no such skill, no such version, or several
            return False
        return True

    def reserved(self, listed: SkillRegistry) -> dict[str, str]:
        """Every directory skill's name (children included; a namespaced skill known by its
        qualified name holds its own name too), mapped to its owner in words: those of
        `listed` (the directory part a request began with) and any the registry found since."""
        registry = self.registry
        found = [skill for skill in registry if registry.owner_of(skill.name).kind == "directory"]
        return directory_owners([*listed, *found])


@dataclass(frozen=True)
class NoSkills:
    """No skill library: the app was composed without ``open_skills``. Its agents can name
    no skill, and its runs pin none (their ``skills`` is None)."""

    async def references(self, given: list[str]) -> SkillReferences:
        """Nothing is known: every skill `given` is unknown."""
        return [], list(dict.fromkeys(given))
