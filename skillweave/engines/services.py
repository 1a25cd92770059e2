"""`AgentServices`: what each side effect of the agent loop does, in-process.

One async method per side effect, named as its activity (``prepare_catalog``,
``invoke_model``, ``load_skill``, ``read_skill_resource``, ``run_skill_script``,
``search_skills``, ``create_skill``, ``publish_skill``, ``find_skills``,
``prepare_skill_request``, ``install_skill``, ``record_transcript``), each taking
the side effect's input model and returning its result model. The direct engine calls them
through a JSON round-trip; the Temporal engine's activities wrap the very same methods. It is
the one object the worker and the direct engine hold; the work is done by its collaborators,
one per seam:

- :class:`~skillweave.engines._views.SkillViews`: the library as a run sees it, its catalog;
- :class:`~skillweave.engines._model_calls.ModelCalls`: model calls, and which model a run names;
- :class:`~skillweave.engines._activation.Activations`: activation, trust and tool schemas;
- :class:`~skillweave.engines._resource_reads.ResourceReads`: a skill's files;
- :class:`~skillweave.engines._script_runs.ScriptRuns` over a
  :class:`~skillweave.engines._script_executor.ScriptExecutor`: script runs on the manager;
- :class:`~skillweave.engines._skill_search.SkillSearch`: search;
- :class:`~skillweave.engines.authoring.SkillAuthoring`: skills the agent writes;
- :class:`~skillweave.engines._acquisition.SkillAcquisition` and
  :class:`~skillweave.engines._installer.RegistryInstaller`: registry skills the agent asks for;
- :class:`~skillweave.engines.transcript.TranscriptRecorder`: the transcript, where every
  one of them stores what it produced. Tool outputs are written where they are produced, and
  only their size and the summary go back to the loop, so neither the loop's state nor a
  workflow's history carries transcript text.

Mistakes the model can fix (a missing resource, a script that is not in the skill, a bad
input) become tool results with ``is_error``; infrastructure failures raise. An activation is
in the audit log before the run sees it, and one whose record cannot be written raises
(:class:`~skillweave.errors.AuditLogError`, retried like any failing store); :meth:`aclose`
anchors the last records when the services stop.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from skillweave.agent import (
    CatalogInput,
    CatalogResult,
    CreateSkillInput,
    CreateSkillOutcome,
    FindSkillsInput,
    FindSkillsOutcome,
    InstallSkillInput,
    InstallSkillOutcome,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    PublishSkillInput,
    PublishSkillOutcome,
    ReadResourceInput,
    RecordInput,
    RunScriptInput,
    ScriptOutcome,
    SearchInput,
    SearchOutcome,
    SideEffect,
    SkillLoaded,
    SkillRequestChecked,
    SkillRequestInput,
    ToolOutcome,
)
from skillweave.config import Settings
from skillweave.engines._acquisition import SkillAcquisition
from skillweave.engines._activation import Activations
from skillweave.engines._installer import RegistryInstaller
from skillweave.engines._model_calls import ModelCalls
from skillweave.engines._resource_reads import ResourceReads
from skillweave.engines._script_executor import ScriptExecutor
from skillweave.engines._script_runs import ScriptRuns
from skillweave.engines._skill_search import SkillSearch
from skillweave.engines._views import SkillViews
from skillweave.engines.authoring import SkillAuthoring
from skillweave.engines.skill_review import skill_reviewer
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.engines.worker_metrics import WorkerMetrics
from skillweave.llm import ModelProvider, ModelProviders
from skillweave.sandbox import TOOL_SCHEMA_RUN_ID, SandboxClient
from skillweave.skills import SkillLibrary, SkillRegistry, package_limits
from skillweave.skills.registries import Registries
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = ["TOOL_SCHEMA_RUN_ID", "AgentServices"]


class AgentServices:
    """The side effects of agent runs, against one skill registry, store, model and manager.

    Args:
        settings: skills (catalog budget, resource caps) and sandbox (script timeout) sections.
        registry: the skill library snapshot runs use.
        store: where transcripts, packages and artifacts live.
        provider: the default model, for runs whose agent names none; None: there is none
            (such a run fails for good, saying so: ``llm.factory.default_model_problem``).
        model: its name, as model requests carry it (None with no default).
        sandbox: a client of the MCP manager that runs scripts.
        metrics: where model calls, tokens, script runs, activations and searches are
            counted (default: a registry of its own).
        models: the models runs may name (profiles, ``provider:name``), opened on first use;
            None: a run that names a model fails with a config error (nothing to resolve it),
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
        self.store = store
        self.metrics = metrics if metrics is not None else WorkerMetrics()
        self.audit = AuditLog.from_settings(
            settings.audit, store, actor=f"worker@{socket.gethostname()}"
        )
        skills = settings.skills
        self.transcript = TranscriptRecorder(store)
        self.views = SkillViews(registry, store=store, settings=skills)
        self.executor = ScriptExecutor(sandbox, store=store, settings=settings.sandbox)
        self.resources = ResourceReads(self.views, transcript=self.transcript, settings=skills)
        self.model_calls = ModelCalls(
            provider,
            model,
            models=models,
            transcript=self.transcript,
            reads=self.resources,
            metrics=self.metrics,
        )
        self.activations = Activations(
            self.views,
            executor=self.executor,
            transcript=self.transcript,
            store=store,
            settings=skills,
            audit=self.audit,
            metrics=self.metrics,
        )
        self.scripts = ScriptRuns(self.executor, transcript=self.transcript, metrics=self.metrics)
        self.search = SkillSearch(self.views, transcript=self.transcript, metrics=self.metrics)
        self.authoring = SkillAuthoring(
            self.views,
            executor=self.executor,
            transcript=self.transcript,
            audit=self.audit,
            store=store,
            settings=skills,
            reviewer=skill_reviewer(settings),
        )
        registries = Registries(skills)
        self.acquisition = SkillAcquisition(
            self.views,
            registries=registries,
            transcript=self.transcript,
            store=store,
            settings=skills,
            limits=package_limits(skills),
            reviewer=skill_reviewer(settings),
        )
        self.installer = RegistryInstaller(
            self.views,
            registries=registries,
            transcript=self.transcript,
            audit=self.audit,
            store=store,
            settings=skills,
            reviewer=skill_reviewer(settings),
        )

    # --- what callers read of it -----------------------------------------------------------

    @property
    def registry(self) -> SkillRegistry:
        """The skill library snapshot runs use now (:meth:`use_registry` replaces it)."""
        return self.views.registry

    @property
    def sandbox(self) -> SandboxClient:
        """The client of the MCP manager that runs scripts (replaceable: tests record it)."""
        return self.executor.sandbox

    @sandbox.setter
    def sandbox(self, sandbox: SandboxClient) -> None:
        self.executor.sandbox = sandbox

    @property
    def provider(self) -> ModelProvider | None:
        """The default model's provider, or None: there is none."""
        return self.model_calls.provider

    @property
    def model(self) -> str | None:
        """The default model's name as model requests carry it, or None."""
        return self.model_calls.model

    @property
    def models(self) -> ModelProviders | None:
        """The models runs may name, or None: only the default resolves."""
        return self.model_calls.models

    @property
    def default_model(self) -> str | None:
        """This process's default model as configured (``provider:name``, the form
        ``llm.factory.default_model_name`` gives a run), or None: it has none."""
        return self.model_calls.default_model

    def view(self, allowed: Sequence[str] | None) -> SkillRegistry:
        """The registry restricted to `allowed` skills and their trees (None: everything)."""
        return self.views.view(allowed)

    def call_name(self, effect: SideEffect[Any, Any], request: BaseModel) -> str:
        """What a call of `effect` is, for its retry notices: its descriptor's
        :attr:`~skillweave.agent.effects.SideEffect.retry_name` (``script pdf/scripts/x.py``),
        a model call naming the model this process resolves it to (``model openai:gpt-4o``)."""
        if isinstance(request, InvokeModelInput):
            return f"model {self.model_calls.name_of(request)}"
        return effect.retry_name(request)

    # --- its life --------------------------------------------------------------------------

    def use_registry(self, registry: SkillRegistry) -> None:
        """Serve `registry` from now on (skills were uploaded, enabled or deleted). Runs keep
        the versions they activated: those are pinned in their state."""
        self.views.use(registry)

    def serve_library(self, library: SkillLibrary) -> None:
        """Serve `library` (the whole library: directories and the store's skills) from now
        on, and reload it after a run publishes or installs a skill, so that later runs find
        it at once
        (every other change arrives with the reload loop, ``skills.reload.reloading``)."""
        if library.registry is not None:
            self.use_registry(library.registry)

        async def published() -> None:
            self.use_registry(await library.reload())

        self.authoring.published = published
        self.installer.installed = published

    async def aclose(self) -> None:
        """Anchor the audit log's last records in a checkpoint (whoever opened the services
        calls it when they stop, before the store closes)."""
        await self.audit.aclose()

    # --- the side effects ------------------------------------------------------------------

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        """The tier-1 catalog, what may be activated at the start, a preload pick, and the
        skills to activate at the start (:meth:`SkillViews.catalog`).

        Raises:
            ConfigError: the run was started against another store than this process's.
        """
        return await self.views.catalog(request)

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        """Store the loop's pending messages and do its pending resource reads, call the model
        on the transcript, store its reply."""
        return await self.model_calls.invoke(request)

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        """Activate a skill: pin its version, publish its package, register its tools. A
        skill the run wrote (``draft``) is its draft's package, stored when it was made."""
        return await self.activations.load(request)

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        """One text file of an active skill, at its pinned version."""
        return await self.resources.read(request)

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        """Run a script of an active skill in a sandbox; store the result as a tool message.
        Cancelling the call cancels the run at the manager too."""
        return await self.scripts.run(request)

    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        """Skills that fit a query, as catalog entries; they become attachable."""
        return await self.search.search(request)

    async def create_skill(self, request: CreateSkillInput) -> CreateSkillOutcome:
        """A skill the agent wrote: checked, scanned, tested, kept as the run's draft."""
        return await self.authoring.create(request)

    async def publish_skill(self, request: PublishSkillInput) -> PublishSkillOutcome:
        """An approved draft stored as an uploaded skill and served."""
        return await self.authoring.publish(request)

    async def find_skills(self, request: FindSkillsInput) -> FindSkillsOutcome:
        """Registry skills that fit a query; ``request_skill`` may name them."""
        return await self.acquisition.find(request)

    async def prepare_skill_request(self, request: SkillRequestInput) -> SkillRequestChecked:
        """A registry skill checked before a person is asked: its entry, version, signature
        and scan."""
        return await self.acquisition.prepare(request)

    async def install_skill(self, request: InstallSkillInput) -> InstallSkillOutcome:
        """An approved registry skill installed (audited, exactly once) and served."""
        return await self.installer.install(request)

    async def record_transcript(self, request: RecordInput) -> None:
        """Store messages the loop made itself (no model call carried them)."""
        await self.transcript.record(request.writes, run_id=request.run_id)
