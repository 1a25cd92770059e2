"""The ``WORKFLOW__`` section: how agent runs are executed, which of its settings are the
worker's limits (:data:`WORKER_LIMITS`, read by ``skillweave.engines.contract``), and the
worker's tuning, ``WORKFLOW__WORKER_MAX_…`` and ``…_POLLERS`` (its cache of runs, its task
slots and pollers: read by ``workflows.worker.worker_tuning``; docs/SCALING.md sizes them).
Part of :class:`~skillweave.config.Settings`."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, Field, field_validator

from skillweave.config._urls import http_url

__all__ = ["WORKER_LIMITS", "ExecutionEngine", "WorkflowSettings", "worker_limits_set"]

ExecutionEngine = Literal["temporal", "direct"]

_WORKER_OWNED: Final = (
    " Read by the worker (a run runs under its worker's value); a client's is not used. "
    "The direct engine is its own worker."
)

_TUNING: Final = " Read by the worker alone (`skillweave worker`, `dev`, `demo`)."

WORKER_LIMITS: Final = (
    "model_timeout_seconds",
    "script_timeout_seconds",
    "heartbeat_timeout_seconds",
    "activity_timeout_seconds",
    "activity_max_attempts",
)
"""The ``WORKFLOW__`` settings a run's activities run under: the worker's, never a client's
(``skillweave.engines.contract.activity_timeouts`` reads them)."""


def worker_limits_set(settings: WorkflowSettings) -> list[str]:
    """The variables of :data:`WORKER_LIMITS` this process was given (environment, ``.env``
    or code), e.g. ``["WORKFLOW__SCRIPT_TIMEOUT_SECONDS"]``: on a client of the Temporal
    engine they have no effect."""
    return [
        f"WORKFLOW__{name.upper()}" for name in WORKER_LIMITS if name in settings.model_fields_set
    ]


class WorkflowSettings(BaseModel):
    """How agent runs are executed."""

    execution_engine: ExecutionEngine = Field(
        default="temporal",
        description="temporal (the default): runs are durable workflows on "
        "WORKFLOW__TEMPORAL_ADDRESS, run by workers (`skillweave dev` starts a server and a "
        "worker on this machine); direct: runs run in the process that starts them, for local "
        "development (not durable: they end with it).",
    )
    task_queue: str = "skillweave"
    namespace: str = "default"
    temporal_address: str = "localhost:7233"
    ui_url: str = Field(
        default="http://localhost:8233", description="The Temporal UI, for links to runs."
    )

    @field_validator("ui_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url, example="http://temporal-ui:8080")

    dev_db_file: Path = Field(
        default=Path("~/.skillweave/temporal.db"),
        description="`skillweave dev`: where the embedded server keeps its state.",
    )
    model_timeout_seconds: float = Field(
        default=600.0, gt=0, description="One model call." + _WORKER_OWNED
    )
    script_timeout_seconds: float = Field(
        default=900.0,
        gt=0,
        description="One script run, claim and byte moving included; must exceed the "
        "manager's SANDBOX__TIMEOUT_SECONDS." + _WORKER_OWNED,
    )
    heartbeat_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="A long activity silent this long is retried (how long a run stalls "
        "after its worker dies)." + _WORKER_OWNED,
    )
    activity_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Other activities." + _WORKER_OWNED
    )
    activity_max_attempts: int = Field(
        default=8, ge=1, description="Tries per activity call." + _WORKER_OWNED
    )
    worker_heartbeat_seconds: float = Field(
        default=5.0, gt=0, description="How often a long activity heartbeats."
    )
    worker_drain_seconds: float = Field(
        default=30.0,
        ge=0,
        description="A worker told to stop (SIGTERM, Ctrl-C) stops polling at once and gives "
        "its running activities this long to finish before cancelling them (they are retried "
        "on another worker).",
    )
    worker_max_cached_workflows: int = Field(
        default=1000,
        ge=0,
        le=100_000,
        description="Runs a worker keeps in memory between their steps (Temporal's sticky "
        "cache): a cached run's next step needs no replay of its history. A run beyond it is "
        "evicted and replayed at its next step, which costs CPU, never correctness; 0 turns "
        "the cache off (every step replays). Size it to the runs in flight per worker "
        "(docs/SCALING.md)." + _TUNING,
    )
    worker_max_concurrent_workflow_tasks: int = Field(
        default=100,
        ge=2,
        le=10_000,
        description="Workflow tasks (a run's steps between side effects) a worker runs at "
        "once; also the threads they run on." + _TUNING,
    )
    worker_max_concurrent_activities: int = Field(
        default=100,
        ge=1,
        le=10_000,
        description="Activities (model calls, script runs) a worker runs at once; mostly "
        "waiting on the network, so many fit on one core." + _TUNING,
    )
    worker_max_concurrent_local_activities: int = Field(
        default=100,
        ge=1,
        le=10_000,
        description="Local activities (short reads of skills and the transcript) a worker runs "
        "at once." + _TUNING,
    )
    worker_workflow_pollers: int = Field(
        default=5,
        ge=2,
        le=100,
        description="Most long polls a worker keeps open for workflow tasks (at least 2: one "
        "for its sticky queue, one for the shared one)." + _TUNING,
    )
    worker_activity_pollers: int = Field(
        default=5,
        ge=1,
        le=100,
        description="Most long polls a worker keeps open for activity tasks." + _TUNING,
    )
    worker_workflow_sandbox: bool = Field(
        default=False,
        description="Run workflow code in Temporal's workflow sandbox, which imports the "
        "workflow modules afresh for every run and routes every call of a workflow task "
        "through its import checks: about a fifth of a busy worker's CPU (docs/SCALING.md). "
        "Off by default: the workflow modules import only pure code (checked by the import "
        "layers) and every recorded history is replayed inside the sandbox in CI. Turn it on "
        "while changing workflow code." + _TUNING,
    )
    follow_worker_wait_seconds: float = Field(
        default=3600.0,
        ge=0,
        description="How long a follower of a run (`run --engine temporal`, `runs logs`, the "
        "API's event stream) keeps waiting while no worker answers before it gives up, saying "
        "the run may still be running (the run itself goes on); 0 = wait for ever.",
    )
