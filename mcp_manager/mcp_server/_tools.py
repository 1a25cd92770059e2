"""The MCP front door's tools: :class:`ToolHandler` answers ``tools/list`` and ``tools/call``.

An agent run's tools, from the same rules (``skillweave.agent.disclosure``: names, schemas,
activation rules and refusal texts), per session: ``list_skills``, ``activate_skill`` (its
enum names what the session may activate now), ``read_skill_resource`` and
``run_skill_script`` (skills active in the session only, at the version it activated),
``search_skills`` (matches become activatable), and each activated executable skill's tools,
``<skill>__<tool>``, run with ``--run-json`` (``skillweave.sandbox.tool_schemas``). A call's
arguments are checked against the schema as offered before anything runs; a refusal is an
error result the model can act on. Activation and search send
``notifications/tools/list_changed``. ``SkillMcp`` registers the two handlers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcp_manager.mcp_server._activation import Activations
from mcp_manager.mcp_server._artifacts import SessionArtifacts
from mcp_manager.mcp_server._input_files import InputFiles
from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._results import ScriptFailedError, ToolError, text
from mcp_manager.mcp_server._runs import ScriptRuns
from mcp_manager.mcp_server._sessions import NO_SESSION, Session, SessionStore
from skillweave.agent import ActiveSkill, SkillTool, disclosure
from skillweave.config import Settings
from skillweave.errors import ResourceError
from skillweave.llm import ToolSpec
from skillweave.sandbox import run_json_args
from skillweave.skills import read_resource, render_entries

__all__ = ["ToolHandler"]

logger = logging.getLogger("skillweave.mcp")


class ToolHandler:
    """The tools each session sees, and their calls.

    Args:
        settings: the skills section's resource cap, read at each call.
        sessions: the session of each request.
        library: the skills each session sees.
        activations: activates a skill in a session.
        runs: runs scripts and finds pinned skills.
        artifacts: the session's artifacts a script takes as inputs.
        input_files: the client's own files a script takes as inputs.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        sessions: SessionStore,
        library: SessionLibrary,
        activations: Activations,
        runs: ScriptRuns,
        artifacts: SessionArtifacts,
        input_files: InputFiles,
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._library = library
        self._activations = activations
        self._runs = runs
        self._artifacts = artifacts
        self._input_files = input_files

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """``tools/list``: the session's tools (those that run scripts are not read-only)."""
        session = self._sessions.of(ctx)
        active = session.active if session is not None else {}
        runs = {disclosure.RUN_SKILL_SCRIPT, *(t.name for s in active.values() for t in s.tools)}
        return types.ListToolsResult(
            tools=[_tool(spec, read_only=spec.name not in runs) for spec in self._specs(session)]
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """``tools/call``: a tool's result, or its refusal as an error result.

        Raises:
            MCPError: no such tool for this session, or the
                :data:`~._results.UNAVAILABLE` refusal.
        """
        arguments = dict(params.arguments or {})
        session = self._sessions.of(ctx)
        handlers: dict[str, Callable[..., Awaitable[list[Any]]]] = {
            disclosure.LIST_SKILLS: self._list,
            disclosure.ACTIVATE_SKILL: self._activate,
            disclosure.READ_SKILL_RESOURCE: self._read,
            disclosure.RUN_SKILL_SCRIPT: self._run,
            disclosure.SEARCH_SKILLS: self._search,
        }
        handler = handlers.get(params.name)
        if handler is None:
            found = disclosure.find_skill_tool(session.active, params.name) if session else None
            if session is None or found is None:
                offered = (await self.list_tools(ctx, None)).tools
                message = disclosure.unknown_tool(params.name, [tool.name for tool in offered])
                raise MCPError(types.INVALID_PARAMS, message)
            handler = functools.partial(self._skill_tool, tool=found)
        # Checked before anything runs, as a run's loop checks them (disclosure's one rule).
        if refusal := self._arguments_refusal(session, params.name, arguments):
            return types.CallToolResult(content=[text(refusal)], is_error=True)
        try:
            content = await handler(session, arguments)
        except ScriptFailedError as exc:
            return types.CallToolResult(content=exc.content, is_error=True)
        except ToolError as exc:
            return types.CallToolResult(content=[text(str(exc))], is_error=True)
        if params.name in (disclosure.ACTIVATE_SKILL, disclosure.SEARCH_SKILLS):
            await _tools_changed(ctx)  # the enums (and a skill's tools) changed
        return types.CallToolResult(content=content)

    def _specs(self, session: Session | None) -> tuple[ToolSpec, ...]:
        """The tools offered to `session`, as the agent loop would offer them."""
        active = session.active if session is not None else {}
        return disclosure.front_door_specs(
            roots=self._library.roots(session),
            active=active,
            local_paths=self._input_files.local_paths(session),
        )

    def _arguments_refusal(
        self, session: Session | None, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        """Why a call's arguments do not match the tool's schema as offered (None: they do)."""
        spec = next((spec for spec in self._specs(session) if spec.name == name), None)
        if spec is None:
            return None
        return disclosure.arguments_refusal(name, arguments, spec.input_schema)

    async def _list(self, session: Session | None, args: Mapping[str, Any]) -> list[Any]:
        query = _optional_string(args, "query")
        catalog = self._library.catalog(query, session)
        return [text(catalog or "No skills are available.")]

    async def _activate(self, session: Session | None, args: Mapping[str, Any]) -> list[Any]:
        name = _string(disclosure.ACTIVATE_SKILL, args, "name")
        if session is None:
            raise ToolError(f"Cannot activate {name!r}: {NO_SESSION}.")
        return await self._activations.activate(session, name)

    async def _search(self, session: Session | None, args: Mapping[str, Any]) -> list[Any]:
        query = _string(disclosure.SEARCH_SKILLS, args, "query")
        top_k = args.get("top_k", 5)
        limit = disclosure.SEARCH_TOP_K_MAX
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= limit:
            raise ToolError(disclosure.TOP_K_INVALID)
        library = self._library.of(session)
        hits = library.search(query, top_k=top_k)
        if not hits:
            return [text("No skill matches that query; try other words.")]
        if session is not None:
            session.found += [hit.name for hit in hits if hit.name not in session.found]
        return [text(render_entries([library.get(hit.name) for hit in hits]))]

    async def _read(self, session: Session | None, args: Mapping[str, Any]) -> list[Any]:
        tool = disclosure.READ_SKILL_RESOURCE
        active = self._active(session, _string(tool, args, "skill"), "read a skill's file")
        path = _string(tool, args, "path")
        skill = await self._runs.pinned(active)
        try:
            content = await asyncio.to_thread(
                read_resource, skill, path, max_bytes=self._settings.skills.resource_max_bytes
            )
        except ResourceError as exc:
            raise ToolError(f"Cannot read that file: {exc}") from None
        return [text(content)]

    async def _run(self, session: Session | None, args: Mapping[str, Any]) -> list[Any]:
        tool = disclosure.RUN_SKILL_SCRIPT
        active = self._active(session, _string(tool, args, "skill"), "run a skill's script")
        assert session is not None  # _active refused a request without a session
        script = _string(tool, args, "script")
        arguments = _strings(args.get("args"), disclosure.ARGS_NOT_STRINGS)
        keys_ = _strings(args.get("inputs"), disclosure.artifact_list_needed("inputs"))
        inputs = [await self._artifacts.find(session, key) for key in keys_]
        inputs += await self._input_files.stored(session, args.get(disclosure.INPUT_FILES))
        return await self._runs.execute(
            session, active, script=script, args=arguments, inputs=inputs, tool=None
        )

    async def _skill_tool(
        self,
        session: Session | None,
        args: Mapping[str, Any],
        *,
        tool: tuple[ActiveSkill, SkillTool],
    ) -> list[Any]:
        """An executable skill's tool: its script with ``--run-json`` (and ``--tool``)."""
        assert session is not None  # found among the session's active skills
        active, found = tool
        arguments = dict(args)
        keys_ = _strings(
            arguments.pop(disclosure.INPUT_ARTIFACTS, None),
            disclosure.artifact_list_needed(disclosure.INPUT_ARTIFACTS),
        )
        inputs = [await self._artifacts.find(session, key) for key in keys_]
        if disclosure.INPUT_FILES not in (found.input_schema.get("properties") or {}):
            files = arguments.pop(disclosure.INPUT_FILES, None)
            inputs += await self._input_files.stored(session, files)
        return await self._runs.execute(
            session,
            active,
            script=found.script,
            args=run_json_args(found.tool, arguments, shared_script=found.shared_script),
            inputs=inputs,
            tool=found,
        )

    def _active(self, session: Session | None, name: str, action: str) -> ActiveSkill:
        if session is None:
            raise ToolError(f"Cannot {action}: {NO_SESSION}.")
        skill = session.active.get(self._library.of(session).canonical(name) or name)
        if skill is None:
            raise ToolError(disclosure.not_active(name, self._library.attachable(session)))
        return skill


def _tool(spec: ToolSpec, *, read_only: bool) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(read_only_hint=read_only, open_world_hint=False),
    )


async def _tools_changed(ctx: ServerRequestContext[Any]) -> None:
    """Tell the client its tool list changed (an activation changes the enums and may add a
    skill's tools), on the activation's own stream: a client need not hold a standalone one.
    Best effort: a client that cannot hear it still sees the next list."""
    try:
        await ctx.session.send_notification(
            types.ToolListChangedNotification(), related_request_id=ctx.request_id
        )
    except Exception:  # the transport's problem, not the activation's
        logger.debug("could not send tools/list_changed", exc_info=True)


def _string(tool: str, args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(disclosure.needs_string(tool, name))
    return value.strip()


def _optional_string(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"{name!r} must be a string.")
    return value


def _strings(value: object, refusal: str) -> list[str]:
    value = value or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ToolError(refusal)
    return value
