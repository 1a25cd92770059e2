"""The MCP front door's resources: :class:`ResourceHandler`.

Every skill file is ``skill://NAME/PATH`` (listed: each enabled skill's SKILL.md; the rest
through the template; the library as it is now, in the session's scope), and a session's
artifacts are ``artifact://KEY`` (only its own run's, logs masked). A bad URI, an unknown
skill or a file that cannot be read is an invalid-params error. ``SkillMcp`` registers the
handlers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcp_manager.mcp_server._artifacts import SessionArtifacts
from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._results import ToolError
from mcp_manager.mcp_server._sessions import NO_SESSION, SessionStore
from skillweave.config import Settings
from skillweave.errors import ArtifactNotFoundError, ResourceError
from skillweave.skills import read_resource

__all__ = ["ResourceHandler"]


class ResourceHandler:
    """Skill files and a session's artifacts as resources.

    Args:
        settings: the skills section's resource cap, read at each call.
        sessions: the session of each request.
        library: the skills each session sees.
        artifacts: the session's artifacts.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        sessions: SessionStore,
        library: SessionLibrary,
        artifacts: SessionArtifacts,
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._library = library
        self._artifacts = artifacts

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """``resources/list``: each enabled skill's SKILL.md."""
        library = self._library.of(self._sessions.of(ctx))
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=f"skill://{skill.name}/SKILL.md",
                    name=f"{skill.name}/SKILL.md",
                    description=skill.description,
                    mime_type="text/markdown",
                )
                for skill in library
                if library.is_enabled(skill.name)
            ]
        )

    async def list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: a skill's file and a session's artifact."""
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="skill://{name}/{path}",
                    name="skill file",
                    description="A file bundled with a skill (SKILL.md, references/…, scripts/…).",
                ),
                types.ResourceTemplate(
                    uri_template="artifact://{key}",
                    name="artifact",
                    description="A file a script of this session wrote (keys from its results).",
                ),
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """``resources/read``: a skill's file or one of the session's artifacts.

        Raises:
            MCPError: an unknown URI scheme or skill, a request without a session for an
                artifact, or a file that cannot be read.
        """
        uri = str(params.uri)
        if uri.startswith("artifact://"):
            session = self._sessions.of(ctx)
            if session is None:
                raise MCPError(types.INVALID_PARAMS, NO_SESSION)
            try:
                ref = await self._artifacts.find(session, uri)
                contents = await self._artifacts.contents(ref, uri)
            except (ToolError, ArtifactNotFoundError) as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            return types.ReadResourceResult(contents=[contents])
        if not uri.startswith("skill://"):
            raise MCPError(
                types.INVALID_PARAMS, f"unknown resource {uri!r}: skill:// or artifact://"
            )
        name, _, path = uri.removeprefix("skill://").partition("/")
        library = self._library.of(self._sessions.of(ctx))
        if library.canonical(name) is None or not library.is_enabled(name):
            raise MCPError(types.INVALID_PARAMS, f"no skill {name!r}")
        skill = library.get(name)
        try:
            text = await asyncio.to_thread(
                read_resource, skill, path, max_bytes=self._settings.skills.resource_max_bytes
            )
        except ResourceError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        mime = "text/markdown" if path.endswith(".md") else "text/plain"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )
