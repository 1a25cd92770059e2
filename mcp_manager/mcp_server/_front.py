"""The MCP front door: a skill library and its sandboxes over the Model Context Protocol.

:class:`SkillMcp` is a server of the official ``mcp`` SDK (its low-level ``Server``) that any
MCP client can use without our agent loop. The manager mounts it at ``/mcp`` (streamable HTTP,
behind the manager's bearer token); ``skillweave mcp`` serves it over stdio.

Tools: an agent job's, from the same rules (``skillweave.agent.disclosure``: names, schemas,
activation rules and refusal texts), per session: ``list_skills`` (the tier-1 catalog in the
configured catalog mode: tree roots, then the children of what the session activated),
``activate_skill`` (the ``<skill_content>`` payload; the enum names what the session may
activate now, so a sub-skill appears once its parent is active; a repeat gets "already
active"), ``read_skill_resource`` and ``run_skill_script`` (for skills active in the session
only, at the version the session activated), ``search_skills`` (matches become activatable),
and each activated executable skill's tools, ``<skill>__<tool>`` from its scripts'
``--help-json``, run with ``--run-json`` (``skillweave.sandbox.tool_schemas``). Activation
sends ``notifications/tools/list_changed``. Runs go through the warm pool, waiting while it
is full for up to ``SANDBOX__QUEUE_SECONDS`` (``skillweave.sandbox.queue``, as jobs do); output
files come back as embedded resources, or as links to ``artifact://`` resources when large.
Resources: every skill file as ``skill://NAME/PATH`` (listed: each skill's SKILL.md; the rest
through the template; the library as it is now), and a session's artifacts as
``artifact://KEY``. Prompt: ``skill_catalog``.

Pinned versions: activation pins the skill's version for the session (and publishes its
package); reads and runs use that version even after the library changed
(``skillweave.sandbox.pinned``), and a version no longer available is a clear tool error.

Activation state is per MCP session: the ``Mcp-Session-Id`` of a streamable-HTTP session, or
the one connection of a stdio server (in either protocol era). Over HTTP the 2026-07-28
protocol has no sessions, so the server does not offer it there (``server/discover`` answers
"method not found"): clients fall back to the session handshake. A request that still arrives
without a session may list, search and read the catalog, but cannot activate a skill. Each
session's script runs belong to a run of its own (``mcp-<session>``), so one session cannot
pass another's artifacts to a script.

Audit: each activation is an ``activation`` record of the audit log, written before the
session counts the skill as active. When the log cannot be written, or a run cannot be
started because the manager cannot record it (``mcp_manager.executions``: refused before
anything runs, and waited for up to ``SANDBOX__QUEUE_SECONDS`` like a full pool), the call is
refused with a JSON-RPC error, code :data:`UNAVAILABLE`, whose ``data`` is the problem
(``skillweave.sandbox.problems``: type ``urn:skillweave:problem:audit_unavailable``,
``retry_after``, the store's error in ``detail``): nothing was done, the client asks again
later. Never a tool result that claims it was done, never an internal error.
:meth:`SkillMcp.aclose` anchors the log's last records; whoever serves the door calls it.

Configured skill secrets are masked (``skillweave.sandbox.masking``) in every script result
this front door renders and in every stdout/stderr log artifact it hands out, on top of the
manager's masking at the source: what was stored before masking existed leaves masked too.
Output files are handed out as the script wrote them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
import secrets
import socket
import stat
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_manager.cache import BoundedCache
from mcp_manager.executions import audit_cause
from skillweave import __version__
from skillweave.agent import disclosure
from skillweave.agent.state import ActiveSkill, SkillTool
from skillweave.config import Settings
from skillweave.errors import (
    ArtifactNotFoundError,
    AuditLogError,
    AuditUnavailableError,
    ExecutionRejectedError,
    InvalidKeyError,
    ManagerRefusedError,
    ManagerUnreachableError,
    PackageError,
    ResourceError,
    SandboxError,
    SkillFormatError,
    SkillNotFoundError,
)
from skillweave.llm.messages import ToolSpec
from skillweave.sandbox.masking import is_run_log, mask_result, output_masker
from skillweave.sandbox.models import (
    ExecuteRequest,
    ExecutionResult,
    render_result,
)
from skillweave.sandbox.packages import publish_skill
from skillweave.sandbox.pinned import skill_at
from skillweave.sandbox.problems import AUDIT_RETRY_SECONDS, Problem, ProblemCode
from skillweave.sandbox.queue import queued
from skillweave.sandbox.tool_schemas import discover_tool_schemas, run_json_args
from skillweave.sandbox.validation import check_path
from skillweave.skills import (
    Skill,
    SkillRegistry,
    ToolSchema,
    build_catalog,
    declared_tool_scripts,
    read_resource,
    render_activation,
)
from skillweave.skills.admission import activation_trust
from skillweave.skills.allowed_tools import skill_allowance
from skillweave.skills.catalog import render_entries
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.base import ArtifactRef, ArtifactStore
from skillweave.storage.identity import store_identity

__all__ = ["UNAVAILABLE", "RunScript", "SkillMcp"]

logger = logging.getLogger("skillweave.mcp")

RunScript = Callable[[ExecuteRequest], Awaitable[ExecutionResult]]
"""How a script is run: the manager's execution service, or a client of a manager."""

CATALOG_PROMPT: Final = "skill_catalog"

_MAX_SESSIONS: Final = 4_096  # sessions whose activations are kept (least recently used go)
_EMBED_MAX_BYTES: Final = 256 * 1024  # larger outputs come back as resource links
_OUTPUT_CHARS: Final = 16_000  # stdout/stderr shown inline (the full text is an artifact)
_NO_SESSION: Final = (
    "this request has no MCP session, and skill activations are kept per session: connect "
    "with the session handshake (streamable HTTP with Mcp-Session-Id, or stdio)"
)
_SCHEMA_CACHE: Final = 1_024  # (skill, version, script) tool lists kept
_VIEWS: Final = 64  # scoped views of the library kept
_FILES_SHAPE: Final = (
    f"{disclosure.INPUT_FILES} is a list of {{name, content | content_base64 | path}}: name is "
    "where the file lands under inputs/ (a plain relative path)"
)
UNAVAILABLE: Final = -32050
"""The JSON-RPC error code of a call refused for now, nothing done (an implementation-defined
server error, in -32000..-32099): its ``data`` is the problem, typed by its ``error`` code
(``audit_unavailable``), with ``retry_after``. Ask again after it."""
SCOPE_PARAMETER: Final = "skills"
"""The query parameter of the MCP URL that scopes a session: ``/mcp?skills=web.*,notes``."""


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


@dataclass
class _Session:
    """What one MCP session has done: its activations and its run."""

    run_id: str
    active: dict[str, ActiveSkill] = field(default_factory=dict)  # pinned at activation
    found: list[str] = field(default_factory=list)  # made activatable by search_skills
    scope: tuple[str, ...] | None = None  # the skills it may see (names, ns.name, ns.*)
    local: bool = False  # over stdio: the client's machine is this process's


class _ToolError(Exception):
    """A refusal the client (and its model) can act on: returned as an error result."""


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
        self.registry = registry
        self.scope = tuple(scope) if scope is not None else None
        self.file_roots = tuple(root.resolve() for root in file_roots)
        self._views: BoundedCache[tuple[SkillRegistry, tuple[str, ...]], SkillRegistry] = (
            BoundedCache(max_entries=_VIEWS)
        )
        self.store = store
        self.run_script = run_script
        self._audit = AuditLog.from_settings(
            settings.audit, store, actor=f"mcp@{socket.gethostname()}"
        )
        self._sessions: BoundedCache[str, _Session] = BoundedCache(max_entries=_MAX_SESSIONS)
        self._schemas: BoundedCache[tuple[str, str, str], tuple[ToolSchema, ...] | str] = (
            BoundedCache(max_entries=_SCHEMA_CACHE)
        )
        self._stdio_key = f"stdio-{secrets.token_hex(8)}"
        self._masker = output_masker(
            {
                skill: {name: value.get_secret_value() for name, value in values.items()}
                for skill, values in settings.sandbox.skill_secrets.items()
            }
        )  # the manager warns about values too short to mask
        self.server: Server[Any] = _Server(
            "skillweave",
            version=__version__,
            instructions=disclosure.FRONT_DOOR_INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        self.server.add_request_handler("server/discover", types.RequestParams, self._discover)

    def use_registry(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on (sessions keep the versions they activated)."""
        self.registry = registry

    async def aclose(self) -> None:
        """Close the door's audit log: its queued records are written and its newest one is
        anchored in a checkpoint (call it when the door stops serving)."""
        await self._audit.aclose()

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

    # --- sessions ----------------------------------------------------------------------------

    def _session_key(self, ctx: ServerRequestContext[Any]) -> str | None:
        request = ctx.request
        if request is None:  # stdio: one connection, one session
            return self._stdio_key
        headers = getattr(request, "headers", None)
        return headers.get("mcp-session-id") if headers is not None else None

    def _session(self, ctx: ServerRequestContext[Any]) -> _Session | None:
        key = self._session_key(ctx)
        if key is None:
            return None
        session = self._sessions.get(key)
        if session is None:
            digest = keys.execution_digest(key)[:24]
            session = _Session(
                run_id=f"mcp-{digest}", scope=self._scope_of(ctx), local=ctx.request is None
            )
            self._sessions.put(key, session)
        return session

    def _scope_of(self, ctx: ServerRequestContext[Any]) -> tuple[str, ...] | None:
        """The skills a new session may see: the URL's ``skills`` parameter, else the
        server's scope."""
        params = getattr(ctx.request, "query_params", None)
        given = params.get(SCOPE_PARAMETER) if params is not None else None
        if given is None:
            return self.scope
        return tuple(part.strip() for part in given.split(",") if part.strip())

    def _library(self, session: _Session | None) -> SkillRegistry:
        """The skills `session` sees: the library, restricted to its scope.

        Raises:
            MCPError: the scope names no skill (a name or namespace the library lacks).
        """
        scope = session.scope if session is not None else self.scope
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

    def _roots(self, session: _Session | None) -> list[str]:
        """What a session may activate without opening a tree: the enabled roots, then what
        ``search_skills`` found for it."""
        registry = self._library(session)
        names = list(registry.attachable())
        if session is not None:
            names += [n for n in session.found if n not in names and registry.is_enabled(n)]
        return names

    def _attachable(self, session: _Session | None) -> tuple[str, ...]:
        """What ``activate_skill`` accepts now (the roots, then children of active parents)."""
        return disclosure.attachable(self._roots(session), session.active if session else {})

    # --- tools -------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = self._session(ctx)
        active = session.active if session is not None else {}
        specs = disclosure.front_door_specs(
            roots=self._roots(session), active=active, local_paths=self._local_paths(session)
        )
        runs = {disclosure.RUN_SKILL_SCRIPT, *(t.name for s in active.values() for t in s.tools)}
        return types.ListToolsResult(
            tools=[_tool(spec, read_only=spec.name not in runs) for spec in specs]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        session = self._session(ctx)
        handlers: dict[str, Callable[..., Awaitable[list[Any]]]] = {
            disclosure.LIST_SKILLS: self._tool_list,
            disclosure.ACTIVATE_SKILL: self._tool_activate,
            disclosure.READ_SKILL_RESOURCE: self._tool_read,
            disclosure.RUN_SKILL_SCRIPT: self._tool_run,
            disclosure.SEARCH_SKILLS: self._tool_search,
        }
        handler = handlers.get(params.name)
        if handler is None:
            found = disclosure.find_skill_tool(session.active, params.name) if session else None
            if session is None or found is None:
                offered = (await self._list_tools(ctx, None)).tools
                message = disclosure.unknown_tool(params.name, [tool.name for tool in offered])
                raise MCPError(types.INVALID_PARAMS, message)
            handler = functools.partial(self._tool_skill, tool=found)
        # Checked before anything runs, as a job's loop checks them (disclosure's one rule).
        if refusal := self._arguments_refusal(session, params.name, arguments):
            return types.CallToolResult(content=[_text(refusal)], is_error=True)
        try:
            content = await handler(session, arguments)
        except _ToolErrorWith as exc:
            return types.CallToolResult(content=exc.content, is_error=True)
        except _ToolError as exc:
            return types.CallToolResult(content=[_text(str(exc))], is_error=True)
        if params.name in (disclosure.ACTIVATE_SKILL, disclosure.SEARCH_SKILLS):
            await _tools_changed(ctx)  # the enums (and a skill's tools) changed
        return types.CallToolResult(content=content)

    def _arguments_refusal(
        self, session: _Session | None, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        """Why a call's arguments do not match the tool's schema as offered (None: they do)."""
        active = session.active if session is not None else {}
        specs = disclosure.front_door_specs(
            roots=self._roots(session), active=active, local_paths=self._local_paths(session)
        )
        spec = next((spec for spec in specs if spec.name == name), None)
        if spec is None:
            return None
        return disclosure.arguments_refusal(name, arguments, spec.input_schema)

    async def _tool_list(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        query = _optional_string(args, "query")
        text = self._catalog(query, session)
        return [_text(text or "No skills are available.")]

    def _catalog(self, query: str | None, session: _Session | None) -> str:
        skills = self.settings.skills
        library = self._library(session)
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
                for n in self._attachable(session)
                if n not in catalog.names and n not in session.active and library.is_enabled(n)
            ]
            if children:
                text += "\nActivatable now (sub-skills and search results):\n"
                text += render_entries([library.get(n) for n in children])
        return text

    async def _tool_activate(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        name = _string(disclosure.ACTIVATE_SKILL, args, "name")
        if session is None:
            raise _ToolError(f"Cannot activate {name!r}: {_NO_SESSION}.")
        library = self._library(session)
        name = library.canonical(name) or name  # web.scraper for scraper
        refusal = disclosure.activation_refusal(
            name, roots=self._roots(session), active=session.active
        )
        if refusal is None and not library.is_enabled(name):  # gone since its parent
            refusal = disclosure.cannot_activate(name, self._attachable(session))
        if refusal is not None:
            raise _ToolError(refusal)
        skill = library.get(name)
        # The signature policy, as a job's activation applies it (a refusal is a tool error).
        refused, warning = await activation_trust(
            self.store, skill, self.settings.skills.trust, own=True
        )
        if refused is not None:
            raise _ToolError(f"The skill {name!r} cannot be used: {refused}")
        notes: list[str] = [warning] if warning is not None else []
        try:
            await publish_skill(self.store, skill)  # what the manager runs its scripts from
        except (PackageError, InvalidKeyError) as exc:
            notes.append(disclosure.package_refused(exc))
        tools, notes = await disclosure.activation_tools(
            declared_tool_scripts(skill),
            lambda script: self._tool_schemas(skill, script),
            skill=name,
            taken=disclosure.registered_tools(session.active),
            notes=notes,
        )
        allowed, warnings = skill_allowance(skill.allowed_tools)
        if allowed is not None:
            notes += [disclosure.allowance_note(allowed), *warnings]
        children = library.children_of(name, enabled_only=True)
        text = await asyncio.to_thread(
            render_activation,
            skill,
            children=children,
            max_listed=self.settings.skills.activation_resource_listing,
        )
        try:  # recorded before the session counts it: an activation is never unrecorded
            await self._audit.record(
                "activation", skill=name, version=skill.version, job=session.run_id
            )
        except AuditLogError as exc:
            raise _unavailable(
                f"the audit log cannot be written ({audit_cause(exc)}): {name!r} was not "
                "activated; ask again once the store is back",
                retry_after=AUDIT_RETRY_SECONDS,
            ) from exc
        session.active[name] = ActiveSkill(
            name=name,
            version=skill.version,
            children=tuple(child.name for child in children),
            tools=tuple(tools),
            allowed=allowed,
        )
        return [_text(text + disclosure.activation_footer(tools, notes))]

    async def _tool_schemas(self, skill: Skill, script: str) -> tuple[ToolSchema, ...] | str:
        """The tools `script` offers, from ``--help-json`` (run once per skill version: the
        manager keeps the result under a stable execution id, and this server a copy)."""
        key = (skill.name, skill.version, script)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        with _sandbox_errors():
            found = await discover_tool_schemas(
                self._queued, skill=skill.name, version=skill.version, script=script
            )
        self._schemas.put(key, found)
        return found

    async def _queued(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request`, waiting while the pool is full or the manager is down or refuses
        this door (as a job's script step does). The request names this door's store: a
        manager on another one refuses it instead of looking for its packages and inputs
        where they are not."""
        request = request.model_copy(update={"store_id": await store_identity(self.store)})
        return await queued(
            lambda: self.run_script(request),
            queue_seconds=self.settings.sandbox.queue_seconds,
            call=f"script {request.skill}/{request.script}",
        )

    def _active(self, session: _Session | None, name: str, action: str) -> ActiveSkill:
        if session is None:
            raise _ToolError(f"Cannot {action}: {_NO_SESSION}.")
        skill = session.active.get(self._library(session).canonical(name) or name)
        if skill is None:
            raise _ToolError(disclosure.not_active(name, self._attachable(session)))
        return skill

    async def _pinned(self, active: ActiveSkill) -> Skill:
        """The skill at the version the session activated."""
        try:
            return await skill_at(
                self.store,
                self.registry,
                active.name,
                active.version,
                pinned_dir=self.settings.skills.pinned_dir,
            )
        except (ArtifactNotFoundError, SkillFormatError, PackageError):
            raise _ToolError(
                f"Skill {active.name!r} changed since this session activated it, and the "
                f"version it activated ({active.version[:12]}) is no longer available. Start a "
                "new session to use the skill as it is now."
            ) from None

    async def _tool_read(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        tool = disclosure.READ_SKILL_RESOURCE
        active = self._active(session, _string(tool, args, "skill"), "read a skill's file")
        path = _string(tool, args, "path")
        skill = await self._pinned(active)
        try:
            text = await asyncio.to_thread(
                read_resource, skill, path, max_bytes=self.settings.skills.resource_max_bytes
            )
        except ResourceError as exc:
            raise _ToolError(f"Cannot read that file: {exc}") from None
        return [_text(text)]

    async def _tool_run(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        tool = disclosure.RUN_SKILL_SCRIPT
        active = self._active(session, _string(tool, args, "skill"), "run a skill's script")
        assert session is not None  # _active refused a request without a session
        script = _string(tool, args, "script")
        arguments = _strings(args.get("args"), disclosure.ARGS_NOT_STRINGS)
        keys_ = _strings(args.get("inputs"), disclosure.artifact_list_needed("inputs"))
        inputs = [await self._input(session, key) for key in keys_]
        inputs += await self._own_files(session, args.get(disclosure.INPUT_FILES))
        return await self._execute(
            session, active, script=script, args=arguments, inputs=inputs, tool=None
        )

    async def _tool_skill(
        self,
        session: _Session | None,
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
        inputs = [await self._input(session, key) for key in keys_]
        if disclosure.INPUT_FILES not in (found.input_schema.get("properties") or {}):
            files = arguments.pop(disclosure.INPUT_FILES, None)
            inputs += await self._own_files(session, files)
        return await self._execute(
            session,
            active,
            script=found.script,
            args=run_json_args(found.tool, arguments, shared_script=found.shared_script),
            inputs=inputs,
            tool=found,
        )

    async def _execute(
        self,
        session: _Session,
        active: ActiveSkill,
        *,
        script: str,
        args: list[str],
        inputs: list[ArtifactRef],
        tool: SkillTool | None,
    ) -> list[Any]:
        """Run `script` of `active` at its pinned version (for `tool`, a skill tool's); its
        result and output files. A run the session's active skills' allowed-tools do not
        allow is refused first."""
        if not disclosure.permits(session.active, skill=active.name, script=script, tool=tool):
            what = tool.name if tool is not None else f"Running {active.name}/{script}"
            raise _ToolError(disclosure.not_permitted(session.active, what))
        await self._pinned(active)  # a version no longer available is refused before the run
        try:
            request = ExecuteRequest(
                execution_id=f"mcp/{session.run_id}/{uuid.uuid4().hex}",
                run_id=session.run_id,
                skill=active.name,
                version=active.version,
                script=script,
                args=args,
                inputs=inputs,  # no limits: the manager's own
            )
        except ValidationError as exc:
            raise _ToolError(f"The script was not run: {_invalid(exc)}") from None
        started = time.monotonic()
        with _sandbox_errors():
            result = await self._queued(request)
        logger.info(
            "mcp run %s %s: %s in %.0f ms",
            active.name,
            script,
            result.status,
            (time.monotonic() - started) * 1000,
        )
        result = mask_result(result, self._masker)
        content: list[Any] = [_text(render_result(result, inline_chars=_OUTPUT_CHARS))]
        for output in result.outputs:
            content.append(await self._output(output.ref))
        if result.status != "succeeded":
            raise _ToolErrorWith(content)
        return content

    def _local_paths(self, session: _Session | None) -> bool:
        """Whether `session` may give files by local path: over stdio, with folders allowed."""
        return session is not None and session.local and bool(self.file_roots)

    async def _own_files(self, session: _Session, given: object) -> list[ArtifactRef]:
        """The client's own files (``input_files``), stored as inputs of the session's run.

        Raises:
            _ToolError: a file that is not one: no name or a bad one, not exactly one source,
                invalid base64, a path over HTTP or outside the allowed folders, too large.
        """
        if given is None:
            return []
        if not isinstance(given, list) or not all(isinstance(item, dict) for item in given):
            raise _ToolError(_FILES_SHAPE)
        refs = []
        for index, item in enumerate(given):
            where = f"{disclosure.INPUT_FILES}[{index}]"
            name = item.get("name")
            if not isinstance(name, str):
                raise _ToolError(f"{where}: no name; {_FILES_SHAPE}")
            try:
                check_path(name, f"{where}.name")
            except ExecutionRejectedError as exc:
                raise _ToolError(f"{exc.reason}; {_FILES_SHAPE}") from None
            data = await self._file_content(session, item, where)
            refs.append(await self.store.put_bytes(keys.run_input_key(session.run_id, name), data))
        return refs

    async def _file_content(self, session: _Session, item: Mapping[str, Any], where: str) -> bytes:
        limit = self.settings.sandbox.mcp_input_max_bytes
        sources = [key for key in ("content", "content_base64", "path") if key in item]
        if len(sources) != 1:
            raise _ToolError(f"{where}: give exactly one of content, content_base64 or path.")
        match sources[0]:
            case "content":
                data = str(item["content"]).encode("utf-8", "surrogatepass")
            case "content_base64":
                try:
                    data = base64.b64decode(str(item["content_base64"]), validate=True)
                except ValueError:
                    raise _ToolError(f"{where}.content_base64 is not valid base64.") from None
            case _:
                data = await self._local_file(session, str(item["path"]), where, limit)
        if len(data) > limit:
            raise _ToolError(
                f"{where} has {len(data):,} bytes; a file may have at most {limit:,} "
                "(SANDBOX__MCP_INPUT_MAX_BYTES)."
            )
        return data

    async def _local_file(self, session: _Session, path: str, where: str, limit: int) -> bytes:
        """A file of the client's machine (stdio only), inside an allowed folder."""
        if not session.local:
            raise _ToolError(
                f"{where}.path: a local path works only over stdio (skillweave mcp); over "
                "HTTP the server cannot read your files: send content or content_base64."
            )
        if not self.file_roots:
            raise _ToolError(
                f"{where}.path: this server reads no local files; start it with "
                "skillweave mcp --files-root DIR, or send the content inline."
            )
        resolved = Path(path).expanduser().resolve()
        if not any(resolved.is_relative_to(root) for root in self.file_roots):
            allowed = ", ".join(str(root) for root in self.file_roots)
            raise _ToolError(f"{where}.path {path!r} is outside the allowed folders ({allowed}).")
        try:
            info = await asyncio.to_thread(resolved.stat)
        except OSError as exc:
            raise _ToolError(f"{where}.path {path!r} cannot be read: {exc.strerror}.") from None
        if not stat.S_ISREG(info.st_mode):
            raise _ToolError(f"{where}.path {path!r} is not a regular file.")
        if info.st_size > limit:
            raise _ToolError(
                f"{where}.path {path!r} has {info.st_size:,} bytes; a file may have at most "
                f"{limit:,} (SANDBOX__MCP_INPUT_MAX_BYTES)."
            )
        return await asyncio.to_thread(resolved.read_bytes)

    async def _input(self, session: _Session, key: str) -> ArtifactRef:
        key = key.removeprefix("artifact://")
        if not key.startswith(keys.run_prefix(session.run_id)):
            raise _ToolError(
                f"{key!r} is not an artifact of this session: pass keys from this session's "
                "script results."
            )
        try:
            ref = await self.store.stat(key)
        except InvalidKeyError as exc:
            raise _ToolError(f"{key!r} is not a valid artifact key: {exc.reason}") from None
        if ref is None:
            raise _ToolError(f"No artifact {key!r}.")
        return ref

    async def _output(self, ref: ArtifactRef) -> Any:
        uri = f"artifact://{ref.key}"
        name = ref.key.rpartition("/")[2]
        if ref.size > _EMBED_MAX_BYTES:
            return types.ResourceLink(
                type="resource_link", uri=uri, name=name, size=ref.size, mime_type=ref.content_type
            )
        return types.EmbeddedResource(type="resource", resource=await self._contents(ref, uri))

    async def _contents(self, ref: ArtifactRef, uri: str) -> Any:
        data = await self.store.get_bytes(ref)
        if is_run_log(ref.key):  # stdout/stderr: masked (output files go as written)
            data = await asyncio.to_thread(self._masker.mask_bytes, data, cut=True)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            return types.BlobResourceContents(uri=uri, mime_type=ref.content_type, blob=blob)
        mime = ref.content_type if ref.content_type != "application/octet-stream" else None
        return types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)

    async def _tool_search(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        query = _string(disclosure.SEARCH_SKILLS, args, "query")
        top_k = args.get("top_k", 5)
        limit = disclosure.SEARCH_TOP_K_MAX
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= limit:
            raise _ToolError(disclosure.TOP_K_INVALID)
        library = self._library(session)
        hits = library.search(query, top_k=top_k)
        if not hits:
            return [_text("No skill matches that query; try other words.")]
        if session is not None:
            session.found += [hit.name for hit in hits if hit.name not in session.found]
        return [_text(render_entries([library.get(hit.name) for hit in hits]))]

    # --- resources and prompts ---------------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        library = self._library(self._session(ctx))
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

    async def _list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
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

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri.startswith("artifact://"):
            session = self._session(ctx)
            if session is None:
                raise MCPError(types.INVALID_PARAMS, _NO_SESSION)
            try:
                ref = await self._input(session, uri)
                contents = await self._contents(ref, uri)
            except (_ToolError, ArtifactNotFoundError) as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            return types.ReadResourceResult(contents=[contents])
        if not uri.startswith("skill://"):
            raise MCPError(
                types.INVALID_PARAMS, f"unknown resource {uri!r}: skill:// or artifact://"
            )
        name, _, path = uri.removeprefix("skill://").partition("/")
        library = self._library(self._session(ctx))
        if library.canonical(name) is None or not library.is_enabled(name):
            raise MCPError(types.INVALID_PARAMS, f"no skill {name!r}")
        skill = library.get(name)
        try:
            text = await asyncio.to_thread(
                read_resource, skill, path, max_bytes=self.settings.skills.resource_max_bytes
            )
        except ResourceError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        mime = "text/markdown" if path.endswith(".md") else "text/plain"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
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

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != CATALOG_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name!r}")
        query = (params.arguments or {}).get("query")
        text = self._catalog(query or None, self._session(ctx))
        return types.GetPromptResult(
            description="The skills available through this server.",
            messages=[types.PromptMessage(role="user", content=_text(text))],
        )


class _ToolErrorWith(_ToolError):
    """A failed script: its rendered result and outputs, as an error result."""

    def __init__(self, content: list[Any]) -> None:
        super().__init__(content[0].text)
        self.content = content


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


@contextlib.contextmanager
def _sandbox_errors() -> Iterator[None]:
    """A run the manager rejected (what the caller can fix: ``skillweave.sandbox.client``'s
    rule), a manager that refuses this door or is down past the queue budget (an operator
    must act: said as such, never as the script's outcome), or a sandbox that failed (a full
    pool past the queue budget too), as a tool error; a run the manager could not record
    past the queue budget as the :data:`UNAVAILABLE` refusal (nothing ran)."""
    try:
        yield
    except AuditUnavailableError as exc:
        raise _unavailable(str(exc), retry_after=exc.retry_after) from exc
    except ExecutionRejectedError as exc:
        raise _ToolError(f"The script was not run: {exc.reason}") from None
    except (ManagerRefusedError, ManagerUnreachableError) as exc:
        raise _ToolError(f"No script ran; an operator must act: {exc}") from None
    except SandboxError as exc:
        raise _ToolError(f"The sandbox failed: {exc}; try again.") from None


def _unavailable(detail: str, *, retry_after: float) -> MCPError:
    """The :data:`UNAVAILABLE` refusal: the audit log cannot be written, nothing was done."""
    problem = Problem.coded(
        ProblemCode.AUDIT_UNAVAILABLE,
        status=503,
        title="Audit log unavailable",
        detail=detail,
        retry_after=retry_after,
    )
    return MCPError(UNAVAILABLE, detail, data=problem.body())


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _invalid(exc: ValidationError) -> str:
    """A request's validation errors in one line: field and message, no input echoed back."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'request'}: {error['msg']}"
        for error in exc.errors()[:3]
    )


def _string(tool: str, args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _ToolError(disclosure.needs_string(tool, name))
    return value.strip()


def _optional_string(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _ToolError(f"{name!r} must be a string.")
    return value


def _strings(value: object, refusal: str) -> list[str]:
    value = value or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _ToolError(refusal)
    return value
