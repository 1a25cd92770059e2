"""`AgentServices`: what each side effect of the agent loop does, in-process.

One async method per ``Runtime`` call (``prepare_catalog``, ``invoke_model``, ``load_skill``,
``read_skill_resource``, ``run_skill_script``, ``search_skills``, ``record``), each taking the
runtime's input model and returning its result model. The direct engine calls them through a
JSON round-trip; the Temporal engine's activities will wrap the very same methods.

The transcript lives in the artifact store, one record per key
(``runs/{run}/transcript/{seq:08d}.json``: the message, and for a tool output the summary that
replaces it once compacted). Tool outputs are written here, where they are produced, and only
their size and the summary go back to the loop; a model call reads the records it needs
(through a bounded cache of immutable entries) and elides by the view's boundary, so neither
the loop's state nor a workflow's history carries transcript text.

Mistakes the model can fix (a missing resource, a script that is not in the skill, a bad
input) become tool results with ``is_error``; infrastructure failures raise. An activation is
in the audit log before the job sees it, and one whose record cannot be written raises
(:class:`~skillweave.errors.AuditLogError`, retried like any failing store); :meth:`aclose`
anchors the last records when the services stop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

from skillweave.agent import disclosure
from skillweave.agent.runtime import (
    SUMMARY_MAX_CHARS,
    CatalogInput,
    CatalogResult,
    CreateSkillInput,
    CreateSkillOutcome,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    PublishSkillInput,
    PublishSkillOutcome,
    ReadResourceInput,
    RunScriptInput,
    ScriptOutcome,
    SearchInput,
    SearchOutcome,
    SkillLoaded,
    ToolOutcome,
    TranscriptWrite,
)
from skillweave.agent.spec import PinnedSkill
from skillweave.config import Settings
from skillweave.engines.authoring import SkillAuthoring
from skillweave.engines.metrics import WorkerMetrics
from skillweave.engines.retries import call_name
from skillweave.errors import (
    ArtifactNotFoundError,
    ConfigError,
    ExecutionRejectedError,
    InvalidKeyError,
    ModelError,
    PackageError,
    ResourceError,
    SkillNotFoundError,
)
from skillweave.llm.base import ModelProvider
from skillweave.llm.factory import (
    NAME_A_MODEL,
    ModelProviders,
    default_model_problem,
    names_default,
)
from skillweave.llm.messages import Message, ModelRequest
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import (
    ExecuteRequest,
    ExecutionResult,
    render_result,
)
from skillweave.sandbox.packages import publish_skill
from skillweave.sandbox.pinned import skill_at
from skillweave.sandbox.queue import queued
from skillweave.sandbox.tool_schemas import TOOL_SCHEMA_RUN_ID, discover_tool_schemas, run_json_args
from skillweave.skills import (
    Skill,
    SkillLibrary,
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
from skillweave.storage.base import ArtifactStore
from skillweave.storage.identity import store_identity

__all__ = ["TOOL_SCHEMA_RUN_ID", "AgentServices", "TranscriptRecord"]

_log = logging.getLogger(__name__)

_CACHE_BYTES: Final = 64 * 1024 * 1024
_INLINE_OUTPUT_CHARS: Final = 8_000
_PINNED_VIEWS: Final = 64  # the pinned skill sets kept built (one per agent × versions)


class TranscriptRecord(BaseModel):
    """One stored transcript entry: the message, and for a tool output its summary."""

    model_config = ConfigDict(frozen=True)

    message: Message
    summary: str = ""

    def seen(self, *, elided: bool) -> Message:
        """The message as a model call sees it: the summary instead when elided and shorter."""
        if elided and self.summary and len(self.summary) < len(self.message.text):
            return self.message.model_copy(update={"text": self.summary})
        return self.message


class _TranscriptCache:
    """Immutable transcript records by key, least recently used dropped beyond a byte budget."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._bytes = 0
        self._items: OrderedDict[str, tuple[TranscriptRecord, int]] = OrderedDict()

    def get(self, key: str) -> TranscriptRecord | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: str, record: TranscriptRecord, size: int) -> None:
        if key in self._items:
            return
        self._items[key] = (record, size)
        self._bytes += size
        while self._bytes > self._budget and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self._bytes -= dropped


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AgentServices:
    """The side effects of agent jobs, against one skill registry, store, model and manager.

    Args:
        settings: skills (catalog budget, resource caps) and sandbox (script timeout) sections.
        registry: the skill library snapshot jobs use.
        store: where transcripts, packages and artifacts live.
        provider: the default model, for jobs whose agent names none; None: there is none
            (such a job fails for good, saying so: ``llm.factory.default_model_problem``).
        model: its name, as model requests carry it (None with no default).
        sandbox: a client of the MCP manager that runs scripts.
        metrics: where model calls, tokens, script runs, activations and searches are
            counted (default: a registry of its own).
        models: the models jobs may name (profiles, ``provider:name``), opened on first use;
            None: a job that names a model fails with a config error (nothing to resolve it),
            but for the default given by name (``llm.factory.default_model_name``): `provider`.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        registry: SkillRegistry,
        store: ArtifactStore,
        provider: ModelProvider | None,
        model: str | None,
        sandbox: SandboxClient,
        metrics: WorkerMetrics | None = None,
        models: ModelProviders | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.store = store
        self.provider = provider
        self.model = model
        self.models = models
        self.sandbox = sandbox
        self.metrics = metrics if metrics is not None else WorkerMetrics()
        self._cache = _TranscriptCache(_CACHE_BYTES)
        self._views: dict[tuple[str, ...] | None, SkillRegistry] = {}
        self._pinned_views: dict[tuple[PinnedSkill, ...], SkillRegistry] = {}
        self._schemas: dict[tuple[str, str, str], tuple[ToolSchema, ...] | str] = {}
        self.authoring = SkillAuthoring(self)
        self.audit = AuditLog.from_settings(
            settings.audit, store, actor=f"worker@{socket.gethostname()}"
        )

    @property
    def default_model(self) -> str | None:
        """This process's default model as configured (``provider:name``, the form
        ``llm.factory.default_model_name`` gives a run), or None: it has none."""
        if self.provider is None or self.models is None:
            return None
        return f"{self.models.settings.provider}:{self.models.settings.name}"

    def use_registry(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on (skills were uploaded, enabled or deleted). Jobs keep
        the versions they activated: those are pinned in their state."""
        self.registry = registry
        self._views.clear()
        self._pinned_views.clear()

    async def aclose(self) -> None:
        """Anchor the audit log's last records in a checkpoint (whoever opened the services
        calls it when they stop, before the store closes)."""
        await self.audit.aclose()

    def serve_library(self, library: SkillLibrary) -> None:
        """Serve `library` (the whole library: directories and the store's skills) from now
        on, and reload it after a job publishes a skill, so that later jobs find it at once
        (every other change arrives with the reload loop, ``skills.reload.reloading``)."""
        if library.registry is not None:
            self.use_registry(library.registry)

        async def published() -> None:
            self.use_registry(await library.reload())

        self.authoring.published = published

    # --- the skill library as one agent may see it ----------------------------------------

    def view(self, allowed: Sequence[str] | None) -> SkillRegistry:
        """The registry restricted to `allowed` skills and their trees (None: everything)."""
        key = tuple(allowed) if allowed is not None else None
        cached = self._views.get(key)
        if cached is not None:
            return cached
        view = self.registry if key is None else self.registry.restricted(key)
        self._views[key] = view
        return view

    async def _view(
        self, allowed: Sequence[str] | None, pinned: Sequence[PinnedSkill] | None
    ) -> SkillRegistry:
        """What a job sees: its pinned skills at their versions, else :meth:`view`."""
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
            skill = await self._skill_at(pin.name, pin.version)
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

    async def _skill(
        self, name: str, allowed: Sequence[str] | None, pinned: Sequence[PinnedSkill] | None
    ) -> tuple[Skill, SkillRegistry]:
        view = await self._view(allowed, pinned)
        if not view.is_enabled(name):
            raise SkillNotFoundError(name, available=view.attachable())
        return view.get(name), view

    async def _skill_at(self, name: str, version: str) -> Skill:
        """`name` at `version`, even after the library moved on (``sandbox.pinned``)."""
        return await skill_at(
            self.store, self.registry, name, version, pinned_dir=self.settings.skills.pinned_dir
        )

    # --- transcript ------------------------------------------------------------------------

    async def _store_message(
        self, run_id: str, seq: int, message: Message, *, summary: str = ""
    ) -> int:
        record = TranscriptRecord(message=message, summary=summary)
        data = record.model_dump_json().encode()
        key = keys.transcript_key(run_id, seq)
        await self.store.put_bytes(key, data, content_type="application/json")
        self._cache.put(key, record, len(data))
        return len(message.text)

    async def _load_record(self, run_id: str, seq: int) -> TranscriptRecord:
        key = keys.transcript_key(run_id, seq)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        ref = await self.store.stat(key)
        if ref is None:
            raise ArtifactNotFoundError(key)
        data = await self.store.get_bytes(ref)
        record = TranscriptRecord.model_validate_json(data)
        self._cache.put(key, record, len(data))
        return record

    async def record(self, writes: Sequence[TranscriptWrite], *, run_id: str) -> None:
        """Store messages the loop made itself."""
        for write in writes:
            await self._store_message(run_id, write.seq, write.message)

    async def _tool_result(
        self,
        run_id: str,
        seq: int,
        *,
        call_id: str,
        tool: str,
        text: str,
        error: bool,
        summary: str,
    ) -> int:
        message = Message(
            role="tool", text=text, tool_call_id=call_id, tool_name=tool, is_error=error
        )
        return await self._store_message(run_id, seq, message, summary=summary)

    # --- the Runtime calls -----------------------------------------------------------------

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        """The tier-1 catalog, what may be activated at the start, a preload pick, and the
        skills to activate at the start (``auto_load``: every one the agent allows).

        Raises:
            ConfigError: the job was started against another store than this process's.
        """
        if request.store_id is not None:
            own = await store_identity(self.store)
            if own != request.store_id:
                raise ConfigError(
                    f"job {request.run_id!r} was started against the store {request.store_id}, "
                    f"and this process's store is {own}: its inputs and outputs are not here. "
                    "Clients, workers and managers must share one store (the same STORAGE__ "
                    "settings); `skillweave doctor` prints each process's store id"
                )
        view = await self._view(request.allowed, request.pinned)
        catalog = build_catalog(
            view,
            mode=request.mode,
            query=request.task,
            top_k=request.top_k,
            max_chars=self.settings.skills.catalog_max_chars,
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

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        """Store the loop's pending messages, call the model on the transcript, store its reply."""
        for write in request.writes:
            await self._store_message(request.run_id, write.seq, write.message)
        view = request.view
        messages = []
        for seq in range(view.upto):
            record = await self._load_record(request.run_id, seq)
            messages.append(record.seen(elided=seq < view.elide_before))
        provider, model, attempts = self._model_of(request)
        started = time.perf_counter()
        try:
            response = await provider.complete(
                ModelRequest(
                    model=model,
                    system=request.system,
                    messages=tuple(messages),
                    tools=request.tools,
                    max_output_tokens=request.max_output_tokens,
                )
            )
        except Exception as exc:
            self.metrics.model_called(
                provider.name, seconds=time.perf_counter() - started, usage=None
            )
            if isinstance(exc, ModelError) and exc.max_attempts is None:
                exc.max_attempts = attempts  # the model's own retry policy, for the engine
            raise
        self.metrics.model_called(
            provider.name, seconds=time.perf_counter() - started, usage=response.usage
        )
        reply = response.message
        if reply.role != "assistant":
            reply = reply.model_copy(update={"role": "assistant"})
        await self._store_message(request.run_id, request.reply_seq, reply)
        return ModelTurn(
            message=reply,
            stop_reason=response.stop_reason,
            usage=response.usage,
            model=response.model or model,
        )

    def call_name(self, request: BaseModel) -> str:
        """What a call of `request` is, for its retry notices (``model openai:gpt-4o``,
        ``script pdf/scripts/extract.py``: :func:`~skillweave.engines.retries.call_name`)."""
        model = ""
        if isinstance(request, InvokeModelInput):
            try:
                model = self._model_of(request)[0].name
            except ConfigError:  # not retried: its notice is never shown
                model = request.model or self.model or ""
        return call_name(request, model=model)

    def _model_of(self, request: InvokeModelInput) -> tuple[ModelProvider, str, int | None]:
        """The provider of the model the job names, that model's name, and the most tries
        its profile allows one call (None: the engine's).

        Raises:
            ConfigError: the job names a model that does not resolve here (never retried).
        """
        # A process that resolves no names (no `models`) runs its one model as the default.
        if not request.model or (self.models is None and names_default(request.model)):
            if self.provider is None or self.model is None:
                problem = (
                    default_model_problem(self.models.settings) if self.models else None
                ) or "no default model"
                raise ConfigError(
                    f"the run names no model and this worker has none by default ({problem}):"
                    f" {NAME_A_MODEL}"
                )
            attempts = self.models.settings.max_attempts if self.models is not None else None
            return self.provider, self.model, attempts
        if self.models is None:
            raise ConfigError(
                f"the job names model {request.model!r}, and this process runs only its"
                " default model"
            )
        provider = self.models.provider_for(request.model)
        attempts = self.models.profile_for(request.model).max_attempts
        return provider, provider.name.partition(":")[2] or provider.name, attempts

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        """Activate a skill: pin its version, publish its package, register its tools. A
        skill the job wrote (``draft``) is its draft's package, stored when it was made."""
        notes: list[str] = []
        if request.draft is not None:
            skill = await self._skill_at(request.skill, request.draft)
            children: list[Skill] = []
        else:
            skill, view = await self._skill(request.skill, request.allowed, request.pinned)
        refused = await self._trusted(skill, notes, own=request.draft is None)
        if refused is not None:
            return await self._refused_activation(request, skill, refused)
        if request.draft is None:
            try:
                await publish_skill(self.store, skill)
            except (PackageError, InvalidKeyError) as exc:
                # Its instructions still help; its scripts cannot run (the manager runs
                # packages).
                notes.append(disclosure.package_refused(exc))
            children = view.children_of(skill.name, enabled_only=True)
        text = render_activation(
            skill,
            children=children,
            max_listed=self.settings.skills.activation_resource_listing,
        )
        tools, notes = await disclosure.activation_tools(
            declared_tool_scripts(skill),
            lambda script: self._tool_schemas(skill, script),
            skill=skill.name,
            taken=request.taken_tools,
            notes=notes,
        )
        allowed, warnings = skill_allowance(skill.allowed_tools)
        if allowed is not None:
            notes += [disclosure.allowance_note(allowed), *warnings]
        text += disclosure.activation_footer(tools, notes)
        if request.tool_call_id:
            message = Message(
                role="tool",
                text=text,
                tool_call_id=request.tool_call_id,
                tool_name=disclosure.ACTIVATE_SKILL,
            )
        else:
            message = Message(
                role="user", text=f"The skill {skill.name!r} was activated for this task.\n{text}"
            )
        # Recorded before the activation is kept (its message in the transcript, where the
        # job reads it): a record that cannot be written raises AuditLogError, a StorageError
        # the engines retry (``engines.retries``), never a tool result. `step` (its place in
        # the transcript) tells a retried step's record (its transcript write failed after
        # it) from another activation.
        await self.audit.record(
            "activation",
            skill=skill.name,
            version=skill.version,
            job=request.run_id,
            step=request.seq,
        )
        chars = await self._store_message(request.run_id, request.seq, message)
        self.metrics.activations.labels(skill=skill.name).inc()
        return SkillLoaded(
            skill=skill.name,
            version=skill.version,
            chars=chars,
            children=tuple(child.name for child in children),
            tools=tuple(tools),
            notes=tuple(notes),
            allowed=allowed,
        )

    async def _trusted(self, skill: Skill, notes: list[str], *, own: bool) -> str | None:
        """Why the signature policy (``skills.trust``) refuses `skill` at this version, or
        None (a warning joins `notes`): :func:`activation_trust`."""
        refused, warning = await activation_trust(
            self.store, skill, self.settings.skills.trust, own=own
        )
        if warning is not None:
            notes.append(warning)
        return refused

    async def _refused_activation(
        self, request: LoadSkillInput, skill: Skill, reason: str
    ) -> SkillLoaded:
        text = f"The skill {skill.name!r} cannot be used: {reason}"
        if request.tool_call_id:
            message = Message(
                role="tool",
                text=text,
                tool_call_id=request.tool_call_id,
                tool_name=disclosure.ACTIVATE_SKILL,
                is_error=True,
            )
        else:
            message = Message(role="user", text=text)
        chars = await self._store_message(request.run_id, request.seq, message)
        return SkillLoaded(skill=skill.name, version=skill.version, chars=chars, refused=text)

    async def _tool_schemas(self, skill: Skill, script: str) -> tuple[ToolSchema, ...] | str:
        """The tools `script` offers, from ``--help-json`` run once per skill version."""
        key = (skill.name, skill.version, script)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        found = await discover_tool_schemas(
            self._execute, skill=skill.name, version=skill.version, script=script
        )
        self._schemas[key] = found
        return found

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        """One text file of an active skill, at its pinned version."""
        error = False
        try:
            text = await self._read_pinned(request.skill, request.version, request.path)
        except ResourceError as exc:
            text, error = f"Cannot read that file: {exc}", True
        where = _clip(f"{request.skill}/{request.path}", 120)
        summary = (
            f"[read_skill_resource {where}: {len(text)} characters, elided to save context; "
            "read it again if you need it]"
        )
        chars = await self._tool_result(
            request.run_id,
            request.seq,
            call_id=request.tool_call_id,
            tool=disclosure.READ_SKILL_RESOURCE,
            text=text,
            error=error,
            summary=summary,
        )
        return ToolOutcome(seq=request.seq, chars=chars, is_error=error, summary=summary)

    async def _read_pinned(self, name: str, version: str, path: str) -> str:
        skill = await self._skill_at(name, version)
        limit = self.settings.skills.resource_max_bytes
        return await asyncio.to_thread(read_resource, skill, path, max_bytes=limit)

    async def _execute(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request` on the manager. A full pool is back-pressure, not a failure: the step
        asks again after each 503's Retry-After (jittered, so that waiting steps spread out)
        for up to ``SANDBOX__QUEUE_SECONDS``, and only then fails to the engine's retries
        (``skillweave.sandbox.queue``, the MCP front door's policy too). A manager that is
        down or refuses this worker (its token, its store) is waited for the same way; each
        wait is told to the context's reporter (``skillweave.waiting``) and never becomes a
        tool result.

        The request names this worker's store (a manager on another refuses it) and sets no
        limits: the script limit is the manager's (``SANDBOX__TIMEOUT_SECONDS`` where it runs).
        """
        request = request.model_copy(update={"store_id": await store_identity(self.store)})
        return await queued(
            lambda: self.sandbox.execute(request),
            queue_seconds=self.settings.sandbox.queue_seconds,
            call=f"script {request.skill}/{request.script}",
        )

    async def _cancel_execution(self, execution_id: str) -> None:
        """Ask the manager to stop a run whose caller was cancelled (the job was, or its
        activity): it would otherwise run to its timeout. Best effort, and shielded, so the
        request is not cut short by the cancellation being delivered."""
        try:
            await asyncio.shield(self.sandbox.cancel(execution_id))
        except Exception:
            _log.warning("could not cancel execution %s", execution_id, exc_info=True)

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        """Run a script of an active skill in a sandbox; store the result as a tool message.
        Cancelling the call cancels the run at the manager too."""
        args = list(request.args)
        if request.run_json is not None:
            args = run_json_args(
                request.run_json.tool,
                request.run_json.arguments,
                shared_script=request.run_json.shared_script,
            )
        try:
            result = await self._execute(
                ExecuteRequest(
                    execution_id=request.execution_id,
                    run_id=request.run_id,
                    skill=request.skill,
                    version=request.version,
                    script=request.script,
                    args=args,
                    inputs=list(request.inputs),
                )
            )
        except asyncio.CancelledError:
            await self._cancel_execution(request.execution_id)
            raise
        except ExecutionRejectedError as exc:
            # Only what the model can fix is a rejection (``skillweave.sandbox.client``): a
            # refused token or store is raised, waited for and retried, never told the model.
            self.metrics.script_runs.labels(outcome="error").inc()
            text = f"The script was not run: {exc}"
            summary = _clip(text, SUMMARY_MAX_CHARS)
            chars = await self._tool_result(
                request.run_id,
                request.seq,
                call_id=request.tool_call_id,
                tool=request.tool_name,
                text=text,
                error=True,
                summary=summary,
            )
            # Refused before any sandbox was claimed: no run, nothing off the job's budget.
            return ScriptOutcome(
                seq=request.seq,
                chars=chars,
                is_error=True,
                summary=summary,
                status="error",
                ran=False,
            )
        except Exception:
            self.metrics.script_runs.labels(outcome="infrastructure_error").inc()
            raise
        self.metrics.script_runs.labels(outcome=result.status).inc()
        text = render_result(result, inline_chars=_INLINE_OUTPUT_CHARS)
        error = result.status != "succeeded"
        outputs = tuple(output.ref for output in result.outputs)
        listed = ", ".join(ref.key for ref in outputs) or "none"
        summary = _clip(
            f"[{request.tool_name} {request.skill} {request.script}: {result.status} "
            f"(exit {result.exit_code}) in {result.duration_ms} ms; outputs: {listed}; "
            f"the full result is elided to save context]",
            SUMMARY_MAX_CHARS,
        )
        chars = await self._tool_result(
            request.run_id,
            request.seq,
            call_id=request.tool_call_id,
            tool=request.tool_name,
            text=text,
            error=error,
            summary=summary,
        )
        return ScriptOutcome(
            seq=request.seq,
            chars=chars,
            is_error=error,
            summary=summary,
            status=result.status,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            outputs=outputs,
        )

    async def create_skill(self, request: CreateSkillInput) -> CreateSkillOutcome:
        """A skill the agent wrote: checked, scanned, tested, kept as the job's draft."""
        return await self.authoring.create(request)

    async def publish_skill(self, request: PublishSkillInput) -> PublishSkillOutcome:
        """An approved draft stored as an uploaded skill and served."""
        return await self.authoring.publish(request)

    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        """Skills that fit a query, as catalog entries; they become attachable."""
        view = await self._view(request.allowed, request.pinned)
        hits = view.search(request.query, top_k=request.top_k)
        if hits:
            text = render_entries([view.get(hit.name) for hit in hits])
        else:
            text = "No skill matches that query; try other words."
        names = tuple(hit.name for hit in hits)
        self.metrics.searches.labels(result="found" if names else "none").inc()
        summary = _clip(
            f"[search_skills {request.query!r}: {', '.join(names) or 'no match'}]",
            SUMMARY_MAX_CHARS,
        )
        chars = await self._tool_result(
            request.run_id,
            request.seq,
            call_id=request.tool_call_id,
            tool=disclosure.SEARCH_SKILLS,
            text=text,
            error=False,
            summary=summary,
        )
        return SearchOutcome(seq=request.seq, chars=chars, summary=summary, found=names)
