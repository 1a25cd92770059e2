"""Running scripts exactly once: :class:`ExecutionService`, behind ``/sandbox/execute``.

An ``execution_id`` is an idempotency key (the Temporal activity sends ``workflow_id/activity_id``,
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
never see store credentials. Per-skill secrets join only that skill's environment; every
configured secret is masked (``skillweave.sandbox.masking``) in each result before it is stored
or answered, and in each full stdout/stderr log after its transfer was verified and before it
is stored, so the log's artifact ref describes the masked bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import logging
import tempfile
import time
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal
from urllib.parse import quote

import httpx
from pydantic import BaseModel, Field

from mcp_manager.backends import Sandbox
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import SandboxPool
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ConfigError,
    DependencyError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    SandboxLostError,
    SkillEnvironmentError,
    StorageError,
)
from skillweave.sandbox.masking import mask_result, output_masker
from skillweave.sandbox.models import (
    ExecuteRequest,
    ExecutionLimits,
    ExecutionResult,
    ExecutionStatus,
    ExecutorFile,
    ExecutorRequest,
    ExecutorResult,
    OutputArtifact,
    SkippedOutput,
)
from skillweave.sandbox.validation import check_env, check_run, check_text, clean_script
from skillweave.skills.dependencies import DependencySpec, discover_dependencies
from skillweave.skills.names import name_key
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore
from skillweave.telemetry import bound
from skillweave.telemetry.tracing import inject, span

__all__ = ["ExecutionService", "ExecutionState"]

logger = logging.getLogger("skillweave.manager")

_HTTP_GRACE_SECONDS: Final = 30.0
_PACKAGE_CACHE_BYTES: Final = 128 * 1024 * 1024
_SPEC_CACHE: Final = 1024
"""Dependency specs kept, by skill version (a version is its content: never stale)."""
_KEEP_ATTEMPTS: Final = 4
_KEEP_BACKOFF_SECONDS: Final = 0.25
_MAX_CLAIM_ATTEMPTS: Final = 5  # runs of one execution interrupted by stopped managers, at most
_JSON: Final = "application/json"


class ExecutionState(BaseModel):
    """``GET /sandbox/executions/{id}``: running, or finished with its result."""

    execution_id: str
    state: Literal["running", "finished"]
    result: ExecutionResult | None = None


@dataclass
class _Handed:
    """Whether an execution's request was sent to its sandbox (from then on its script may
    have run, and it is never run again)."""

    sent: bool = False


@dataclass(eq=False)
class _Inflight:
    request: ExecuteRequest
    future: asyncio.Future[ExecutionResult]
    sandbox: Sandbox | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.perf_counter)


_ADDED_LIMITS: Final = frozenset({"max_disk_mb"})
"""Fields of ``ExecutionLimits`` added since managers first stored fingerprints (with every
field, defaults included): left out again when a stored fingerprint is checked."""


@dataclass(frozen=True)
class _Fingerprint:
    """What makes two requests of one execution id the same request.

    `value` (what this manager records) leaves out fields at their defaults, so a field added
    later with a default does not make a repeat of an old request look different; `legacy` is
    what earlier managers recorded for the same request, accepted as well, so a store written
    before an upgrade (or an activity retried across one) still gets its stored result.
    """

    value: str
    legacy: str

    def matches(self, recorded: object) -> bool:
        return recorded in (self.value, self.legacy)


def _digest(data: object) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _fingerprint(request: ExecuteRequest) -> _Fingerprint:
    legacy = request.model_dump(mode="json")
    if isinstance(legacy.get("limits"), dict):
        legacy["limits"] = {k: v for k, v in legacy["limits"].items() if k not in _ADDED_LIMITS}
    return _Fingerprint(
        value=_digest(request.model_dump(mode="json", exclude_defaults=True)),
        legacy=_digest(legacy),
    )


def _package_names(package: bytes) -> set[str]:
    """Paths inside the package, relative to the skill folder (one top folder is stripped)."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        return {n.split("/", 1)[1] for n in names}
    return set(names)


_SPEC_FILE_BYTES: Final = 4 * 1024 * 1024
"""Files larger than this are not handed to dependency discovery (which refuses a source
over 1 MiB itself, so an oversized requirements file is still reported)."""


def _dependency_spec(package: bytes, *, max_dependencies: int) -> DependencySpec:
    """What the skill in `package` declares (requirements.txt, PEP 723, package.json, its
    SKILL.md field), relative to the skill folder (one top folder is stripped)."""
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        entries = [i for i in archive.infolist() if not i.is_dir()]
        tops = {i.filename.split("/", 1)[0] for i in entries}
        strip = len(tops) == 1 and all("/" in i.filename for i in entries)
        for info in entries:
            name = info.filename.split("/", 1)[1] if strip else info.filename
            if info.file_size <= _SPEC_FILE_BYTES:  # any file: includes may name any file
                files[name] = archive.read(info)
    return discover_dependencies(files, max_dependencies=max_dependencies)


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
    """The per-skill secrets by the skill name's folded key (``skills.names.name_key``).

    Raises:
        ConfigError: Two configured skill names fold to one key: which skill gets which
            secrets would depend on spelling.
    """
    found: dict[str, tuple[str, Mapping[str, str]]] = {}
    for name, values in skill_secrets.items():
        try:
            check_env(values)  # what every run of the skill will pass to the executor
        except ExecutionRejectedError as exc:
            raise ConfigError(f"SANDBOX__SKILL_SECRETS of {name!r}: {exc.reason}") from None
        key = name_key(name)
        if key in found:
            raise ConfigError(
                f"SANDBOX__SKILL_SECRETS names one skill twice: {found[key][0]!r} and {name!r};"
                " keep one entry per skill"
            )
        found[key] = (name, values)
    return {key: values for key, (_, values) in found.items()}


class ExecutionService:
    """Validates, deduplicates, runs and records script executions.

    Args:
        store: the artifact store (packages, inputs, outputs, results).
        pool: where sandboxes come from.
        metrics: the manager's metrics.
        skill_secrets: per-skill environment secrets (plain values; never logged, and
            masked in every run's output; values too short to mask are warned about here).
        default_timeout: wall time when a request sets no limits.
        claim_lease: how long a claim lives unrenewed (its manager renews it four times as
            often while the script runs); a lapsed claim's execution may run again.
        environments: prepares the environments of skills that declare dependencies (built
            once, stored, sent with each execution); None: dependencies are not provided.
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
        environments: EnvironmentBuilder | None = None,
    ) -> None:
        self._store = store
        self._environments = environments
        self._specs: OrderedDict[str, DependencySpec] = OrderedDict()
        self._pool = pool
        self._metrics = metrics
        self._secrets = {k: dict(v) for k, v in (skill_secrets or {}).items()}
        self._masker = output_masker(self._secrets, warn=logger)  # warns of unmaskable ones
        self._secrets_by_key = _secrets_by_name(self._secrets)
        self._default_limits = ExecutionLimits(timeout_seconds=default_timeout)
        self._inflight: dict[str, _Inflight] = {}
        self._packages: OrderedDict[str, tuple[str, bytes, frozenset[str]]] = OrderedDict()
        self._package_bytes = 0
        self._instance = uuid.uuid4().hex
        self._claim_lease = claim_lease
        self._client = httpx.AsyncClient()

    async def close(self) -> None:
        """Cancel what is running (builds of environments too) and close the HTTP client."""
        for execution_id in list(self._inflight):
            await self.cancel(execution_id)
        if self._environments is not None:
            await self._environments.aclose()
        await self._client.aclose()

    # --- the public operations -------------------------------------------------------------

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request` once; a repeat of its execution_id returns the first outcome.

        Its log lines and its span carry the execution id, skill and script.

        Raises:
            ExecutionRejectedError: the request is invalid (unknown skill, bad path, foreign
                input...); nothing ran and the id stays free.
            ExecutionConflictError: the id was used with a different request, or its first
                execution was interrupted.
            PoolExhaustedError: no sandbox became free in time; nothing ran, retry later.
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
        fingerprint = _fingerprint(request)
        # The package is looked up beside the stored result (it is needed unless there is one).
        stored, package_ref = await asyncio.gather(
            self._stored(request.execution_id, fingerprint),
            self._store.stat(keys.skill_package_key(request.skill, request.version)),
            return_exceptions=True,
        )
        if isinstance(stored, BaseException):
            raise stored
        if stored is not None:
            return stored
        if isinstance(package_ref, BaseException):
            raise package_ref
        running = self._inflight.get(request.execution_id)
        if running is not None:
            if _fingerprint(running.request) != fingerprint:
                raise ExecutionConflictError(request.execution_id, "used with a different request")
            self._metrics.deduplicated.inc()
            return await asyncio.shield(running.future)

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
        package, _ = await self._package(ref)
        request = ExecuteRequest(
            execution_id="prepare", run_id="prepare", skill=skill, version=version, script="-"
        )
        started = time.perf_counter()
        prepared = await self._environment(request, package)
        spec = self._specs[version]
        return PreparedEnvironment(
            skill=skill,
            version=version,
            dependencies=spec.to_json(),
            needed=prepared is not None,
            built=prepared is not None and prepared[1],
            bytes=len(prepared[0]) if prepared is not None else 0,
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
            result=mask_result(ExecutionResult.model_validate(record["result"]), self._masker),
        )

    async def cancel(self, execution_id: str) -> bool:
        """Stop a running execution (its whole process tree); False when it is not running."""
        entry = self._inflight.get(execution_id)
        if entry is None:
            return False
        entry.cancelled = True
        sandbox = entry.sandbox
        if sandbox is not None:
            with contextlib.suppress(httpx.HTTPError):
                await self._client.delete(
                    f"{sandbox.url}/execute", headers=_auth(sandbox), timeout=5.0
                )
        return True

    # --- the steps ------------------------------------------------------------------------

    async def _read_record(self, execution_id: str) -> dict[str, object] | None:
        ref = await self._store.stat(keys.execution_result_key(execution_id))
        if ref is None:
            return None
        return json.loads(await self._store.get_bytes(ref))

    async def _stored(self, execution_id: str, fingerprint: _Fingerprint) -> ExecutionResult | None:
        record = await self._read_record(execution_id)
        if record is None:
            return None
        if not fingerprint.matches(record.get("fingerprint")):
            raise ExecutionConflictError(execution_id, "used with a different request")
        self._metrics.deduplicated.inc()
        # Masked again: a result stored before masking, or before a secret was configured.
        return mask_result(ExecutionResult.model_validate(record["result"]), self._masker)

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
            env=self._env_of(request),
            inputs=[_input_name(ref) for ref in request.inputs],
            input_bytes=sum(ref.size for ref in request.inputs),
        )
        script = clean_script(request.script)
        if package_ref is None:
            raise ExecutionRejectedError(
                404, f"skill {request.skill!r} version {request.version[:12]} is not published"
            )
        package, names = await self._package(package_ref)
        if script not in names:
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
        return package, inputs

    async def _package(self, ref: ArtifactRef) -> tuple[bytes, frozenset[str]]:
        """A package's bytes and file names, kept for the next run of the same version.

        A version is the hash of the package's content, so a kept package is never stale; the
        store is still asked first (`_validate` stats the key), so an unpublished version is
        refused as before.
        """
        kept = self._packages.get(ref.key)
        if kept is not None and kept[0] == ref.sha256:
            self._packages.move_to_end(ref.key)
            return kept[1], kept[2]
        package = await self._store.get_bytes(ref)
        names = frozenset(_package_names(package))
        if kept is not None:
            self._package_bytes -= len(self._packages.pop(ref.key)[1])
        self._packages[ref.key] = (ref.sha256, package, names)
        self._package_bytes += len(package)
        while self._package_bytes > _PACKAGE_CACHE_BYTES and len(self._packages) > 1:
            _, (_, dropped, _) = self._packages.popitem(last=False)
            self._package_bytes -= len(dropped)
        return package, names

    async def _environment(
        self, request: ExecuteRequest, package: bytes
    ) -> tuple[bytes, bool] | None:
        """The packed environment of the skill's declared dependencies, built on first use
        (once per skill version, runtime and platform), and whether this call built it; None
        when it declares none.

        Raises:
            ExecutionRejectedError: the dependencies cannot be used (a bad or conflicting
                declaration, a failed build, builds off and none prebuilt); nothing ran and
                the id stays free, so the run can be asked again once that is fixed.
        """
        if self._environments is None:
            return None
        try:
            spec = self._specs.get(request.version)
            if spec is None:
                spec = await asyncio.to_thread(
                    _dependency_spec,
                    package,
                    max_dependencies=self._environments.settings.max_dependencies,
                )
                self._specs[request.version] = spec
                while len(self._specs) > _SPEC_CACHE:
                    self._specs.popitem(last=False)
            if spec.empty:
                return None
            started = time.perf_counter()
            prepared = await self._environments.ensure(request.skill, request.version, spec)
        except (DependencyError, SkillEnvironmentError) as exc:
            raise ExecutionRejectedError(422, str(exc)) from exc
        if prepared is None:
            return None
        if prepared.built:
            self._metrics.environment_builds.inc()
        data = await self._store.get_bytes(prepared.ref)
        self._metrics.environment_seconds.labels(built=str(prepared.built).lower()).observe(
            time.perf_counter() - started
        )
        return data, prepared.built

    async def _run(
        self, entry: _Inflight, fingerprint: _Fingerprint, package_ref: ArtifactRef | None
    ) -> ExecutionResult:
        request = entry.request
        package, inputs = await self._validate(request, package_ref)
        # Before a sandbox is taken: a first use may build for minutes, holding none.
        prepared = await self._environment(request, package)
        environment = prepared[0] if prepared is not None else None
        sandbox, _ = await self._pool.claim()
        try:
            attempt = await self._claim(request.execution_id, fingerprint)
        except BaseException:
            await self._pool.unclaim(sandbox)  # nothing ran in it
            raise
        if isinstance(attempt, ExecutionResult):
            await self._pool.unclaim(sandbox)
            return attempt
        # From here on every way out ends in one of two states: a stored result (what ran, or
        # the failure that ended it, with its class), or a withdrawn claim when the script
        # never reached a sandbox (or its sandbox was lost mid-run: see SandboxLostError).
        # Never a claim left with no result, which would run the script again once it lapsed.
        entry.sandbox = sandbox
        claim_key = keys.execution_claim_key(request.execution_id, attempt)
        handed = _Handed()
        try:
            if entry.cancelled:
                result = self._result(request, status="cancelled", error="cancelled before start")
            else:
                renewing = asyncio.create_task(
                    self._renew(request.execution_id, fingerprint, attempt)
                )
                try:
                    result = await self._execute_in(
                        sandbox, request, package, inputs, environment, handed=handed
                    )
                except SandboxLostError:
                    await self._withdraw(claim_key)
                    self._metrics.executions.labels(outcome="lost").inc()
                    logger.warning("sandbox %s lost during %s", sandbox.id, request.execution_id)
                    raise
                except Exception as exc:
                    if not handed.sent:  # the script never reached a sandbox: free the id
                        await self._withdraw(claim_key)
                        raise
                    logger.exception(
                        "execution %s failed after its script ran", request.execution_id
                    )
                    result = self._failed_after_run(request, exc)
                finally:
                    renewing.cancel()
            # Before anything keeps or shows it (in a thread: inline output may be large).
            try:
                result = await asyncio.to_thread(mask_result, result, self._masker)
            except Exception as exc:  # kept without the text that could not be masked
                logger.exception("execution %s: output not masked", request.execution_id)
                result = self._failed_after_run(request, exc)
            await self._keep(request, fingerprint, result, attempt)
        finally:
            # After the result is stored: destroying the sandbox and starting its replacement
            # are work for the host, which the caller need not wait behind.
            await self._pool.release(sandbox)
        self._metrics.executions.labels(outcome=result.status).inc()
        if result.timed_out:
            self._metrics.timeouts.inc()
        self._metrics.execution_seconds.observe(time.perf_counter() - entry.started)
        return result

    async def _withdraw(self, claim_key: str) -> None:
        """Free the id again: nothing of the run was kept, so it may run (once) anew."""
        await self._store.delete(claim_key)

    async def _keep(
        self,
        request: ExecuteRequest,
        fingerprint: _Fingerprint,
        result: ExecutionResult,
        attempt: int,
    ) -> None:
        """Store the result, asking the store again a few times; if it cannot be stored, the
        claim says that the script ran, so that no later request runs it again.

        Raises:
            StorageError: the result could not be stored (the id answers 409 from then on).
        """
        record = json.dumps(
            {"fingerprint": fingerprint.value, "result": result.model_dump(mode="json")}
        ).encode()
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
        ran = {**json.loads(self._claim_record(fingerprint, attempt)), "ran": True}
        claim_key = keys.execution_claim_key(request.execution_id, attempt)
        with contextlib.suppress(StorageError):
            await self._store.put_bytes(claim_key, json.dumps(ran).encode(), content_type=_JSON)
        raise failure

    def _claim_record(self, fingerprint: _Fingerprint, attempt: int) -> bytes:
        now = time.time()
        record = {
            "fingerprint": fingerprint.value,
            "manager": self._instance,
            "attempt": attempt,
            "at": now,
            "renewed": now,
        }
        return json.dumps(record).encode()

    async def _claim(self, execution_id: str, fingerprint: _Fingerprint) -> int | ExecutionResult:
        """Claim the execution; the attempt won, or the stored result when another run
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
        for attempt in range(1, _MAX_CLAIM_ATTEMPTS + 1):
            while True:
                key = keys.execution_claim_key(execution_id, attempt)
                record = self._claim_record(fingerprint, attempt)
                if await self._store.put_if_absent(key, record, content_type=_JSON) is not None:
                    if attempt > 1:
                        self._metrics.claims_taken_over.inc()
                        logger.warning(
                            "execution %s: attempt %d claimed after the lease of the last lapsed",
                            execution_id,
                            attempt,
                        )
                    return attempt
                stored = await self._stored(execution_id, fingerprint)
                if stored is not None:
                    return stored
                holder = await self._read_claim(key)
                if holder is not None:
                    break
                # The claim was withdrawn meanwhile (its sandbox was lost): try it again.
            if not fingerprint.matches(holder.get("fingerprint")):
                raise ExecutionConflictError(execution_id, "used with a different request")
            if holder.get("ran"):
                raise ExecutionConflictError(
                    execution_id, "ran, but its result could not be stored; it is not run again"
                )
            renewed = holder.get("renewed", holder.get("at", 0.0))
            age = time.time() - float(renewed)  # type: ignore[arg-type]
            if age < self._claim_lease:
                raise ExecutionInProgressError(
                    execution_id, retry_after=max(1.0, self._claim_lease - age)
                )
        raise ExecutionConflictError(
            execution_id, f"was interrupted {_MAX_CLAIM_ATTEMPTS} times; it is not run again"
        )

    async def _read_claim(self, key: str) -> dict[str, object] | None:
        ref = await self._store.stat(key)
        if ref is None:
            return None
        with contextlib.suppress(ArtifactNotFoundError, ArtifactIntegrityError):
            return json.loads(await self._store.get_bytes(ref))
        return None

    async def _renew(self, execution_id: str, fingerprint: _Fingerprint, attempt: int) -> None:
        """Renew the claim while the script runs, so that no other manager takes it over."""
        key = keys.execution_claim_key(execution_id, attempt)
        while True:
            await asyncio.sleep(self._claim_lease / 4)
            try:
                await self._store.put_bytes(
                    key, self._claim_record(fingerprint, attempt), content_type=_JSON
                )
            except StorageError as exc:  # the next renewal may get through
                logger.warning("execution %s: claim not renewed: %s", execution_id, exc)

    def _failed_after_run(self, request: ExecuteRequest, exc: Exception) -> ExecutionResult:
        """The terminal result of a run the manager could not finish handling (the error, with
        its class): stored like any other, so the script is not run again."""
        return self._result(
            request,
            status="error",
            error=f"the manager failed after the script ran ({type(exc).__name__}: {exc});"
            " it is not run again",
        )

    def _env_of(self, request: ExecuteRequest) -> dict[str, str]:
        """The script's environment from the request: its ``env`` and its skill's secrets
        (by the name's folded key, as names are owned: 'CSV-Cleaner' is csv-cleaner's)."""
        return {**request.env, **self._secrets_by_key.get(name_key(request.skill), {})}

    def _result(self, request: ExecuteRequest, **fields: object) -> ExecutionResult:
        return ExecutionResult(
            execution_id=request.execution_id,
            run_id=request.run_id,
            skill=request.skill,
            version=request.version,
            script=request.script,
            **fields,  # type: ignore[arg-type]
        )

    async def _execute_in(
        self,
        sandbox: Sandbox,
        request: ExecuteRequest,
        package: bytes,
        inputs: list[tuple[str, bytes]],
        environment: bytes | None = None,
        *,
        handed: _Handed,
    ) -> ExecutionResult:
        limits = request.limits or self._default_limits
        body = ExecutorRequest(
            script=clean_script(request.script),
            args=request.args,
            env=self._env_of(request),
            limits=limits,
            environment_sha256=hashlib.sha256(environment).hexdigest() if environment else None,
        )
        files: list[tuple[str, tuple[str, bytes, str]]] = [
            ("package", ("package.zip", package, "application/zip"))
        ]
        if environment is not None:
            files.append(("environment", ("environment.tar.gz", environment, "application/gzip")))
        files += [("inputs", (name, data, "application/octet-stream")) for name, data in inputs]
        try:
            handed.sent = True
            response = await self._client.post(
                f"{sandbox.url}/execute",
                data={"request": body.model_dump_json()},
                files=files,
                headers=inject(_auth(sandbox)),
                timeout=limits.timeout_seconds + _HTTP_GRACE_SECONDS,
            )
            if response.status_code >= 400:
                detail = _detail(response)
                if 400 <= response.status_code < 500 and response.status_code != 409:
                    return self._result(request, status="error", error=f"rejected: {detail}")
                return self._result(request, status="error", error=f"executor: {detail}")
            executed = ExecutorResult.model_validate_json(response.content)
            outputs: list[OutputArtifact] = []
            skipped = list(executed.skipped_outputs)
            for item in executed.outputs:
                path = item.name.removeprefix("outputs/")
                try:
                    key = keys.execution_output_key(request.run_id, request.execution_id, path)
                except InvalidKeyError as exc:  # a name no key can carry: said, not fatal
                    skipped.append(SkippedOutput(path=path, reason=exc.reason))
                    continue
                outputs.append(OutputArtifact(path=path, ref=await self._fetch(sandbox, item, key)))
            stdout_ref = stderr_ref = None
            if executed.full_stdout is not None:
                key = keys.execution_log_key(request.run_id, request.execution_id, "stdout")
                stdout_ref = await self._fetch(sandbox, executed.full_stdout, key, mask=True)
            if executed.full_stderr is not None:
                key = keys.execution_log_key(request.run_id, request.execution_id, "stderr")
                stderr_ref = await self._fetch(sandbox, executed.full_stderr, key, mask=True)
        except httpx.TimeoutException as exc:
            return self._result(request, status="error", error=f"sandbox failed: {exc!r}")
        except httpx.TransportError as exc:
            # The connection broke: the sandbox died or vanished (a pod deleted, a node lost).
            # It is destroyed on release; nothing of the run was kept.
            raise SandboxLostError(request.execution_id, f"{type(exc).__name__}: {exc}") from exc
        except httpx.HTTPError as exc:
            return self._result(request, status="error", error=f"sandbox failed: {exc!r}")
        status: ExecutionStatus
        if executed.cancelled:
            status = "cancelled"
        elif executed.timed_out:
            status = "timed_out"
        elif executed.error is not None:
            status = "error"
        else:
            status = "succeeded" if executed.exit_code == 0 else "failed"
        return self._result(
            request,
            status=status,
            exit_code=executed.exit_code,
            stdout=executed.stdout,  # masked by _run, with every other text of the result
            stderr=executed.stderr,
            stdout_truncated=executed.stdout_truncated,
            stderr_truncated=executed.stderr_truncated,
            stdout_ref=stdout_ref,
            stderr_ref=stderr_ref,
            timed_out=executed.timed_out,
            duration_ms=executed.duration_ms,
            outputs=outputs,
            skipped_outputs=skipped,
            isolation=executed.isolation,
            error=executed.error,
        )

    async def _fetch(
        self, sandbox: Sandbox, item: ExecutorFile, key: str, *, mask: bool = False
    ) -> ArtifactRef:
        """Stream one file from the sandbox to the store, checking its size and hash.

        `mask` (a stdout/stderr log): once the transfer is verified, the secrets in it are
        masked (in place, streamed; ``cut``: the capture may have stopped mid-secret at its
        cap), and the store hashes the masked bytes it keeps.
        """
        with tempfile.NamedTemporaryFile(prefix="skillweave-fetch-", delete=False) as handle:
            path = Path(handle.name)
            digest = hashlib.sha256()
            size = 0
            async with self._client.stream(
                "GET",
                f"{sandbox.url}/files/{quote(item.name, safe='/')}",
                headers=_auth(sandbox),
                timeout=60.0,
            ) as response:
                response.raise_for_status()
                async for chunk in response.aiter_bytes(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
                    handle.write(chunk)
        try:
            if size != item.size or digest.hexdigest() != item.sha256:
                raise httpx.HTTPError(f"{item.name} arrived damaged from the sandbox")
            if mask and self._masker:
                await asyncio.to_thread(self._masker.mask_file, path, cut=True)
            return await self._store.put_file(key, str(path))
        finally:
            path.unlink(missing_ok=True)


def _auth(sandbox: Sandbox) -> dict[str, str]:
    return {"Authorization": f"Bearer {sandbox.token}"}


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:500]
