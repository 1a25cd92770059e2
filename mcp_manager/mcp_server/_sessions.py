"""The MCP front door's sessions: :class:`Session` (what one session has done) and
:class:`SessionStore` (the sessions by key, least recently used forgotten first).

A session is the ``Mcp-Session-Id`` of a streamable-HTTP session, or the one connection of a
stdio server. Each has a run of its own (``mcp-<digest of its key>``), the skills it
activated (pinned), those ``search_skills`` found for it, and its scope (the URL's
:data:`SCOPE_PARAMETER`, else the server's). ``SkillMcp`` builds the store; every handler
asks it for the session of a request.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Final

from mcp.server.context import ServerRequestContext

from mcp_manager.cache import BoundedCache
from skillweave.agent import ActiveSkill
from skillweave.storage import keys

__all__ = ["NO_SESSION", "SCOPE_PARAMETER", "Session", "SessionStore"]

SCOPE_PARAMETER: Final = "skills"
"""The query parameter of the MCP URL that scopes a session: ``/mcp?skills=web.*,notes``."""
NO_SESSION: Final = (
    "this request has no MCP session, and skill activations are kept per session: connect "
    "with the session handshake (streamable HTTP with Mcp-Session-Id, or stdio)"
)
"""Why a request without a session cannot activate, read or run (said to the client)."""

_MAX_SESSIONS: Final = 4_096  # sessions whose activations are kept (least recently used go)


@dataclass
class Session:
    """What one MCP session has done: its activations and its run."""

    run_id: str
    active: dict[str, ActiveSkill] = field(default_factory=dict)  # pinned at activation
    found: list[str] = field(default_factory=list)  # made activatable by search_skills
    scope: tuple[str, ...] | None = None  # the skills it may see (names, ns.name, ns.*)
    local: bool = False  # over stdio: the client's machine is this process's


class SessionStore:
    """The sessions of one front door, by session key.

    Args:
        scope: the skills a session sees unless its URL names its own (None: all).
    """

    def __init__(self, *, scope: tuple[str, ...] | None) -> None:
        self._scope = scope
        self._sessions: BoundedCache[str, Session] = BoundedCache(max_entries=_MAX_SESSIONS)
        self._stdio_key = f"stdio-{secrets.token_hex(8)}"

    def of(self, ctx: ServerRequestContext[Any]) -> Session | None:
        """The session of the request `ctx` (a new one on its first request); None: the
        request has no session (streamable HTTP without ``Mcp-Session-Id``)."""
        key = self._key(ctx)
        if key is None:
            return None
        session = self._sessions.get(key)
        if session is None:
            digest = keys.execution_digest(key)[:24]
            session = Session(
                run_id=f"mcp-{digest}", scope=self._scope_of(ctx), local=ctx.request is None
            )
            self._sessions.put(key, session)
        return session

    def clear(self) -> None:
        """Forget every session: a client's next request starts a new one."""
        self._sessions.clear()

    def _key(self, ctx: ServerRequestContext[Any]) -> str | None:
        request = ctx.request
        if request is None:  # stdio: one connection, one session
            return self._stdio_key
        headers = getattr(request, "headers", None)
        return headers.get("mcp-session-id") if headers is not None else None

    def _scope_of(self, ctx: ServerRequestContext[Any]) -> tuple[str, ...] | None:
        """The skills a new session may see: the URL's ``skills`` parameter, else the
        server's scope."""
        params = getattr(ctx.request, "query_params", None)
        given = params.get(SCOPE_PARAMETER) if params is not None else None
        if given is None:
            return self._scope
        return tuple(part.strip() for part in given.split(",") if part.strip())
