"""The one error hierarchy of skillweave.

Every error skillweave raises on purpose derives from :class:`SkillweaveError`. Leaves carry
their data as attributes so callers (the CLI, the agent loop, the activity boundary) can decide
what to do without parsing messages. Errors the model can fix (a wrong resource path, an unknown
skill) are turned into tool results by the agent loop; the others are raised.

    SkillweaveError
    ├── ConfigError                    bad settings or command-line input
    │   └── TemporalUnreachableError   no Temporal server at the address (defined in
    │                                  skillweave.engines.temporal: address, reason)
    ├── RemoteApiError                 the remote REST API refused a CLI call (defined in
    │                                  skillweave.cli.remote: status, title, detail)
    ├── EvalSuiteError                 a skill's evals/evals.json or triggers.json cannot be used
    │                                  (defined in skillweave.evals.suite: source, problem)
    ├── EvalsNotFoundError             no eval batch (or no report of it) of that id for the
    │                                  skill (defined in skillweave.evals.store: skill, batch_id)
    ├── EvalGateError                  an update or rollback its eval gate refused (defined in
    │                                  skillweave.evals.gate: verdict)
    ├── SkillError                     anything about a skill or a skill library
    │   ├── SkillNotFoundError         no skill of that name is attachable
    │   ├── SkillFormatError           a SKILL.md that cannot be read as a skill
    │   ├── SkillNameTakenError        a package brings a skill whose name (compared NFKC +
    │   │                              case-folded) another source owns, at any depth (409)
    │   ├── SkillUnavailableError      an agent's skill is deleted, disabled or shadowed (409)
    │   ├── SkillVersionError          a version (or a prefix of one, or a name@VERSION pin) that
    │   │                              is malformed or names no stored version, or several
    │   │                              (defined in skillweave.skills.names: name, problem)
    │   ├── ResourceError              read_skill_resource refused a file
    │   │   ├── ResourcePathError      the path is malformed or escapes the skill folder
    │   │   ├── ResourceNotFoundError  no such file in the skill
    │   │   ├── ResourceTooLargeError  the file is over the size cap
    │   │   └── BinaryResourceError    the file is not UTF-8 text
    │   ├── PackageError               a skill package (ZIP) cannot be built or extracted
    │   │   └── UnsafePackageError     an entry is unsafe: traversal, symlink, bomb, too many files…
    │   ├── SignatureError             a skill signature or signing key that cannot be read, or a
    │   │                              version the trust policy refuses (`status` says why)
    │   ├── SkillScanError             a new skill version's scan found what the policy blocks
    │   ├── RegistryError              a skill registry (an index, a marketplace, another API)
    │   │                              cannot be read, or its listing is refused (`registry`)
    │   ├── ToolSchemaError            a script's --help-json output is not a valid tool schema
    │   ├── DependencyError            declared dependencies: bad syntax, conflicts, too many
    │   └── SkillEnvironmentError      a skill's prepared environment is not available
    │       ├── EnvironmentBuildError  building it failed (names the package, keeps the log)
    │       └── EnvironmentUnavailableError  not built, and builds are switched off
    ├── SandboxError                   running scripts in sandboxes
    │   ├── SandboxStartError          a sandbox did not start or become healthy
    │   ├── ManagerUnreachableError    the manager took no connection; waited for, as a full pool
    │   │   └── ManagerNotReadyError   the manager answered that it is starting (503 not_ready)
    │   ├── AuditUnavailableError      a run's audit record cannot be stored: refused unstarted
    │   │                              (503 audit_unavailable, Retry-After); waited for
    │   ├── ManagerRefusedError        the manager refuses this caller's token (401/403) or store
    │                                  (409): an operator must act; waited for, then retried
    │   ├── PoolExhaustedError         no sandbox free in time (503 + Retry-After)
    │   ├── ExecutionRejectedError     an invalid execute request (4xx); nothing ran
    │   ├── ExecutionConflictError     an execution id reused differently, or interrupted
    │   ├── ExecutionInProgressError   its first run holds a live claim elsewhere; retry later
    │   ├── SandboxLostError           the sandbox died mid-execution; retry on a fresh one
    │   ├── EgressPolicyError          a skill's network declaration or approval cannot be read
    │   └── ExecutorError              inside a sandbox (defined in sandbox_executor.errors:
    │                                  RequestRejectedError, ExecutorBusyError,
    │                                  IsolationUnavailableError)
    ├── StorageError                   the artifact store failed (carries the backend's `code`)
    │   ├── ArtifactNotFoundError      no artifact under that key
    │   ├── ArtifactIntegrityError     the stored bytes do not match the ref (size or sha256)
    │   ├── InvalidKeyError            a key, prefix or key component is malformed or unsafe
    │   ├── BucketNotFoundError        the S3 bucket does not exist (and is not to be created)
    │   └── AuditLogError              the skill audit log cannot be written or read
    │       └── AuditEntryError        an entry that cannot be a record (a field too long,
    │                                  details too large or not JSON): bad input, not retried
    ├── ModelError                     a model call failed (`retryable`, `retry_after`, `status`)
    │   └── ScriptedModelError         a scripted model's script ran out or an expectation failed
    └── AgentError                     an agent run cannot go on
        ├── AgentSpecError             an agent spec file is invalid (names file and field)
        ├── NoWorkerError              no worker answered a follower in time; the run goes on
        │                              (defined in skillweave.engines.temporal)
        └── ToolFailure                an activity failed for good; the run fails (defined in
                                       workflows.runtime)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = [
    "AgentError",
    "AgentSpecError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "AuditEntryError",
    "AuditLogError",
    "AuditUnavailableError",
    "BinaryResourceError",
    "BucketNotFoundError",
    "ConfigError",
    "DependencyError",
    "EgressPolicyError",
    "EnvironmentBuildError",
    "EnvironmentUnavailableError",
    "ExecutionConflictError",
    "ExecutionRejectedError",
    "InvalidKeyError",
    "ManagerNotReadyError",
    "ManagerRefusedError",
    "ManagerUnreachableError",
    "ModelError",
    "PackageError",
    "PoolExhaustedError",
    "RegistryError",
    "ResourceError",
    "ResourceNotFoundError",
    "ResourcePathError",
    "ResourceTooLargeError",
    "SandboxError",
    "SandboxLostError",
    "SandboxStartError",
    "ScriptedModelError",
    "SignatureError",
    "SkillEnvironmentError",
    "SkillError",
    "SkillFormatError",
    "SkillNameTakenError",
    "SkillNotFoundError",
    "SkillScanError",
    "SkillUnavailableError",
    "SkillweaveError",
    "StorageError",
    "ToolSchemaError",
    "UnsafePackageError",
]


_MAX_NAMES_SHOWN = 20


class SkillweaveError(Exception):
    """Root of every error skillweave raises on purpose."""


class ConfigError(SkillweaveError):
    """Settings or command-line input that cannot be used."""


class SkillError(SkillweaveError):
    """Something is wrong with a skill or a skill library."""


class SkillNotFoundError(SkillError):
    """No skill of this name is known (or attachable)."""

    def __init__(
        self, name: str, *, available: tuple[str, ...] = (), namesakes: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.available = namesakes or available
        shown = ", ".join(self.available[:_MAX_NAMES_SHOWN])
        if len(self.available) > _MAX_NAMES_SHOWN:
            shown += f" and {len(self.available) - _MAX_NAMES_SHOWN} more"
        if namesakes:
            message = f"skill {name!r} is in several namespaces; name one of {shown}"
        else:
            message = f"unknown skill {name!r}" + (f"; available: {shown}" if shown else "")
        super().__init__(message)


class SkillFormatError(SkillError):
    """A SKILL.md that cannot be read as a skill (no frontmatter, bad YAML, no description)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class SkillNameTakenError(SkillError):
    """A package would bring a skill whose name another source already owns.

    Names are compared NFKC-normalized and case-folded (``skillweave.skills.names``), at every
    depth of a skill tree.

    Attributes:
        name: the clashing name, as the package spells it.
        path: where the skill is in the package (``top`` or ``top/…/child``).
        owner: who owns the name, in words (a directory skill and its folder, or an uploaded
            skill and where in it).
        owned_as: the owner's spelling of the name (differs from `name` in case or form).
    """

    def __init__(self, name: str, *, path: str, owner: str, owned_as: str | None = None) -> None:
        self.name = name
        self.path = path
        self.owner = owner
        self.owned_as = owned_as if owned_as is not None else name
        spelled = f" (as {self.owned_as!r})" if self.owned_as != name else ""
        super().__init__(
            f"skill name {name!r} at {path!r} in the package is taken: {owner} owns it"
            f"{spelled}; rename that skill (an upload may not shadow another source's skill)"
        )


class SkillUnavailableError(SkillError):
    """A skill an agent lists cannot be given to its run.

    Attributes:
        name: the skill's name, as the agent lists it.
        reason: ``deleted`` (no such skill any more), ``disabled`` (switched off), or
            ``shadowed`` (its name now resolves to, or is claimed by, another source).
        detail: what happened and what to do, in words.
    """

    def __init__(
        self, name: str, *, reason: Literal["deleted", "disabled", "shadowed"], detail: str
    ) -> None:
        self.name = name
        self.reason = reason
        self.detail = detail
        super().__init__(f"the agent's skill {name!r} is {reason}: {detail}")


class ResourceError(SkillError):
    """A skill resource could not be read; the message is safe to show to the model."""

    def __init__(self, skill: str, path: str, reason: str) -> None:
        self.skill = skill
        self.path = path
        self.reason = reason
        super().__init__(f"{skill}/{path}: {reason}")


class ResourcePathError(ResourceError):
    """The path is absolute, contains '..', or resolves outside the skill folder."""


class ResourceNotFoundError(ResourceError):
    """No such file in the skill folder."""


class ResourceTooLargeError(ResourceError):
    """The file is larger than the configured cap."""

    def __init__(self, skill: str, path: str, *, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(skill, path, f"file is {size} bytes, over the {limit}-byte limit")


class BinaryResourceError(ResourceError):
    """The file is not UTF-8 text and cannot be returned to the model."""


class PackageError(SkillError):
    """A skill package (ZIP) cannot be built or extracted."""


class UnsafePackageError(PackageError):
    """An archive entry is unsafe; `entry` names it and `reason` says why."""

    def __init__(self, entry: str, reason: str) -> None:
        self.entry = entry
        self.reason = reason
        # A hostile name may be thousands of characters: the message shows its two ends.
        shown = entry if len(entry) <= 160 else f"{entry[:100]}…{entry[-40:]}"
        super().__init__(f"unsafe package entry {shown!r}: {reason}")


class SignatureError(SkillError):
    """A skill signature that cannot be used (``skillweave.skills.signing``).

    Either the signature document or signing key cannot be read (`status` None), or the trust
    policy refuses a version: `status` is ``unsigned`` or ``untrusted`` (refused by
    ``skills.trust.unsigned``), ``mismatch`` (the signature is for another name or version: the
    package changed after it was signed) or ``invalid`` (it does not verify under the trusted
    key it names).
    """

    def __init__(self, message: str, *, status: str | None = None) -> None:
        self.status = status
        super().__init__(message)


class SkillScanError(SkillError):
    """A new skill version's scan found what ``skills.scan.policy`` blocks: it is not stored.

    Attributes:
        name, version: the skill version.
        findings: the blocking findings, one line each (severity, rule, where, what).
    """

    def __init__(self, name: str, version: str, findings: Sequence[str]) -> None:
        self.name = name
        self.version = version
        self.findings = tuple(findings)
        shown = "; ".join(self.findings[:3])
        more = f" (and {len(self.findings) - 3} more)" if len(self.findings) > 3 else ""
        super().__init__(
            f"skill {name!r} version {version[:12]} is refused: its scan found what "
            f"skills.scan.policy blocks: {shown}{more}"
        )


class RegistryError(SkillError):
    """A skill registry (``skillweave.skills.registries``) that cannot be read, or whose
    listing is refused (oversize, malformed, not signed by the key it must be); `registry`
    is its label, and the message says which registry, what is wrong and what to do."""

    def __init__(self, registry: str, message: str) -> None:
        self.registry = registry
        super().__init__(f"registry {registry!r}: {message}")


class ToolSchemaError(SkillError):
    """A script's --help-json output is not a valid tool definition."""


class DependencyError(SkillError):
    """A skill's declared dependencies cannot be used: bad syntax, a conflict between two
    sources, too many; the message names the source and the package."""


class SkillEnvironmentError(SkillError):
    """A skill's prepared environment (its dependencies, installed) is not available."""


class EnvironmentBuildError(SkillEnvironmentError):
    """Building a skill's environment failed; `package` names the culprit when known, and
    `log_key` is where the build's log is stored."""

    def __init__(
        self, skill: str, reason: str, *, package: str | None = None, log_key: str | None = None
    ) -> None:
        self.skill = skill
        self.package = package
        self.log_key = log_key
        where = f" (build log: {log_key})" if log_key else ""
        super().__init__(f"cannot build the environment of {skill!r}: {reason}{where}")


class EnvironmentUnavailableError(SkillEnvironmentError):
    """The skill needs an environment that is not built and builds are switched off."""


class SandboxError(SkillweaveError):
    """Running a script in a sandbox failed on the infrastructure side."""


class SandboxStartError(SandboxError):
    """A sandbox did not start, or did not become healthy in time; `permanent` when its
    executor refused to start here (a setting or a missing requirement: asking again will not
    help until an operator acts)."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        self.permanent = permanent
        super().__init__(message)


class ManagerUnreachableError(SandboxError):
    """The MCP manager did not take the connection: nothing was sent, so asking again is safe.
    A script step waits for it as for a full pool (``skillweave.sandbox.queue``)."""


class ManagerNotReadyError(ManagerUnreachableError):
    """The MCP manager answered that it is starting: it waits for what it needs (its store),
    and nothing ran. Waited for like a manager that is down; the message names the cause."""


class AuditUnavailableError(SandboxError):
    """A run refused before anything ran, because its ``execution`` audit record cannot be
    stored (the audit log's store failed): the manager did not start the script and left its
    id free (503 ``audit_unavailable`` + Retry-After). The manager raises it and the sandbox
    client reads it back; a step waits for it as for a manager that is not ready, never a tool
    result and never a failed run. `retry_after` is the manager's Retry-After, in seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class ManagerRefusedError(SandboxError):
    """The MCP manager refuses this caller, not its request: nothing ran, and no request the
    model could change would run. Only an operator can fix it, so it is never a tool result:
    like an unreachable manager it is waited for (``skillweave.sandbox.queue``), then retried
    (a manager restarted with the right settings takes the step).

    Attributes:
        refused: what the manager refuses: ``token`` (401, or a 403 that is not one of the
            manager's own rejections: ``SANDBOX__MANAGER_TOKEN`` is not the manager's) or
            ``store`` (409: the manager works on another artifact store than the caller).
        status: the HTTP status of the refusal.
        reason: the manager's words.
        url: the manager's address, when the caller knows it.
    """

    def __init__(
        self,
        reason: str,
        *,
        refused: Literal["token", "store"],
        status: int,
        url: str = "",
    ) -> None:
        self.refused = refused
        self.status = status
        self.reason = reason
        self.url = url
        at = f" at {url}" if url else ""
        if refused == "token":
            message = (
                f"the MCP manager{at} refuses this worker's token ({status}): "
                "SANDBOX__MANAGER_TOKEN must be the manager's"
            )
        else:
            message = f"the MCP manager{at} refuses this worker's store ({status}): {reason}"
        super().__init__(message)


class PoolExhaustedError(SandboxError):
    """No sandbox became free within the claim timeout; retry after `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class ExecutionRejectedError(SandboxError):
    """An execute request that cannot run (HTTP `status_code`); nothing ran."""

    def __init__(self, status_code: int, reason: str) -> None:
        self.status_code = status_code
        self.reason = reason
        super().__init__(reason)


class ExecutionConflictError(SandboxError):
    """An execution id used with a different request, or whose first run was interrupted."""

    def __init__(self, execution_id: str, reason: str) -> None:
        self.execution_id = execution_id
        self.reason = reason
        super().__init__(f"execution {execution_id!r} {reason}")


class ExecutionInProgressError(SandboxError):
    """The execution id is being run by another manager (or was, by one that stopped: its
    claim lapses after the lease); ask again after `retry_after` seconds."""

    def __init__(self, execution_id: str, *, retry_after: float) -> None:
        self.execution_id = execution_id
        self.retry_after = retry_after
        super().__init__(
            f"execution {execution_id!r} is running under another manager's claim; "
            f"retry in {retry_after:.0f} s"
        )


class SandboxLostError(SandboxError):
    """The sandbox died (or became unreachable) while the script ran; nothing was kept.

    The manager destroyed the sandbox and freed the execution id, so the same request may run
    again, on a fresh sandbox: a sandbox reaches nothing outside itself (no network, no store
    credentials) and its outputs are collected only from a finished run, so a lost run leaves
    no trace to be doubled.
    """

    def __init__(self, execution_id: str, reason: str) -> None:
        self.execution_id = execution_id
        self.reason = reason
        super().__init__(f"execution {execution_id!r}: the sandbox was lost ({reason})")


class EgressPolicyError(SandboxError):
    """A network destination (declared by a skill, or approved by an operator) that cannot
    be read; the message names the entry."""


class StorageError(SkillweaveError):
    """The artifact store failed; `code` is the backend's error code when there is one
    (an S3 error code such as ``AccessDenied``), `key` the artifact concerned, if any."""

    def __init__(self, message: str, *, key: str | None = None, code: str | None = None) -> None:
        self.key = key
        self.code = code
        super().__init__(message)


class ArtifactNotFoundError(StorageError):
    """No artifact is stored under `key`."""

    def __init__(self, key: str) -> None:
        super().__init__(f"no artifact under key {key!r}", key=key, code="NoSuchKey")


class ArtifactIntegrityError(StorageError):
    """The bytes stored under `key` are not the bytes the ref names.

    `expected` is what the ref promised and `actual` what the store holds: both are sizes
    (``"12 bytes"``) when the sizes differ, else both are sha256 hex digests.
    """

    def __init__(self, key: str, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"artifact {key!r} does not match its ref: expected {expected}, found {actual}",
            key=key,
            code="IntegrityMismatch",
        )


class InvalidKeyError(StorageError):
    """A key, key prefix or key component is malformed or unsafe; `reason` says why."""

    def __init__(self, key: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"invalid artifact key {key!r}: {reason}", key=key, code="InvalidKey")


class BucketNotFoundError(StorageError):
    """The S3 bucket of the settings does not exist, and ``STORAGE__S3_CREATE_BUCKET`` is not
    set: a configuration that never works by itself (code ``NoSuchBucket``), never a new store.

    Attributes:
        bucket: the bucket's name.
        url: the S3 endpoint, as a URL.
    """

    def __init__(self, bucket: str, *, url: str) -> None:
        self.bucket = bucket
        self.url = url
        super().__init__(
            f"bucket {bucket!r} does not exist at {url}: create it, or set "
            "STORAGE__S3_CREATE_BUCKET=true to let skillweave create it",
            code="NoSuchBucket",
        )


class AuditLogError(StorageError):
    """The audit log cannot be written or read (the store failed, or an entry is malformed:
    :class:`AuditEntryError`)."""


class AuditEntryError(AuditLogError):
    """An entry that cannot be a record: a field too long, details too large or not JSON.
    Raised before any I/O; the input's fault, never the store's, so it is not retried (the
    manager answers 422, the API 422)."""


class ModelError(SkillweaveError):
    """A model provider call failed.

    Attributes:
        retryable: whether the same call may succeed later (HTTP 408/409/429/5xx, connection
            failures, timeouts); decided once, in ``skillweave.llm.retry``.
        retry_after: seconds the provider asked to wait (``Retry-After``), when it said.
        status: the HTTP status, when there was a response.
        max_attempts: the most tries the model's profile allows one call (its retry policy),
            when it sets one; the engines stop at the lower of it and their own.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        max_attempts: int | None = None,
    ) -> None:
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.max_attempts = max_attempts
        super().__init__(message)


class ScriptedModelError(ModelError):
    """The scripted model has no turn left, or a turn's expectation about what it received
    failed (the message names the turn and what was expected)."""


class AgentError(SkillweaveError):
    """An agent run cannot go on (a broken invariant, not a mistake the model can fix)."""


class AgentSpecError(AgentError):
    """An agent spec file is invalid."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")
