"""Running scripts exactly once: :class:`ExecutionService`, behind ``/sandbox/execute``.

An ``execution_id`` is an idempotency key (jobs send ``skillweave.agent.identity.execution_key``,
stable across retries). Three layers make a repeated key return the first outcome and never run
a finished script again:

1. **Stored result.** Every finished execution (succeeded, failed, timed out, cancelled, or an
   executor error) is written to the artifact store; a repeat reads it back, also after a manager
   restart.
2. **In flight.** A repeat that arrives while the first is still running awaits the same future.
3. **Claim.** Once a sandbox is in hand, and just before the script is handed to it, a claim
   record is created with an atomic put-if-absent: from then on the script may run. The
   manager renews the claim while the script runs. A request that loses the claim gives its
   sandbox back unused and returns the stored result when there is one; while the claim is
   renewed (another manager runs it now) it gets :class:`ExecutionInProgressError` and asks
   again after the Retry-After; once the claim lapsed unrenewed (its manager stopped, and its
   sandbox with it), the next attempt is claimed, atomically again, and the script runs. That
   run is safe: a sandbox reaches nothing outside itself, and outputs are collected only from
   a run that finished, so the interrupted run left nothing behind. Nothing is written while
   a request waits for a sandbox, so a request refused for want of one (503) leaves its id
   free.

The manager moves every byte: it reads the skill package (by name and pinned version) and the
input artifacts from the store, pushes them to the sandbox, fetches declared outputs (files under
``outputs/``) and over-cap stdout/stderr back, and stores them as artifacts of the run. Sandboxes
never see store credentials. Per-skill secrets join only that skill's environment, bound to
its one canonical name and its owner's versions (``skillweave.sandbox.bindings``: a run that
is not bound gets no secrets, credentials or network, and says why in the log and its audit
record); every
configured secret is masked (``skillweave.sandbox.masking``) in each result before it is stored
or answered, and in each full stdout/stderr log after its transfer was verified and before it
is stored, so the log's artifact ref describes the masked bytes.

**The audit log counts truth.** Each script start is one ``execution`` record, written where
the start is decided: once the claim of the key is won, and before the script may begin, so
nothing runs unrecorded. **An execution whose ``execution`` audit record cannot be stored is
refused before anything runs**: the script is not started, the claim is withdrawn (the id
stays free) and the request gets :class:`~skillweave.errors.AuditUnavailableError`, which
``/sandbox/execute`` answers 503 ``audit_unavailable`` with a Retry-After
(``AUDIT_RETRY_SECONDS``) and one line naming the store's error; a caller waits and asks
again, and the same request then runs once and is recorded once. (Each writer appends to a
chain of its own, so no race can be lost: what remains is the store failing.) A request
answered without a start is an ``execution_repeat``
record saying how it was answered (:data:`RepeatAnswer`): from the ``stored`` result, with
the result of this manager's run of it (``joined``), or refused as ``in_progress`` (another
manager's run holds the claim). A request refused (invalid, a conflict, no sandbox free)
started nothing and is not recorded. Every record names this manager's id
(``SANDBOX__MANAGER_ID``) as its actor. A repeat's record is best effort (logged when it
cannot be written): nothing ran, and the start it repeats is in the log already.

The pieces live beside it: ``claims`` (the store claim with its renewed lease, shared with
environment builds), ``executor_client`` (the executor protocol), ``records`` (the stored
record and the request fingerprint) and ``cache`` (the bounded caches of packages and specs).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import time
import uuid
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel, Field

from mcp_manager.backends import Sandbox
from mcp_manager.cache import BoundedCache
from mcp_manager.claims import Claim, ClaimRecord, Claims
from mcp_manager.containment import Containment
from mcp_manager.egress import EgressService, declared_network
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.executor_client import ExecutorClient, Handover, SandboxRun
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool
from mcp_manager.records import ExecutionRecord, ExecutionState, Fingerprint, result_for
from skillweave.agent.rendering import one_line
from skillweave.config import TrustSettings
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    AuditEntryError,
    AuditLogError,
    AuditUnavailableError,
    ConfigError,
    DependencyError,
    EgressPolicyError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    ManagerRefusedError,
    PackageError,
    SandboxLostError,
    SignatureError,
    SkillEnvironmentError,
    StorageError,
)
from skillweave.sandbox.bindings import SkillOwnership, check_bound_names, configured_for
from skillweave.sandbox.masking import mask_result, output_masker
from skillweave.sandbox.models import (
    EXECUTION_ID_VARIABLE,
    EgressGrant,
    ExecuteRequest,
    ExecutionLimits,
    ExecutionResult,
    ExecutorRequest,
)
from skillweave.sandbox.problems import AUDIT_RETRY_SECONDS
from skillweave.sandbox.validation import check_env, check_run, check_text, clean_script
from skillweave.skills.dependencies import (
    DependencySpec,
    base_environment,
    package_dependencies,
)
from skillweave.skills.model import Skill
from skillweave.skills.names import bound_name
from skillweave.skills.package import archive_version
from skillweave.skills.signing import check_trust, parse_signature
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.base import ArtifactRef, ArtifactStore
from skillweave.storage.identity import store_identity
from skillweave.telemetry import bound
from skillweave.telemetry.tracing import span

__all__ = [
    "ExecutionService",
    "ExecutionState",
    "PreparedEnvironment",
    "RepeatAnswer",
    "audit_cause",
]

logger = logging.getLogger("skillweave.manager")

_PACKAGE_CACHE_BYTES: Final = 128 * 1024 * 1024
_SPEC_CACHE: Final = 1024
"""Dependency specs kept, by skill version (a version is its content: never stale)."""
_KEEP_ATTEMPTS: Final = 4
_MASK_INLINE_CHARS: Final = 64 * 1024
"""A result's inline stdout and stderr up to this many characters are masked on the event loop."""
_KEEP_BACKOFF_SECONDS: Final = 0.25
_JSON: Final = "application/json"
_CAUSE_CHARS: Final = 300
"""The store's error in a refusal's one line is clipped to this many characters."""

RepeatAnswer = Literal["stored", "joined", "in_progress"]
"""How a request that started nothing was answered (``answered`` of its ``execution_repeat``
audit record): with the stored result; by waiting for this manager's run of the same id; or
"in progress", another manager's run holding the claim (the caller asks again later)."""


@dataclass(eq=False)
class _Inflight:
    request: ExecuteRequest
    future: asyncio.Future[ExecutionResult]
    sandbox: Sandbox | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True, slots=True)
class _Package:
    """A skill package kept in memory: its hash (checked against the store's ref), its bytes,
    the paths inside it, and the version its files hash to (``archive_version``), which must be
    the version it is stored under."""

    sha256: str
    data: bytes
    names: frozenset[str]
    version: str


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A skill version's packed environment, and whether this request built it."""

    data: bytes
    built: bool


async def _dropped(sending: asyncio.Future[ExecutionResult]) -> None:
    """Stop a run's request before its end was sent (the script never started); whatever
    it came to is moot."""
    sending.cancel()
    await asyncio.wait([sending])
    if not sending.cancelled():
        sending.exception()  # retrieved: it ended before the cancel reached it


def audit_cause(exc: AuditLogError) -> str:
    """What a refusal for want of an audit record quotes of the log's error (which names the
    store's): one line, clipped."""
    return one_line(str(exc), _CAUSE_CHARS)


def _package_names(package: bytes) -> set[str]:
    """Paths inside the package, relative to the skill folder (one top folder is stripped)."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        return {n.split("/", 1)[1] for n in names}
    return set(names)


def _base_environment(environments: EnvironmentBuilder | None) -> DependencySpec:
    """The operator's base environment (``sandbox.environments.base_python``, ``base_node``).

    Raises:
        ConfigError: a base requirement is invalid (the setting is named).
    """
    if environments is None:
        return DependencySpec()
    settings = environments.settings
    try:
        return base_environment(settings.base_python, settings.base_node)
    except DependencyError as exc:
        raise ConfigError(f"sandbox.environments (SANDBOX__ENVIRONMENTS__BASE_*): {exc}") from None


BASE_ENVIRONMENT: Final = "skillweave-base"
"""Whose environment the base alone is, in the store's keys. A skill of that name shares the
folder harmlessly: keys end in the digest of what is installed, so one key is one content."""


def _input_name(ref: ArtifactRef) -> str:
    """Where an input lands under ``inputs/``: its path in the run (an output under the name
    its script gave it)."""
    if "/inputs/" in ref.key:
        return ref.key.split("/inputs/", 1)[1]
    if "/outputs/" in ref.key:
        return keys.decode_output_path(ref.key.split("/outputs/", 1)[1])
    return ref.key.rsplit("/", 1)[-1]


class PreparedEnvironment(BaseModel):
    """``POST /sandbox/environments``: a skill version's environment, ready."""

    skill: str
    version: str
    dependencies: dict[str, object]
    needed: bool = Field(description="False: the skill declares no dependencies.")
    built: bool = Field(description="True: built now; False: it was ready (or not needed).")
    bytes: int = Field(description="Size of the packed environment sent with each run.")
    seconds: float = Field(description="How long preparing took (a build, or a lookup).")


def _secrets_by_name(
    skill_secrets: Mapping[str, Mapping[str, str]],
) -> dict[str, Mapping[str, str]]:
    """The per-skill secrets by the skill's canonical name (``sandbox.bindings``).

    Raises:
        ConfigError: a configured skill name is not canonical (one line, with its canonical
            form), or its secrets are not a valid environment.
    """
    check_bound_names("SANDBOX__SKILL_SECRETS", skill_secrets)
    for name, values in skill_secrets.items():
        try:
            check_env(values)  # what every run of the skill will pass to the executor
        except ExecutionRejectedError as exc:
            raise ConfigError(f"SANDBOX__SKILL_SECRETS of {name!r}: {exc.reason}") from None
    return dict(skill_secrets)


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
        containment: told the isolation each result ran under (the mode in force).
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
        self._containment = containment
        self._ownership = ownership if ownership is not None else SkillOwnership(store)
        self._trust = trust if trust is not None else TrustSettings()
        self._trust_warned: set[tuple[str, str]] = set()
        self._unbound_warned: set[tuple[str, str]] = set()
        self._audit = audit
        self._environments = environments
        self._egress = egress
        self._base = _base_environment(environments)
        self._specs: BoundedCache[str, DependencySpec] = BoundedCache(max_entries=_SPEC_CACHE)
        self._pool = pool
        self._metrics = metrics
        self._secrets = {k: dict(v) for k, v in (skill_secrets or {}).items()}
        self._masker = output_masker(self._secrets, warn=logger)  # warns of unmaskable ones
        self._secrets_by_key = _secrets_by_name(self._secrets)
        self._default_limits = ExecutionLimits(timeout_seconds=default_timeout)
        self._inflight: dict[str, _Inflight] = {}
        # Newest first kept, even alone over the bound: the run about to start needs it.
        self._packages: BoundedCache[str, _Package] = BoundedCache(
            max_weight=_PACKAGE_CACHE_BYTES, weigh=lambda package: len(package.data)
        )
        self._manager_id = manager_id or uuid.uuid4().hex
        self._claims = Claims(
            store,
            lease=claim_lease,
            holder="manager",
            holder_id=self._manager_id,
            clock_skew=clock_skew,
        )
        self._executor = ExecutorClient(store=store, masker=self._masker)

    def use_registry(self, skills: Iterable[Skill]) -> None:
        """Take the manager's library as scanned now: the versions of its directory skills
        that their secrets, credentials and network bind to (``sandbox.bindings``)."""
        self._ownership.use_registry(skills)

    async def close(self) -> None:
        """Cancel what is running (builds of environments too), close the HTTP client, and
        close the audit log: its queued records are written and its newest one is anchored in
        a checkpoint."""
        for execution_id in list(self._inflight):
            await self.cancel(execution_id)
        if self._environments is not None:
            await self._environments.aclose()
        await self._executor.aclose()
        if self._audit is not None:
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
            "job_id": request.run_id,  # runs/{job_id}/: a job's run id is its job id
            "execution_id": request.execution_id,
            "skill": request.skill,
            "script": request.script,
        }
        with span("sandbox execute", fields=fields), bound(**fields):
            return await self._execute_once(request)

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
            self._stored(request.execution_id, fingerprint),
            self._store.stat(package_key),
            return_exceptions=True,
        )
        if isinstance(stored, BaseException):
            raise stored
        if stored is not None:
            await self._record_repeat(request, "stored")
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
            await self._record_repeat(request, "joined")  # answered: after the run's start
            return joined

        entry = _Inflight(request, asyncio.get_running_loop().create_future())
        self._inflight[request.execution_id] = entry
        try:
            result = await self._run(entry, fingerprint, package_ref)
        except asyncio.CancelledError:
            entry.future.cancel()
            raise
        except Exception as exc:
            entry.future.set_exception(exc)
            entry.future.exception()  # mark retrieved: waiters re-raise it themselves
            if isinstance(exc, ExecutionInProgressError):
                await self._record_repeat(request, "in_progress")
            raise
        else:
            entry.future.set_result(result)
            return result
        finally:
            self._inflight.pop(request.execution_id, None)

    async def prepare_environment(self, skill: str, version: str) -> PreparedEnvironment:
        """Build (once) the environment of a published skill version's dependencies, as its
        first run would: ``skillweave skills build`` and uploads ask for it ahead of use.

        Raises:
            ExecutionRejectedError: 404 the version is not published; 422 its dependencies
                cannot be used (the message says why: a declaration, a failed build naming
                the package, or builds switched off); 409 this manager prepares none.
        """
        if self._environments is None:
            raise ExecutionRejectedError(409, "this manager does not prepare environments")
        ref = await self._store.stat(keys.skill_package_key(skill, version))
        if ref is None:
            raise ExecutionRejectedError(
                404, f"skill {skill!r} version {version[:12]} is not published"
            )
        package = await self._package(ref)
        await self._admit(skill, version, package)
        started = time.perf_counter()
        spec = await self._spec(self._environments, version=version, package=package.data)
        prepared = await self._environment(skill=skill, version=version, spec=spec)
        return PreparedEnvironment(
            skill=skill,
            version=version,
            dependencies=spec.with_base(self._base).to_json(),
            needed=prepared is not None,
            built=prepared is not None and prepared.built,
            bytes=len(prepared.data) if prepared is not None else 0,
            seconds=round(time.perf_counter() - started, 3),
        )

    async def state(self, execution_id: str) -> ExecutionState | None:
        """Running or finished; None when the id is unknown."""
        if execution_id in self._inflight:
            return ExecutionState(execution_id=execution_id, state="running")
        record = await self._read_record(execution_id)
        if record is None:
            return None
        return ExecutionState(
            execution_id=execution_id,
            state="finished",
            result=mask_result(record.result, self._masker),
        )

    async def cancel(self, execution_id: str) -> bool:
        """Stop a running execution (its whole process tree); False when it is not running."""
        entry = self._inflight.get(execution_id)
        if entry is None:
            return False
        entry.cancelled = True
        if entry.sandbox is not None:
            await self._executor.cancel(entry.sandbox)
        return True

    # --- the steps ------------------------------------------------------------------------

    async def _read_record(self, execution_id: str) -> ExecutionRecord | None:
        ref = await self._store.stat(keys.execution_result_key(execution_id))
        if ref is None:
            return None
        return ExecutionRecord.model_validate_json(await self._store.get_bytes(ref))

    async def _stored(self, execution_id: str, fingerprint: Fingerprint) -> ExecutionResult | None:
        record = await self._read_record(execution_id)
        if record is None:
            return None
        if not fingerprint.matches(record.fingerprint):
            raise ExecutionConflictError(execution_id, "used with a different request")
        self._metrics.deduplicated.inc()
        # Masked again: a result stored before masking, or before a secret was configured.
        return mask_result(record.result, self._masker)

    async def _validate(
        self, request: ExecuteRequest, package_ref: ArtifactRef | None
    ) -> tuple[bytes, list[tuple[str, bytes]]]:
        # The executor's own rules, first: a request it would refuse never takes the claim.
        check_text(request.execution_id, "execution_id")
        check_text(request.skill, "skill")
        for ref in request.inputs:
            check_text(ref.key, "input key")
        check_run(
            script=request.script,
            args=request.args,
            env=self._env_of(request, owned=True),  # the largest it can be
            inputs=[_input_name(ref) for ref in request.inputs],
            input_bytes=sum(ref.size for ref in request.inputs),
        )
        script = clean_script(request.script)
        if package_ref is None:
            raise ExecutionRejectedError(
                404, f"skill {request.skill!r} version {request.version[:12]} is not published"
            )
        package = await self._package(package_ref)
        await self._admit(request.skill, request.version, package)
        if script not in package.names:
            raise ExecutionRejectedError(
                404, f"script {script!r} is not in skill {request.skill!r}"
            )
        inputs: list[tuple[str, bytes]] = []
        for ref in request.inputs:
            if not keys.belongs_to_run(ref.key, request.run_id):
                raise ExecutionRejectedError(
                    403, f"input {ref.key!r} does not belong to run {request.run_id!r}"
                )
            name = _input_name(ref)
            try:
                inputs.append((name, await self._store.get_bytes(ref)))
            except ArtifactNotFoundError:
                raise ExecutionRejectedError(404, f"input {ref.key!r} does not exist") from None
            except ArtifactIntegrityError:
                raise ExecutionRejectedError(
                    409, f"input {ref.key!r} does not match its ref (size or sha256)"
                ) from None
        return package.data, inputs

    async def _package(self, ref: ArtifactRef) -> _Package:
        """A package's bytes and file names, kept for the next run of the same version.

        A version is the hash of the package's content, so a kept package is never stale; the
        store is still asked first (`_validate` stats the key), so an unpublished version is
        refused as before.
        """
        kept = self._packages.get(ref.key)
        if kept is not None and kept.sha256 == ref.sha256:
            return kept
        data = await self._store.get_bytes(ref)
        try:
            _, version = await asyncio.to_thread(archive_version, data)
        except PackageError as exc:
            raise ExecutionRejectedError(
                409, f"{ref.key}: not a package that can run: {exc}"
            ) from None
        package = _Package(ref.sha256, data, frozenset(_package_names(data)), version)
        self._packages.put(ref.key, package)
        return package

    async def _admit(self, skill: str, version: str, package: _Package) -> None:
        """Refuse a package whose files are not the version it is stored under (changed in
        the store after it was published), or whose signature the trust policy refuses
        (``skills.trust``; its signature is ``keys.skill_signature_key`` beside it).

        Raises:
            ExecutionRejectedError: 409 changed, 403 refused by the policy (one line each).
        """
        if package.version != version:
            raise ExecutionRejectedError(
                409,
                f"skill {skill!r} version {version[:12]}: the stored package's files hash to "
                f"{package.version[:12]}; it was changed after it was published and is not run",
            )
        signature = None
        ref = await self._store.stat(keys.skill_signature_key(skill, version))
        try:
            if ref is not None:
                signature = parse_signature(await self._store.get_bytes(ref), source=ref.key)
            warning = check_trust(signature, name=skill, version=version, policy=self._trust)
        except SignatureError as exc:
            raise ExecutionRejectedError(403, str(exc)) from None
        if warning is not None and (skill, version) not in self._trust_warned:
            self._trust_warned.add((skill, version))  # once per version, not per run
            logger.warning("%s", warning)

    async def _spec(
        self, environments: EnvironmentBuilder, *, version: str, package: bytes
    ) -> DependencySpec:
        """What the skill version declares, read once per version.

        Raises:
            ExecutionRejectedError: 422, the declaration cannot be used.
        """
        spec = self._specs.get(version)
        if spec is None:
            try:
                spec = await asyncio.to_thread(
                    package_dependencies,
                    package,
                    max_dependencies=environments.settings.max_dependencies,
                    infer=environments.settings.infer_imports,
                )
            except DependencyError as exc:
                raise ExecutionRejectedError(422, str(exc)) from exc
            self._specs.put(version, spec)
        return spec

    async def _environment(
        self, *, skill: str, version: str, spec: DependencySpec
    ) -> _Prepared | None:
        """The packed environment of the skill's dependencies and the operator's base
        environment, built on first use; None when there are none (or this manager provides
        none). It is stored under the skill and the digest of what it installs, so a new
        version with the same dependencies reuses it, and a change of the base or of
        inference is a new one; the base alone (a skill that needs nothing else) is one
        environment for every such skill, built once.

        Raises:
            ExecutionRejectedError: the dependencies cannot be used (a bad or conflicting
                declaration, a failed build, builds off and none prebuilt); nothing ran and
                the id stays free, so the run can be asked again once that is fixed.
        """
        if self._environments is None:
            return None
        full = spec.with_base(self._base)
        if full.empty:
            return None
        owner = BASE_ENVIRONMENT if spec.empty else skill
        started = time.perf_counter()
        try:
            prepared = await self._environments.ensure(owner, full.digest(), full)
        except (DependencyError, SkillEnvironmentError) as exc:
            if not spec.inferred:
                raise ExecutionRejectedError(422, str(exc)) from exc
            # Inference is a convenience: where no environment can be had for what was
            # inferred (builds off, no build sandbox), run as without it.
            logger.warning(
                "skill %s: no environment with the packages inferred from its imports (%s): %s;"
                " running with its declared dependencies only",
                skill,
                ", ".join(spec.inferred),
                exc,
            )
            return await self._environment(skill=skill, version=version, spec=spec.declared())
        if prepared is None:
            return None
        if prepared.built:
            self._metrics.environment_builds.inc()
        data = await self._store.get_bytes(prepared.ref)
        self._metrics.environment_seconds.labels(built=str(prepared.built).lower()).observe(
            time.perf_counter() - started
        )
        return _Prepared(data, prepared.built)

    async def _run(
        self, entry: _Inflight, fingerprint: Fingerprint, package_ref: ArtifactRef | None
    ) -> ExecutionResult:
        request = entry.request
        package, inputs = await self._validate(request, package_ref)
        unbound = await self._unbound(request)
        # Before a sandbox is taken: a first use may build for minutes, holding none.
        environment = await self._environment_of(request, package)
        owned = unbound is None
        grant = await self._egress_grant(request, package) if owned else None
        try:
            run = self._sandbox_run(
                request, package, inputs, environment, egress=grant, owned=owned
            )
            return await self._run_in_sandbox(entry, fingerprint, run, unbound=unbound)
        finally:
            if grant is not None and self._egress is not None:
                await self._egress.close_grant(grant.token)

    async def _unbound(self, request: ExecuteRequest) -> str | None:
        """Why the run is not given its skill's secrets, credentials and network (its name is
        not canonical, or the version is not its owner's: ``sandbox.bindings``), logged once
        per version (every run's audit record has it); None when it is given them, or nothing
        is configured for its name."""
        if bound_name(request.skill) is not None and not await self._configured(request.skill):
            return None  # nothing to give: who owns the name does not matter
        refusal = await self._ownership.refusal(request.skill, request.version)
        if refusal is not None and (request.skill, request.version) not in self._unbound_warned:
            self._unbound_warned.add((request.skill, request.version))  # once per version
            logger.warning(
                "skill %r version %s runs without secrets, credentials or network: %s",
                request.skill,
                request.version[:12],
                refusal,
            )
        return refusal

    async def _configured(self, skill: str) -> bool:
        """Whether secrets, credentials or a network approval are configured for `skill`."""
        if configured_for(self._secrets_by_key, skill):
            return True
        if self._egress is None:
            return False
        return bool(self._egress.bound_secrets(skill)) or (
            await self._egress.approval_of(skill) is not None
        )

    async def _egress_grant(self, request: ExecuteRequest, package: bytes) -> EgressGrant | None:
        """The run's network, when its skill declares destinations an operator approved
        (``sandbox.egress``); None: no network at all, as every other run.

        Raises:
            ExecutionRejectedError: 422, the skill's network declaration cannot be read.
        """
        if self._egress is None:
            return None
        approval = await self._egress.approval_of(request.skill)
        if approval is None:
            return None
        try:
            declared = await asyncio.to_thread(declared_network, package)
        except EgressPolicyError as exc:
            raise ExecutionRejectedError(422, f"skill {request.skill!r}: {exc}") from exc
        if not declared:
            return None
        secrets = configured_for(self._secrets_by_key, request.skill) or {}
        return self._egress.open_grant(
            request, declared=declared, approval=approval, secrets=secrets
        )

    async def _run_in_sandbox(
        self, entry: _Inflight, fingerprint: Fingerprint, run: SandboxRun, *, unbound: str | None
    ) -> ExecutionResult:
        request = entry.request
        sandbox, _ = await self._pool.claim()
        sending, handover, go = await self._begin(sandbox, run)
        claim = await self._claim_beside(request, fingerprint, sandbox, sending)
        if isinstance(claim, ExecutionResult):
            await self._record_repeat(request, "stored")  # another run finished it meanwhile
            return claim
        if claim.taken_over:
            self._metrics.claims_taken_over.inc()
        # From here on every way out ends in one of two states: a stored result (what ran, or
        # the failure that ended it, with its class), or a withdrawn claim when the script
        # never reached a sandbox (or its sandbox was lost mid-run: see SandboxLostError).
        # Never a claim left with no result, which would run the script again once it lapsed.
        entry.sandbox = sandbox
        try:
            if entry.cancelled:
                await _dropped(sending)
                result = result_for(request, status="cancelled", error="cancelled before start")
            else:
                await self._record_start(request, unbound=unbound, claim=claim, sending=sending)
                async with self._claims.renewing(claim):
                    try:
                        go.set_result(None)
                        result = await sending
                    except SandboxLostError:
                        await self._claims.withdraw(claim)
                        self._metrics.executions.labels(outcome="lost").inc()
                        logger.warning(
                            "sandbox %s lost during %s", sandbox.id, request.execution_id
                        )
                        raise
                    except Exception as exc:
                        if not handover.sent:  # the script never reached a sandbox: free the id
                            await self._claims.withdraw(claim)
                            raise
                        logger.exception(
                            "execution %s failed after its script ran", request.execution_id
                        )
                        result = self._failed_after_run(request, exc)
            # Before anything keeps or shows it.
            try:
                result = await self._masked(result)
            except Exception as exc:  # kept without the text that could not be masked
                logger.exception("execution %s: output not masked", request.execution_id)
                result = self._failed_after_run(request, exc)
            await self._keep(request, fingerprint, result, claim)
        finally:
            # After the result is stored: destroying the sandbox and starting its replacement
            # are work for the host, which the caller need not wait behind.
            await self._pool.release(sandbox)
        self._metrics.executions.labels(outcome=result.status).inc()
        if self._containment is not None:
            self._containment.observe(result.isolation)
        if result.timed_out:
            self._metrics.timeouts.inc()
        self._metrics.execution_seconds.observe(time.perf_counter() - entry.started)
        return result

    async def _record_start(
        self,
        request: ExecuteRequest,
        *,
        unbound: str | None,
        claim: Claim,
        sending: asyncio.Future[ExecutionResult],
    ) -> None:
        """The start's ``execution`` audit record, once its claim is won and before its script
        may begin: nothing runs unrecorded, and a start that cannot be recorded is refused.

        Raises:
            AuditUnavailableError: the record was not stored (the log's error names the
                store's); the claim is withdrawn and the request dropped before its end
                (nothing ran, the id stays free).
        """
        if self._audit is None:
            return
        try:
            await self._audit.record(
                "execution",
                skill=request.skill,
                version=request.version,
                job=request.run_id,
                actor=self._manager_id,
                args=request.args,
                script=request.script,
                execution_id=request.execution_id,
                **({"attempt": claim.attempt} if claim.taken_over else {}),
                **({"unbound": unbound} if unbound is not None else {}),
            )
        except BaseException as exc:
            await _dropped(sending)
            try:
                await asyncio.shield(self._claims.withdraw(claim))
            except StorageError as failure:  # unrenewed, it lapses: the id is free after the lease
                logger.warning(
                    "execution %s: claim not withdrawn: %s", request.execution_id, failure
                )
            if isinstance(exc, AuditEntryError):  # the request's fields, not the store
                raise ExecutionRejectedError(
                    422, f"the request cannot be recorded in the audit log: {exc}"
                ) from exc
            if not isinstance(exc, AuditLogError):
                raise
            cause = audit_cause(exc)
            logger.warning(
                "execution %s refused, not started: its audit record cannot be stored: %s",
                request.execution_id,
                cause,
            )
            raise AuditUnavailableError(
                f"the audit log cannot be written ({cause}): the script was not started;"
                " ask again once the store is back",
                retry_after=AUDIT_RETRY_SECONDS,
            ) from exc

    async def _record_repeat(self, request: ExecuteRequest, answered: RepeatAnswer) -> None:
        """An ``execution_repeat`` audit record: `request` started nothing, and was `answered`
        so. Best effort: a record that cannot be written is logged, the answer still given."""
        if self._audit is None:
            return
        try:
            await self._audit.record(
                "execution_repeat",
                skill=request.skill,
                version=request.version,
                job=request.run_id,
                actor=self._manager_id,
                script=request.script,
                execution_id=request.execution_id,
                answered=answered,
            )
        except AuditLogError as exc:
            logger.warning(
                "execution %s: its repeat (%s) is not in the audit log: %s",
                request.execution_id,
                answered,
                exc,
            )

    async def _begin(
        self, sandbox: Sandbox, run: SandboxRun
    ) -> tuple[asyncio.Future[ExecutionResult], Handover, asyncio.Future[None]]:
        """Send `run` to `sandbox`, all but its end, which waits for the returned `go`.

        The sandbox reads the request and fills its workspace while the claim is written, and
        the script can start only once `go` is set, after the claim is durable. The request is
        handed to the socket before the claim's write begins, so that the two do not contend
        for this process. A request that does not get the claim is dropped unfinished
        (nothing ran), and its sandbox, which read part of it, is not reused.

        Raises:
            SandboxLostError: the sandbox cannot be reached (it is given back).
        """
        handover = Handover()
        go: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            started = await self._executor.start(sandbox, run, handover=handover, go=go)
        except BaseException as exc:
            await asyncio.shield(self._pool.release(sandbox))
            if isinstance(exc, SandboxLostError):
                self._metrics.executions.labels(outcome="lost").inc()
                logger.warning("sandbox %s lost before %s", sandbox.id, run.request.execution_id)
            raise
        return asyncio.ensure_future(started), handover, go

    async def _claim_beside(
        self,
        request: ExecuteRequest,
        fingerprint: Fingerprint,
        sandbox: Sandbox,
        sending: asyncio.Future[ExecutionResult],
    ) -> Claim | ExecutionResult:
        """`_claim`, while `sending` gives `sandbox` the run's request; without the claim, the
        request is dropped before its end and the sandbox destroyed."""
        try:
            claim = await self._claim(request.execution_id, fingerprint)
        except BaseException:
            await self._drop(sending, sandbox)
            raise
        if isinstance(claim, ExecutionResult):
            await self._drop(sending, sandbox)
        return claim

    async def _drop(self, sending: asyncio.Future[ExecutionResult], sandbox: Sandbox) -> None:
        """Drop a request before its end and destroy its sandbox, even if this is cancelled
        meanwhile (a sandbox left claimed would never go back to the pool)."""
        try:
            await _dropped(sending)
        finally:
            await asyncio.shield(self._pool.release(sandbox))

    async def _masked(self, result: ExecutionResult) -> ExecutionResult:
        """`result` masked: on the event loop when its inline output is small (a thread hop
        costs more than masking a little), else in a thread, so as not to hold the loop up."""
        if len(result.stdout) + len(result.stderr) <= _MASK_INLINE_CHARS:
            return mask_result(result, self._masker)
        return await asyncio.to_thread(mask_result, result, self._masker)

    async def _environment_of(self, request: ExecuteRequest, package: bytes) -> bytes | None:
        """The packed environment a run of `request` is sent with; None: it needs none."""
        if self._environments is None:
            return None
        spec = await self._spec(self._environments, version=request.version, package=package)
        prepared = await self._environment(skill=request.skill, version=request.version, spec=spec)
        return prepared.data if prepared is not None else None

    def _sandbox_run(
        self,
        request: ExecuteRequest,
        package: bytes,
        inputs: list[tuple[str, bytes]],
        environment: bytes | None,
        *,
        egress: EgressGrant | None = None,
        owned: bool = False,
    ) -> SandboxRun:
        """What the sandbox is sent: the request with its skill's secrets when the run is
        `owned` (those bound to a network destination stay with the egress proxy) and its
        limits."""
        env = self._env_of(request, owned=owned)
        if self._egress is not None:
            for name in self._egress.bound_secrets(request.skill):
                env.pop(name, None)
        body = ExecutorRequest(
            script=clean_script(request.script),
            args=request.args,
            env=env,
            limits=request.limits or self._default_limits,
            environment_sha256=hashlib.sha256(environment).hexdigest() if environment else None,
            egress=egress,
        )
        return SandboxRun(
            request=request, body=body, package=package, inputs=inputs, environment=environment
        )

    async def _keep(
        self,
        request: ExecuteRequest,
        fingerprint: Fingerprint,
        result: ExecutionResult,
        claim: Claim,
    ) -> None:
        """Store the result, asking the store again a few times; if it cannot be stored, the
        claim says that the script ran, so that no later request runs it again.

        Raises:
            StorageError: the result could not be stored (the id answers 409 from then on).
        """
        record = ExecutionRecord(fingerprint=fingerprint.value, result=result).encoded()
        key = keys.execution_result_key(request.execution_id)
        for tried in range(1, _KEEP_ATTEMPTS + 1):
            try:
                await self._store.put_bytes(key, record, content_type=_JSON)
                return
            except StorageError as exc:
                failure = exc
                logger.warning(
                    "execution %s: result not stored (try %d): %s", request.execution_id, tried, exc
                )
                await asyncio.sleep(_KEEP_BACKOFF_SECONDS * tried)
        await self._claims.mark_ran(claim)
        raise failure

    async def _claim(self, execution_id: str, fingerprint: Fingerprint) -> Claim | ExecutionResult:
        """Claim the execution; the claim won, or the stored result when another run
        finished it meanwhile.

        Attempt 1 is ``.claim``. A claim that is there already belongs to a run that is going
        on (renewed within the lease: :class:`ExecutionInProgressError`) or to one whose
        manager stopped (not renewed within the lease): that run is over (its sandbox went
        with it, and nothing of it was kept, since a result is stored before anything is
        reported), so the next attempt is claimed, atomically again. Running it again is
        safe: a sandbox reaches nothing outside itself, and its outputs are collected only
        from a run that finished.

        Raises:
            ExecutionConflictError: the id was claimed for a different request, or it was
                interrupted too many times.
            ExecutionInProgressError: another manager's run holds a live claim.
        """

        def check(holder: ClaimRecord) -> None:
            if not fingerprint.matches(holder.fingerprint):
                raise ExecutionConflictError(execution_id, "used with a different request")
            if holder.ran:
                raise ExecutionConflictError(
                    execution_id, "ran, but its result could not be stored; it is not run again"
                )

        async def in_progress(left: float) -> None:
            raise ExecutionInProgressError(execution_id, retry_after=max(1.0, left))

        def interrupted() -> Exception:
            return ExecutionConflictError(
                execution_id,
                f"was interrupted {self._claims.max_attempts} times; it is not run again",
            )

        return await self._claims.acquire(
            lambda attempt: keys.execution_claim_key(execution_id, attempt),
            settled=lambda: self._stored(execution_id, fingerprint),
            check=check,
            wait=in_progress,
            exhausted=interrupted,
            fingerprint=fingerprint.value,
            what=f"execution {execution_id}",
        )

    def _failed_after_run(self, request: ExecuteRequest, exc: Exception) -> ExecutionResult:
        """The terminal result of a run the manager could not finish handling (the error, with
        its class): stored like any other, so the script is not run again."""
        return result_for(
            request,
            status="error",
            error=f"the manager failed after the script ran ({type(exc).__name__}: {exc});"
            " it is not run again",
        )

    def _env_of(self, request: ExecuteRequest, *, owned: bool) -> dict[str, str]:
        """The script's environment from the request: its ``env``, its skill's secrets when
        the run is `owned` (:meth:`_unbound`: exactly its canonical name's), and
        ``SKILLWEAVE_EXECUTION_ID``: the same on every attempt of the run, an idempotency key
        for what the script does outside its sandbox (a run may start again after its manager
        died; its result is kept once)."""
        return {
            **request.env,
            **((configured_for(self._secrets_by_key, request.skill) or {}) if owned else {}),
            EXECUTION_ID_VARIABLE: request.execution_id,
        }
