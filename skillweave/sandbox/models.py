"""The wire models of script execution: manager API and manager→executor protocol.

``ExecuteRequest`` / ``ExecutionResult`` are the body and answer of the MCP manager's
``POST /sandbox/execute``. ``ExecutorRequest`` / ``ExecutorResult`` are what the manager sends to
a one-shot sandbox executor (``POST /execute``, multipart: this JSON as the ``request`` field,
the skill package ZIP as the ``package`` file, each input as an ``inputs`` file whose filename
is its path under ``inputs/``) and what it answers; large files (outputs, full stdout/stderr)
are then fetched from the executor with ``GET /files/{name}`` so nothing big rides in JSON.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.config import IsolationChoice
from skillweave.storage import ArtifactRef

__all__ = [
    "EXECUTION_ID_VARIABLE",
    "EgressGrant",
    "ExecuteRequest",
    "ExecutionLimits",
    "ExecutionRecord",
    "ExecutionResult",
    "ExecutionStatus",
    "ExecutorFile",
    "ExecutorRequest",
    "ExecutorResult",
    "Isolation",
    "OutputArtifact",
    "SkippedOutput",
    "describe_isolation",
    "isolation_allowed",
    "isolation_covers",
    "isolation_in_force",
    "isolation_of_health",
    "render_result",
]

EXECUTION_ID_VARIABLE: Final = "SKILLWEAVE_EXECUTION_ID"
"""The variable that gives a script its run's execution id: the same on every attempt of the run
(a run may start again after its manager died), an idempotency key for what it does outside."""

ExecutionStatus = Literal["succeeded", "failed", "timed_out", "cancelled", "error"]
Isolation = Literal["bubblewrap", "namespaces", "none", "rlimits"]
"""The isolation a script ran under (see ``sandbox_executor.isolation``). ``rlimits`` is what
``none`` was called before; it is kept only so that results stored then still decode."""

_ALLOWED: dict[IsolationChoice, frozenset[str]] = {
    "auto": frozenset({"bubblewrap", "namespaces"}),
    "bubblewrap": frozenset({"bubblewrap"}),
    "namespaces": frozenset({"namespaces"}),
    "none": frozenset({"none"}),
}


def isolation_allowed(choice: IsolationChoice, reported: str | None) -> bool:
    """Whether an executor that reports `reported` may run scripts under the setting `choice`
    (a manager refuses any other: a mode is never downgraded behind its back)."""
    return reported in _ALLOWED[choice]


def isolation_covers(choice: IsolationChoice, declared: str) -> bool:
    """Whether executors configured with `declared` (their ``EXECUTOR__ISOLATION``) can only
    end up in a mode the setting `choice` allows (``auto`` may become either contained mode)."""
    return declared in _ALLOWED and _ALLOWED[declared] <= _ALLOWED[choice]  # type: ignore[index]


def isolation_in_force(choice: IsolationChoice, reported: str | None = None) -> Isolation | None:
    """The mode scripts run in under the setting `choice`, given what a sandbox `reported`
    (its ``/healthz``, or the zygote's ready line): the setting itself when it names a mode
    (a sandbox in any other is refused), else the contained mode the sandbox settled on
    (``auto`` is resolved by the executor alone, ``sandbox_executor.isolation.plan_isolation``);
    None while no sandbox has said.
    """
    if choice != "auto":
        return choice
    if reported in _ALLOWED["auto"]:
        return reported  # type: ignore[return-value]
    return None


def isolation_of_health(health: object) -> tuple[Isolation | None, IsolationChoice] | None:
    """The mode in force and the setting a manager's ``/healthz`` says (``isolation``,
    ``isolation_setting``; a manager older than the mode in force said its setting as
    ``isolation``); None when it says them in no form known here (a remote answer is not
    trusted to name anything else)."""
    if not isinstance(health, dict):
        return None
    said = health.get("isolation")
    setting = health.get("isolation_setting", said)
    if setting not in _ALLOWED or (said is not None and said not in (*_ALLOWED, "rlimits")):
        return None
    return isolation_in_force(setting, said), setting


def describe_isolation(mode: str | None, *, setting: IsolationChoice) -> str:
    """One line for every surface that tells a user how scripts are contained: the `mode` in
    force (:func:`isolation_in_force`; None: not known yet) under the `setting`."""
    if mode in ("none", "rlimits"):
        return (
            f"SANDBOX ISOLATION IS OFF (SANDBOX__ISOLATION={setting}): scripts see the host's"
            " files, processes and network; run only trusted skills"
        )
    if mode is None:
        modes = " or ".join(sorted(_ALLOWED[setting]))
        return (
            f"scripts will be contained by {modes} with a syscall filter"
            f" (SANDBOX__ISOLATION={setting}; the first sandbox decides)"
        )
    fallen_back = mode == "namespaces" and setting == "auto"
    why = " (the fallback where bubblewrap does not run)" if fallen_back else ""
    return f"scripts contained by {mode}{why} with a syscall filter (SANDBOX__ISOLATION={setting})"


class ExecutionLimits(BaseModel):
    """Per-execution limits; every field has a safe default."""

    model_config = ConfigDict(frozen=True)

    timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    memory_mb: int = Field(default=512, ge=16, le=65536)
    max_processes: int = Field(default=64, ge=1, le=4096)
    max_open_files: int = Field(default=256, ge=16, le=65536)
    max_file_mb: int = Field(default=64, ge=1, le=65536)
    max_output_bytes: int = Field(
        default=256 * 1024, ge=1024, description="stdout and stderr each, inline in the result"
    )
    max_output_files: int = Field(default=100, ge=0, le=10_000)
    max_disk_mb: int = Field(
        default=1024,
        ge=1,
        le=1_048_576,
        description="Most MiB a run may write to its workspace and outputs, counted by apparent "
        "size (sparse files count in full); over it the run is stopped and keeps no outputs",
    )


class ExecuteRequest(BaseModel):
    """``POST /sandbox/execute``: run one script of one pinned skill version."""

    execution_id: str = Field(
        min_length=1,
        max_length=512,
        description="Idempotency key, e.g. skillweave-run-RUN/script-SEQ",
    )
    run_id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._-]+$")
    skill: str = Field(min_length=1, max_length=64)
    version: str = Field(pattern=r"^[0-9a-f]{64}$")
    script: str = Field(min_length=1, max_length=512, description="Path inside the package")
    args: list[str] = Field(default_factory=list, max_length=256)
    inputs: list[ArtifactRef] = Field(default_factory=list, max_length=256)
    env: dict[str, str] = Field(default_factory=dict)
    limits: ExecutionLimits | None = Field(
        default=None,
        description="None (what workers send): the manager's own, SANDBOX__TIMEOUT_SECONDS "
        "for the wall time; the script limit is decided there and nowhere else",
    )
    store_id: str | None = Field(
        default=None,
        max_length=64,
        description="The id of the store the caller works on; a manager on another store "
        "refuses the run (409) rather than looking for its inputs where they are not",
    )


class OutputArtifact(BaseModel):
    """A file the script wrote under ``outputs/``, now stored as an artifact of the run."""

    path: str
    ref: ArtifactRef


class SkippedOutput(BaseModel):
    """A file under ``outputs/`` that could not be kept, and why: its name cannot be a key
    (a control character, not UTF-8, too long once encoded), or it lies past collection's
    bounds (a folder too deep, too many entries; the path then ends in ``/``)."""

    path: str = Field(
        description="The name as the script wrote it (undecodable bytes and control"
        " characters escaped as \\xNN)"
    )
    reason: str


class ExecutionResult(BaseModel):
    """What an execution came to. Stored, so a repeated execution_id returns it unchanged."""

    execution_id: str
    run_id: str
    skill: str
    version: str
    script: str
    status: ExecutionStatus
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_ref: ArtifactRef | None = None
    stderr_ref: ArtifactRef | None = None
    timed_out: bool = False
    duration_ms: int = 0
    outputs: list[OutputArtifact] = Field(default_factory=list)
    skipped_outputs: list[SkippedOutput] = Field(default_factory=list)
    isolation: Isolation | None = None
    error: str | None = None


def render_result(result: ExecutionResult, *, inline_chars: int = 8_000) -> str:
    """`result` as a model reads it: status, stdout and stderr (each clipped to
    `inline_chars`, with where the full text is), and the output artifacts' keys."""
    lines = [f"status: {result.status} (exit code {result.exit_code}, {result.duration_ms} ms)"]
    if result.error:
        lines.append(f"error: {result.error}")
    for stream, text, truncated, ref in (
        ("stdout", result.stdout, result.stdout_truncated, result.stdout_ref),
        ("stderr", result.stderr, result.stderr_truncated, result.stderr_ref),
    ):
        if not text and ref is None:
            continue
        shown = text if len(text) <= inline_chars else text[: inline_chars - 1] + "…"
        lines.append(f"{stream}:\n{shown.rstrip()}")
        if truncated or len(shown) < len(text):
            where = f" (full {stream}: {ref.key}, {ref.size} bytes)" if ref else ""
            lines.append(f"[{stream} truncated{where}]")
    if result.outputs:
        lines.append("output artifacts (pass these keys as inputs to later scripts):")
        lines.extend(f"- {o.ref.key} ({o.ref.size} bytes)" for o in result.outputs)
    else:
        lines.append("output artifacts: none")
    for skipped in result.skipped_outputs:
        lines.append(f"output not kept: outputs/{skipped.path} ({skipped.reason})")
    return "\n".join(lines) + "\n"


# --- manager → executor --------------------------------------------------------------------


class EgressGrant(BaseModel):
    """Network egress for one run: the manager's egress proxy, and the token that names the
    run there (``skillweave.sandbox.egress_policy``). The executor bridges the sandbox to it."""

    model_config = ConfigDict(frozen=True)

    host: str = Field(min_length=1, max_length=255)
    port: int = Field(ge=1, le=65_535)
    token: str = Field(min_length=16, max_length=128, pattern=r"^[A-Za-z0-9_-]+$", repr=False)


class ExecutorRequest(BaseModel):
    """The ``request`` field of the executor's ``POST /execute``."""

    script: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    limits: ExecutionLimits = Field(default_factory=ExecutionLimits)
    environment_sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="sha256 of the ``environment`` file sent with the request: the key an "
        "executor with an environment cache keeps it unpacked under.",
    )
    egress: EgressGrant | None = Field(
        default=None, description="The run may reach the network through the egress proxy."
    )


class ExecutorFile(BaseModel):
    """A file the manager may fetch with ``GET /files/{name}`` (e.g. ``outputs/report.md``,
    ``stdout``, ``stderr``)."""

    name: str
    size: int
    sha256: str


class ExecutorResult(BaseModel):
    """The executor's answer to ``POST /execute``."""

    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    cancelled: bool = False
    duration_ms: int
    isolation: Isolation
    outputs: list[ExecutorFile] = Field(default_factory=list)
    skipped_outputs: list[SkippedOutput] = Field(default_factory=list)
    full_stdout: ExecutorFile | None = None
    full_stderr: ExecutorFile | None = None
    error: str | None = None


class ExecutionRecord(BaseModel):
    """The stored outcome of an execution (``keys.execution_result_key``): which request it
    was, and what it came to. The manager writes it (``mcp_manager.executions``); anything
    that reads a run's script runs back (an eval job's evidence) reads it with this model.

    Attributes:
        fingerprint: the request's ``mcp_manager.records.Fingerprint.value`` (None only in a
            record no manager writes: such a record matches no request).
        result: the result, as answered (it is masked again when read back).
    """

    fingerprint: str | None = None
    result: ExecutionResult

    def encoded(self) -> bytes:
        """The record as stored."""
        return self.model_dump_json().encode()
