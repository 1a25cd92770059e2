"""The front door's composition: :class:`SkillMcp` builds the session store, the library as
sessions see it, the handlers of each surface (tools, resources, prompts) and their
collaborators (activations, script runs, artifacts, input files), and registers the handlers
on the SDK's low-level server. The manager's app (``/mcp``) and ``skillweave mcp`` (stdio)
build one; the package's ``__init__`` describes the door.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_manager.mcp_server._activation import Activations
from mcp_manager.mcp_server._artifacts import SessionArtifacts
from mcp_manager.mcp_server._input_files import InputFiles
from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._prompts import PromptHandler
from mcp_manager.mcp_server._resources import ResourceHandler
from mcp_manager.mcp_server._runs import RunScript, ScriptRuns
from mcp_manager.mcp_server._sessions import SessionStore
from mcp_manager.mcp_server._tools import ToolHandler
from skillweave import __version__
from skillweave.agent import disclosure
from skillweave.config import Settings
from skillweave.skills import SkillRegistry
from skillweave.storage import ArtifactStore

__all__ = ["SkillMcp"]


class _Server(Server[Any]):
    """The SDK's low-level server, announcing ``tools.listChanged``: the tools a session sees
    change as it activates skills."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class SkillMcp:
    """The skill library of `registry` over MCP, scripts run by `run_script`.

    Args:
        settings: the skills section (catalog mode, budgets, resource caps) and the sandbox
            timeout.
        registry: the skills served.
        store: where the manager keeps artifacts (script outputs are read from it).
        run_script: runs one script in a sandbox.
        scope: the skills a session sees (names, ``ns.name``, ``ns.*``; None: all). Over HTTP
            a client may set its own with the URL's ``skills`` parameter (``/mcp?skills=web.*``).
        file_roots: folders whose files a client over stdio may give a script by local path
            (``input_files``); none: inline content only.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        registry: SkillRegistry,
        store: ArtifactStore,
        run_script: RunScript,
        scope: Sequence[str] | None = None,
        file_roots: Sequence[Path] = (),
    ) -> None:
        self.settings = settings
        self.scope = tuple(scope) if scope is not None else None
        self.file_roots = tuple(root.resolve() for root in file_roots)
        self.store = store
        self.run_script = run_script
        self.sessions = SessionStore(scope=self.scope)
        self._library = SessionLibrary(settings, registry, scope=self.scope)
        artifacts = SessionArtifacts(settings, store)
        runs = ScriptRuns(
            settings, store=store, library=self._library, run_script=run_script, artifacts=artifacts
        )
        self._activations = Activations(settings, store=store, library=self._library, runs=runs)
        tools = ToolHandler(
            settings,
            sessions=self.sessions,
            library=self._library,
            activations=self._activations,
            runs=runs,
            artifacts=artifacts,
            input_files=InputFiles(settings, store, file_roots=self.file_roots),
        )
        resources = ResourceHandler(
            settings, sessions=self.sessions, library=self._library, artifacts=artifacts
        )
        prompts = PromptHandler(sessions=self.sessions, library=self._library)
        self.server: Server[Any] = _Server(
            "skillweave",
            version=__version__,
            instructions=disclosure.FRONT_DOOR_INSTRUCTIONS,
            on_list_tools=tools.list_tools,
            on_call_tool=tools.call_tool,
            on_list_resources=resources.list_resources,
            on_list_resource_templates=resources.list_templates,
            on_read_resource=resources.read_resource,
            on_list_prompts=prompts.list_prompts,
            on_get_prompt=prompts.get_prompt,
        )
        self.server.add_request_handler("server/discover", types.RequestParams, self._discover)

    @property
    def registry(self) -> SkillRegistry:
        """The skills served now."""
        return self._library.registry

    def use_registry(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on (sessions keep the versions they activated)."""
        self._library.use(registry)

    async def aclose(self) -> None:
        """Close the door's audit log: its queued records are written and its newest one is
        anchored in a checkpoint (call it when the door stops serving)."""
        await self._activations.aclose()

    async def _discover(
        self, ctx: ServerRequestContext[Any], params: types.RequestParams | None
    ) -> types.DiscoverResult:
        """The 2026-07-28 protocol's entry. Over HTTP it has no sessions, so it is refused
        and clients fall back to the session handshake; over stdio the one connection is the
        session in either protocol, so it is served."""
        if ctx.request is not None:
            raise MCPError(
                types.METHOD_NOT_FOUND,
                "skillweave keeps skill activations per session: use the session handshake",
            )
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=self.server.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=self.server.instructions,
        )
