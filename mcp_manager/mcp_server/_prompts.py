"""The MCP front door's prompts: :class:`PromptHandler` serves :data:`CATALOG_PROMPT`, the
skill catalog a session sees, to put in front of a model (for a task, in the auto catalog
mode). ``SkillMcp`` registers the handlers.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._results import text
from mcp_manager.mcp_server._sessions import SessionStore

__all__ = ["CATALOG_PROMPT", "PromptHandler"]

CATALOG_PROMPT: Final = "skill_catalog"
"""The one prompt's name: the catalog, with an optional ``query`` argument."""


class PromptHandler:
    """The catalog prompt of each session's library."""

    def __init__(self, *, sessions: SessionStore, library: SessionLibrary) -> None:
        self._sessions = sessions
        self._library = library

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """``prompts/list``: the catalog prompt."""
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=CATALOG_PROMPT,
                    description="The skill catalog, to put in front of a model.",
                    arguments=[
                        types.PromptArgument(
                            name="query",
                            description="The task (auto catalog mode).",
                            required=False,
                        )
                    ],
                )
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """``prompts/get``: the session's catalog.

        Raises:
            MCPError: no such prompt.
        """
        if params.name != CATALOG_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name!r}")
        query = (params.arguments or {}).get("query")
        catalog = self._library.catalog(query or None, self._sessions.of(ctx))
        return types.GetPromptResult(
            description="The skills available through this server.",
            messages=[types.PromptMessage(role="user", content=text(catalog))],
        )
