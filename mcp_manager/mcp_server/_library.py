"""The skill library as one MCP session sees it: :class:`SessionLibrary`.

A session sees the library restricted to its scope (views kept, a few at a time), may
activate the enabled roots and what ``search_skills`` found for it, then the children of what
it activated, and reads a tier-1 catalog of them. The tool, resource, prompt, activation and
run handlers of the front door all ask it; ``SkillMcp.use_registry`` swaps the library under
it (sessions keep the versions they activated).
"""

from __future__ import annotations

from typing import Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from mcp_manager.cache import BoundedCache
from mcp_manager.mcp_server._sessions import SCOPE_PARAMETER, Session
from skillweave.agent import disclosure
from skillweave.config import Settings
from skillweave.errors import SkillNotFoundError
from skillweave.skills import SkillRegistry, build_catalog, render_entries

__all__ = ["SessionLibrary"]

_VIEWS: Final = 64  # scoped views of the library kept


class SessionLibrary:
    """The skills of `registry` as each session sees them.

    Args:
        settings: the skills section (catalog mode and budgets) is read at each call.
        registry: the library served (``registry``; replaced by :meth:`use`).
        scope: the server's scope, for a request without a session (None: all skills).
    """

    def __init__(
        self, settings: Settings, registry: SkillRegistry, *, scope: tuple[str, ...] | None
    ) -> None:
        self.registry = registry
        self._settings = settings
        self._scope = scope
        self._views: BoundedCache[tuple[SkillRegistry, tuple[str, ...]], SkillRegistry] = (
            BoundedCache(max_entries=_VIEWS)
        )

    def use(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on."""
        self.registry = registry

    def of(self, session: Session | None) -> SkillRegistry:
        """The skills `session` sees: the library, restricted to its scope.

        Raises:
            MCPError: the scope names no skill (a name or namespace the library lacks).
        """
        scope = session.scope if session is not None else self._scope
        if scope is None:
            return self.registry
        key = (self.registry, scope)
        view = self._views.get(key)
        if view is None:
            try:
                view = self.registry.restricted(scope)
            except SkillNotFoundError as exc:
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"this connection's skills ({', '.join(scope)}) name no skill here: "
                    f"{exc}. Change the {SCOPE_PARAMETER} parameter of the MCP URL (or "
                    "skillweave mcp --skills)",
                ) from None
            self._views.put(key, view)
        return view

    def roots(self, session: Session | None) -> list[str]:
        """What a session may activate without opening a tree: the enabled roots, then what
        ``search_skills`` found for it."""
        registry = self.of(session)
        names = list(registry.attachable())
        if session is not None:
            names += [n for n in session.found if n not in names and registry.is_enabled(n)]
        return names

    def attachable(self, session: Session | None) -> tuple[str, ...]:
        """What ``activate_skill`` accepts now (the roots, then children of active parents)."""
        return disclosure.attachable(self.roots(session), session.active if session else {})

    def catalog(self, query: str | None, session: Session | None) -> str:
        """The tier-1 catalog `session` reads (for `query` in the auto mode), then what it
        may activate now that the catalog does not list."""
        skills = self._settings.skills
        library = self.of(session)
        catalog = build_catalog(
            library,
            mode=skills.catalog_mode,
            query=query,
            top_k=skills.catalog_top_k,
            max_chars=skills.catalog_max_chars,
        )
        text = catalog.text
        if session is not None and session.active:
            children = [
                n
                for n in self.attachable(session)
                if n not in catalog.names and n not in session.active and library.is_enabled(n)
            ]
            if children:
                text += "\nActivatable now (sub-skills and search results):\n"
                text += render_entries([library.get(n) for n in children])
        return text
