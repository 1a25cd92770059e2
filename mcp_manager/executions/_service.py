"""The execution service behind ``/sandbox/execute``: :class:`ExecutionService` takes a
request, answers a repeat of its id from the store or from the run going on, and otherwise
has it prepared (``_preparation``) and run (``_runner``).

``mcp_manager.app`` composes it at start-up (and the MCP front door runs its scripts through
it); it builds its collaborators here and keeps the public operations.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Mapping

from mcp_manager.claims import Claims
from mcp_manager.containment import Containment
from mcp_manager.egress import EgressService
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.executions._admission import Admission
from mcp_manager.executions._audit import RunAudit
from mcp_manager.executions._environment import PreparedEnvironment, RunEnvironments
from mcp_manager.executions._grants import EgressGrants
from mcp_manager.executions._inflight import InflightRun, InflightRuns
from mcp_manager.executions._packages import Packages
from mcp_manager.executions._preparation import RunPreparation
from mcp_manager.executions._results import StoredResults
from mcp_manager.executions._runner import SandboxRunner
from mcp_manager.executions._secrets import RunSecrets
from mcp_manager.executor_client import ExecutorClient
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool
from mcp_manager.records import ExecutionState, Fingerprint
from skillweave.config import TrustSettings
from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    ManagerRefusedError,
)
from skillweave.sandbox import ExecuteRequest, ExecutionLimits, ExecutionResult, SkillOwnership
from skillweave.skills import Skill
from skillweave.storage import ArtifactRef, ArtifactStore, keys, store_identity
from skillweave.storage.audit import AuditLog
from skillweave.telemetry import bound, span

__all__ = ["ExecutionService"]

logger = logging.getLogger("skillweave.manager")


class ExecutionService:
    """Validates, deduplicates, runs and records script executions.

    Args:
        store: the artifact store (packages, inputs, outputs, results).
        pool: where sandboxes come from.
        metrics: the manager's metrics.
        skill_secrets: per-skill environment secrets (plain values; never logged, and
            masked in every run's output; values too short to mask are warned about here).
        default_timeout: wall time when a request sets no limits.
        clock_skew: how far two managers' clocks may disagree (a claim lapses that much later).
        manager_id: this manager's name in its claims and the actor of its audit records
            (default: random).
        claim_lease: how long a claim lives unrenewed (its manager renews it four times as
            often while the script runs); a lapsed claim's execution may run again.
        environments: prepares the environments of skills that declare dependencies (built
            once, stored, sent with each execution); None: dependencies are not provided.
        egress: the egress proxy of runs whose network an operator approved; None: none.
        trust: the signature policy (``skills.trust``).
        audit: the audit log of starts and repeats; None: nothing is recorded.
        ownership: which versions own their skill's name (``sandbox.bindings``).
        containment: told the isolation each result ran under (the mode in force).

    Raises:
        ConfigError: the base environment or a skill's secrets are not valid settings.
    """

    def __init__(
        self,
        *,
        store: ArtifactStore,
        pool: SandboxPool,
        metrics: ManagerMetrics,
        skill_secrets: Mapping[str, Mapping[str, str]] | None = None,
        default_timeout: float = 60.0,
        claim_lease: float = 20.0,
        clock_skew: float = 0.0,
        manager_id: str | None = None,
        environments: EnvironmentBuilder | None = None,
        egress: EgressService | None = None,
        trust: TrustSettings | None = None,
        audit: AuditLog | None = None,
        ownership: SkillOwnership | None = None,
        containment: Containment | None = None,
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._default_limits = ExecutionLimits(timeout_seconds=default_timeout)
        self._environments = RunEnvironments(environments, store=store, metrics=metrics)
        secrets = RunSecrets(skill_secrets)
        self._secrets = secrets
        self._grants = EgressGrants(egress, secrets)
        self._admission = Admission(
            store,
            trust=trust if trust is not None else TrustSettings(),
            ownership=ownership if ownership is not None else SkillOwnership(store),
            secrets=secrets,
            grants=self._grants,
        )
        self._packages = Packages(store)
        self._preparation = RunPreparation(
            store,
            packages=self._packages,
            admission=self._admission,
            environments=self._environments,
            grants=self._grants,
            secrets=secrets,
            default_limits=self._default_limits,
        )
        manager_id = manager_id or uuid.uuid4().hex
        self._claims = Claims(
            store, lease=claim_lease, holder="manager", holder_id=manager_id, clock_skew=clock_skew
        )
        self._results = StoredResults(store, self._claims, metrics=metrics, secrets=secrets)
        self._audit = RunAudit(audit, manager_id=manager_id)
        self._executor = ExecutorClient(store=store, masker=secrets.masker)
        self._inflight = InflightRuns(self._executor)
        self._runner = SandboxRunner(
            pool=pool,
            executor=self._executor,
            claims=self._claims,
            results=self._results,
            audit=self._audit,
            secrets=secrets,
            metrics=metrics,
            containment=containment,
        )

    def use_registry(self, skills: Iterable[Skill]) -> None:
        """Take the manager's library as scanned now: the versions of its directory skills
        that their secrets, credentials and network bind to (``sandbox.bindings``)."""
        self._admission.use_registry(skills)

    async def close(self) -> None:
        """Cancel what is running (builds of environments too), close the HTTP client, and
        close the audit log: its queued records are written and its newest one is anchored in
        a checkpoint."""
        for execution_id in self._inflight.ids():
            await self.cancel(execution_id)
        await self._environments.aclose()
        await self._executor.aclose()
        await self._audit.aclose()

    # --- the public operations -------------------------------------------------------------

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request` once; a repeat of its execution_id returns the first outcome.

        Its log lines and its span carry the execution id, skill and script.

        Raises:
            ExecutionRejectedError: the request is invalid (unknown skill, bad path, foreign
                input...); nothing ran and the id stays free.
            ExecutionConflictError: the id was used with a different request, or its first
                execution was interrupted.
            ManagerRefusedError: the caller names another store than this manager's (409).
            PoolExhaustedError: no sandbox became free in time; nothing ran, retry later.
            AuditUnavailableError: the start's audit record cannot be stored; the script was
                not started and the id stays free, retry later (503 ``audit_unavailable``).
        """
        fields = {
            "run_id": request.run_id,  # runs/{run_id}/
            "execution_id": request.execution_id,
            "skill": request.skill,
            "script": request.script,
        }
        with span("sandbox execute", fields=fields), bound(**fields):
            return await self._execute_once(request)

    async def prepare_environment(self, skill: str, version: str) -> PreparedEnvironment:
        """Build (once) the environment of a published skill version's dependencies, as its
        first run would: ``skillweave skills build`` and uploads ask for it ahead of use.

        Raises:
            ExecutionRejectedError: 404 the version is not published; 422 its dependencies
                cannot be used (the message says why: a declaration, a failed build naming
                the package, or builds switched off); 409 this manager prepares none.
        """
        self._environments.check_provided()
        ref = await self._store.stat(keys.skill_package_key(skill, version))
        if ref is None:
            raise ExecutionRejectedError(
                404, f"skill {skill!r} version {version[:12]} is not published"
            )
        package = await self._packages.get(ref)
        await self._admission.check(skill, version, package)
        return await self._environments.prepare(skill, version, package.data)

    async def state(self, execution_id: str) -> ExecutionState | None:
        """Running or finished; None when the id is unknown."""
        if execution_id in self._inflight:
            return ExecutionState(execution_id=execution_id, state="running")
        record = await self._results.read(execution_id)
        if record is None:
            return None
        return ExecutionState(
            execution_id=execution_id,
            state="finished",
            result=self._secrets.mask(record.result),
        )

    async def cancel(self, execution_id: str) -> bool:
        """Stop a running execution (its whole process tree); False when it is not running."""
        return await self._inflight.cancel(execution_id)

    # --- the steps ------------------------------------------------------------------------

    async def _execute_once(self, request: ExecuteRequest) -> ExecutionResult:
        if request.store_id is not None:
            own = await store_identity(self._store)
            if request.store_id != own:
                raise ManagerRefusedError(  # the operator's to fix, never the model's
                    f"this manager works on the store {own}, the caller on {request.store_id}: "
                    "give every process of the deployment the same STORAGE__ settings",
                    refused="store",
                    status=409,
                )
        # Without limits it runs under this manager's: the same request as one that named them
        # (as workers did before the limit became the manager's alone).
        fingerprint = Fingerprint.of(request, default_limits=self._default_limits)
        try:  # a name no key can hold ('ｐｒｏｂｅ-ａ') was never published: nothing to run
            package_key = keys.skill_package_key(request.skill, request.version)
        except InvalidKeyError as exc:
            raise ExecutionRejectedError(422, f"skill {request.skill!r}: {exc}") from None
        # The package is looked up beside the stored result (it is needed unless there is one).
        stored, package_ref = await asyncio.gather(
            self._results.stored(request.execution_id, fingerprint),
            self._store.stat(package_key),
            return_exceptions=True,
        )
        if isinstance(stored, BaseException):
            raise stored
        if stored is not None:
            await self._audit.record_repeat(request, "stored")
            return stored
        if isinstance(package_ref, BaseException):
            raise package_ref
        running = self._inflight.get(request.execution_id)
        if running is not None:
            other = Fingerprint.of(running.request, default_limits=self._default_limits)
            if not (fingerprint.matches(other.value) or other.matches(fingerprint.value)):
                raise ExecutionConflictError(request.execution_id, "used with a different request")
            self._metrics.deduplicated.inc()
            joined = await asyncio.shield(running.future)
            await self._audit.record_repeat(request, "joined")  # answered: after the run's start
            return joined

        entry = self._inflight.begin(request)
        try:
            result = await self._run(entry, fingerprint, package_ref)
        except asyncio.CancelledError:
            entry.future.cancel()
            raise
        except Exception as exc:
            entry.future.set_exception(exc)
            entry.future.exception()  # mark retrieved: waiters re-raise it themselves
            if isinstance(exc, ExecutionInProgressError):
                await self._audit.record_repeat(request, "in_progress")
            raise
        else:
            entry.future.set_result(result)
            return result
        finally:
            self._inflight.end(request.execution_id)

    async def _run(
        self, entry: InflightRun, fingerprint: Fingerprint, package_ref: ArtifactRef | None
    ) -> ExecutionResult:
        prepared = await self._preparation.prepare(entry.request, package_ref)
        try:
            return await self._runner.run(
                entry, fingerprint, prepared.run, unbound=prepared.unbound
            )
        finally:
            await self._grants.close(prepared.grant)
