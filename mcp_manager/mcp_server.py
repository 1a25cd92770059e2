"""The MCP front door: a skill library and its sandboxes over the Model Context Protocol.

:class:`SkillMcp` is a server of the official ``mcp`` SDK (its low-level ``Server``) that any
MCP client can use without our agent loop. The manager mounts it at ``/mcp`` (streamable HTTP,
behind the manager's bearer token); ``skillweave mcp`` serves it over stdio.

Tools: ``list_skills`` (the tier-1 catalog in the configured catalog mode: tree roots, then the
children of what the session activated), ``activate_skill`` (the ``<skill_content>`` payload;
the enum names every enabled skill, and a sub-skill is refused until its parent is active),
``read_skill_resource`` and ``run_skill_script`` (for skills active in the session only; a run
goes through the warm pool, and its output files come back as embedded resources, or as links
to ``artifact://`` resources when large), ``search_skills`` (matches become activatable).
Resources: every skill file as ``skill://NAME/PATH`` (listed: each skill's SKILL.md; the rest
through the template), and a session's artifacts as ``artifact://KEY``. Prompt: ``skill_catalog``.

Activation state is per MCP session: the ``Mcp-Session-Id`` of a streamable-HTTP session, or
the one connection of a stdio server (in either protocol era). Over HTTP the 2026-07-28
protocol has no sessions, so the server does not offer it there (``server/discover`` answers
"method not found"): clients fall back to the session handshake. A request that still arrives
without a session may list, search and read the catalog, but cannot activate a skill. Each
session's script runs belong to a run of its own (``mcp-<session>``), so one session cannot
pass another's artifacts to a script.

Configured skill secrets are masked (``skillweave.sandbox.masking``) in every script result
this front door renders and in every stdout/stderr log artifact it hands out, on top of the
manager's masking at the source: what was stored before masking existed leaves masked too.
Output files are handed out as the script wrote them.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from skillweave import __version__
from skillweave.config import Settings
from skillweave.errors import (
    ArtifactNotFoundError,
    ExecutionRejectedError,
    InvalidKeyError,
    PackageError,
    ResourceError,
    SandboxError,
)
from skillweave.sandbox.masking import is_run_log, mask_result, output_masker
from skillweave.sandbox.models import (
    ExecuteRequest,
    ExecutionLimits,
    ExecutionResult,
    render_result,
)
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import (
    Skill,
    SkillRegistry,
    build_catalog,
    read_resource,
    render_activation,
)
from skillweave.skills.catalog import render_entries
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore

__all__ = ["RunScript", "SkillMcp"]

logger = logging.getLogger("skillweave.mcp")

RunScript = Callable[[ExecuteRequest], Awaitable[ExecutionResult]]
"""How a script is run: the manager's execution service, or a client of a manager."""

LIST_SKILLS: Final = "list_skills"
ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_RESOURCE: Final = "read_skill_resource"
RUN_SKILL_SCRIPT: Final = "run_skill_script"
SEARCH_SKILLS: Final = "search_skills"
CATALOG_PROMPT: Final = "skill_catalog"

_MAX_SESSIONS: Final = 4_096  # sessions whose activations are kept (least recently used go)
_EMBED_MAX_BYTES: Final = 256 * 1024  # larger outputs come back as resource links
_OUTPUT_CHARS: Final = 16_000  # stdout/stderr shown inline (the full text is an artifact)
_NO_SESSION: Final = (
    "this request has no MCP session, and skill activations are kept per session: connect "
    "with the session handshake (streamable HTTP with Mcp-Session-Id, or stdio)"
)


@dataclass
class _Session:
    """What one MCP session has done: its activations and its run."""

    run_id: str
    active: dict[str, str] = field(default_factory=dict)  # name -> version activated
    found: set[str] = field(default_factory=set)  # made activatable by search_skills


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
    """

    def __init__(
        self,
        settings: Settings,
        *,
        registry: SkillRegistry,
        store: ArtifactStore,
        run_script: RunScript,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.store = store
        self.run_script = run_script
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._stdio_key = f"stdio-{secrets.token_hex(8)}"
        self._masker = output_masker(
            {
                skill: {name: value.get_secret_value() for name, value in values.items()}
                for skill, values in settings.sandbox.skill_secrets.items()
            }
        )  # the manager warns about values too short to mask
        self.server: Server[Any] = Server(
            "skillweave",
            version=__version__,
            instructions=(
                "Skills give you instructions, reference files and scripts for specialised "
                "tasks. Call list_skills (or search_skills) to see them, activate_skill before "
                "using one, then read_skill_resource and run_skill_script as its instructions "
                "say. Scripts run in isolated sandboxes; their output files come back to you."
            ),
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
            session = _Session(run_id=f"mcp-{digest}")
            self._sessions[key] = session
            while len(self._sessions) > _MAX_SESSIONS:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        return session

    def _attachable(self, session: _Session | None) -> list[str]:
        """What ``activate_skill`` accepts now: enabled roots, children of active parents,
        and what ``search_skills`` found."""
        registry = self.registry
        names = list(registry.attachable(session.active if session else ()))
        if session is not None:
            names += [n for n in sorted(session.found) if n not in names and n in registry]
        return [n for n in names if registry.is_enabled(n)]

    # --- tools -------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        enabled = [s.name for s in self.registry if self.registry.is_enabled(s.name)]
        skill = {"type": "string", "description": "A skill's name."}
        artifacts = {
            "type": "array",
            "items": {"type": "string"},
            "description": "Artifact keys from earlier script results in this session, copied "
            "into the script's inputs/ folder under their file names.",
        }
        return types.ListToolsResult(
            tools=[
                _tool(
                    LIST_SKILLS,
                    "List the skills available (name and description). In auto mode pass "
                    "the task as query to get the most relevant ones.",
                    {"query": {"type": "string", "description": "The task (optional)."}},
                    required=[],
                ),
                _tool(
                    ACTIVATE_SKILL,
                    "Load a skill's instructions (and list its sub-skills, which can be "
                    "activated next). Activate a skill before reading its files or running "
                    "its scripts.",
                    {"name": {"type": "string", "enum": enabled}},
                    required=["name"],
                ),
                _tool(
                    READ_SKILL_RESOURCE,
                    "Read a text file bundled with an active skill (e.g. references/x.md).",
                    {"skill": skill, "path": {"type": "string"}},
                    required=["skill", "path"],
                    read_only=True,
                ),
                _tool(
                    RUN_SKILL_SCRIPT,
                    "Run a script bundled with an active skill in a fresh, isolated sandbox "
                    "(no network). Files it writes under outputs/ come back as resources.",
                    {
                        "skill": skill,
                        "script": {"type": "string", "description": "e.g. scripts/run.py"},
                        "args": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Command-line arguments (no shell).",
                        },
                        "inputs": artifacts,
                    },
                    required=["skill", "script"],
                    read_only=False,
                ),
                _tool(
                    SEARCH_SKILLS,
                    "Search the skill library for skills that fit a task; the ones found can "
                    "be activated.",
                    {
                        "query": {"type": "string"},
                        "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
                    },
                    required=["query"],
                ),
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        session = self._session(ctx)
        handlers: dict[str, Callable[..., Awaitable[list[Any]]]] = {
            LIST_SKILLS: self._tool_list,
            ACTIVATE_SKILL: self._tool_activate,
            READ_SKILL_RESOURCE: self._tool_read,
            RUN_SKILL_SCRIPT: self._tool_run,
            SEARCH_SKILLS: self._tool_search,
        }
        handler = handlers.get(params.name)
        if handler is None:
            raise MCPError(types.INVALID_PARAMS, f"no tool {params.name!r}")
        try:
            content = await handler(session, arguments)
        except _ToolErrorWith as exc:
            return types.CallToolResult(content=exc.content, is_error=True)
        except _ToolError as exc:
            return types.CallToolResult(content=[_text(str(exc))], is_error=True)
        return types.CallToolResult(content=content)

    async def _tool_list(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        query = _optional_string(args, "query")
        text = self._catalog(query, session)
        return [_text(text or "No skills are available.")]

    def _catalog(self, query: str | None, session: _Session | None) -> str:
        skills = self.settings.skills
        catalog = build_catalog(
            self.registry,
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
                if n not in catalog.names and n in self.registry
            ]
            if children:
                text += "\nActivatable now (sub-skills and search results):\n"
                text += render_entries([self.registry.get(n) for n in children])
        return text

    async def _tool_activate(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        name = _string(args, "name")
        if session is None:
            raise _ToolError(f"Cannot activate {name!r}: {_NO_SESSION}.")
        attachable = self._attachable(session)
        if name not in attachable:
            if name in self.registry and self.registry.is_enabled(name):
                parent = self.registry.get(name).parent
                raise _ToolError(
                    f"{name!r} is a sub-skill of {parent!r}: activate {parent!r} first."
                )
            raise _ToolError(
                f"No skill {name!r} can be activated. Skills that can: "
                f"{', '.join(attachable) or 'none'}."
            )
        skill = self.registry.get(name)
        try:
            await publish_skill(self.store, skill)  # what the manager runs its scripts from
        except (PackageError, InvalidKeyError) as exc:
            raise _ToolError(f"{name!r} cannot be activated: {exc}") from None
        children = self.registry.children_of(name, enabled_only=True)
        text = await asyncio.to_thread(
            render_activation,
            skill,
            children=children,
            max_listed=self.settings.skills.activation_resource_listing,
        )
        session.active[name] = skill.version
        return [_text(text)]

    def _active(self, session: _Session | None, name: str, action: str) -> Skill:
        if session is None:
            raise _ToolError(f"Cannot {action}: {_NO_SESSION}.")
        version = session.active.get(name)
        if version is None:
            active = ", ".join(session.active) or "none"
            raise _ToolError(
                f"Skill {name!r} is not active in this session (active: {active}); "
                f"activate it first with activate_skill(name={name!r})."
            )
        if name not in self.registry or self.registry.get(name).version != version:
            raise _ToolError(
                f"Skill {name!r} changed since this session activated it; activate it again."
            )
        return self.registry.get(name)

    async def _tool_read(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        skill = self._active(session, _string(args, "skill"), "read a skill's file")
        path = _string(args, "path")
        try:
            text = await asyncio.to_thread(
                read_resource, skill, path, max_bytes=self.settings.skills.resource_max_bytes
            )
        except ResourceError as exc:
            raise _ToolError(f"Cannot read that file: {exc}") from None
        return [_text(text)]

    async def _tool_run(self, session: _Session | None, args: Mapping[str, Any]) -> list[Any]:
        skill = self._active(session, _string(args, "skill"), "run a skill's script")
        assert session is not None  # _active refused a request without a session
        script = _string(args, "script")
        arguments = _strings(args, "args")
        inputs = [await self._input(session, key) for key in _strings(args, "inputs")]
        try:
            request = ExecuteRequest(
                execution_id=f"mcp/{session.run_id}/{uuid.uuid4().hex}",
                run_id=session.run_id,
                skill=skill.name,
                version=skill.version,
                script=script,
                args=arguments,
                inputs=inputs,
                limits=ExecutionLimits(timeout_seconds=self.settings.sandbox.timeout_seconds),
            )
        except ValidationError as exc:
            raise _ToolError(f"The script was not run: {_invalid(exc)}") from None
        started = time.monotonic()
        try:
            result = await self.run_script(request)
        except ExecutionRejectedError as exc:
            raise _ToolError(f"The script was not run: {exc.reason}") from None
        except SandboxError as exc:
            raise _ToolError(f"The sandbox failed: {exc}; try again.") from None
        logger.info(
            "mcp run %s %s: %s in %.0f ms",
            skill.name,
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
        query = _string(args, "query")
        top_k = args.get("top_k", 5)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 50:
            raise _ToolError("top_k must be a whole number from 1 to 50.")
        hits = self.registry.search(query, top_k=top_k)
        if not hits:
            return [_text("No skill matches that query; try other words.")]
        if session is not None:
            session.found.update(hit.name for hit in hits)
        return [_text(render_entries([self.registry.get(hit.name) for hit in hits]))]

    # --- resources and prompts ---------------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=f"skill://{skill.name}/SKILL.md",
                    name=f"{skill.name}/SKILL.md",
                    description=skill.description,
                    mime_type="text/markdown",
                )
                for skill in self.registry
                if self.registry.is_enabled(skill.name)
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
        if name not in self.registry or not self.registry.is_enabled(name):
            raise MCPError(types.INVALID_PARAMS, f"no skill {name!r}")
        skill = self.registry.get(name)
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


def _tool(
    name: str,
    description: str,
    properties: dict[str, Any],
    *,
    required: list[str],
    read_only: bool = True,
) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        input_schema={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=read_only, open_world_hint=False),
    )


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _invalid(exc: ValidationError) -> str:
    """A request's validation errors in one line: field and message, no input echoed back."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'request'}: {error['msg']}"
        for error in exc.errors()[:3]
    )


def _string(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value:
        raise _ToolError(f"{name!r} is required and must be a non-empty string.")
    return value


def _optional_string(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _ToolError(f"{name!r} must be a string.")
    return value


def _strings(args: Mapping[str, Any], name: str) -> list[str]:
    value = args.get(name) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _ToolError(f"{name!r} must be a list of strings.")
    return value
