"""The Temporal engine's contract: names and wire models the client and the workflow share.

The client (:mod:`skillweave.engines.temporal`, the CLI, the API) and the workflow
(``workflows.agent``) both import this module and nothing else of each other. It is pure
(pydantic models and ``temporalio.common`` search-attribute keys), so the workflow sandbox can
pass it through.

One workflow per run, with a workflow id derived from the run id. Interactions:

- **update** ``send_message`` (:class:`UserMessage` → :class:`Reply`): a user message; the
  update completes with the model's answer to it. Its validator rejects empty or oversized
  text, a run that has ended, and a reply to an answer that is no longer the latest (stale).
- **signal** ``cancel`` (a reason) and **signal** ``approve`` (an ``ApprovalDecision``).
- **query** ``status`` (:class:`RunView`: phase, active skills, turn, usage, last error — never
  the transcript) and **query** ``events`` (:class:`EventPage`, the latest events after an
  index).

The workflow's side effects are the activities declared in ``skillweave.agent.effects`` (one
descriptor each, its ``name`` the activity's); the workflow schedules them
(``workflows.runtime``) and the worker registers them (``activities.agent``) from those
descriptors. A script run's idempotency key comes from ``skillweave.agent.idempotency``.
:class:`ActivityTimeouts` and :data:`Phase`, which those descriptors name, are defined there, in
the agent layer, and re-exported here with the rest of the contract.

**The worker owns the limits its activities run under** (:class:`ActivityTimeouts`: a model
call's, a script run's and the other activities' start-to-close timeouts, the heartbeat
timeout, the attempts). They are fleet settings an operator sets on the workers
(``WORKFLOW__MODEL_TIMEOUT_SECONDS``, ``…SCRIPT_TIMEOUT_SECONDS``, ``…HEARTBEAT_TIMEOUT_SECONDS``,
``…ACTIVITY_TIMEOUT_SECONDS``, ``…ACTIVITY_MAX_ATTEMPTS``: :data:`WORKER_LIMITS`, read by
:func:`activity_timeouts`), beside the manager whose script limit they must exceed; a client's
values are not used. A run asks for them once, at its start, with the local activity
``run_limits`` (that one call runs under the defaults of :class:`ActivityTimeouts`), runs every
later activity under them, carries them over continue-as-new (:attr:`AgentWorkflowInput.limits`)
and shows them in ``status`` (:attr:`RunView.limits`).

A run runs only on workers of the store it was started against: the client starts it on the
configured task queue routed to that store (:func:`store_task_queue`), the only queue those
workers poll for it, and its activities run on the workflow's queue. Every worker also answers
a roll call on the configured (base) queue: it polls it for :data:`ROLL_CALL_ACTIVITY`, which
nothing schedules, so that the queue's description lists every worker with its identity.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field
from temporalio.common import SearchAttributeKey

from skillweave.agent.effect_models import ActivityTimeouts, ApprovalRequest
from skillweave.agent.effects import Phase
from skillweave.agent.events import AgentEvent
from skillweave.agent.idempotency import RUN_KEY_PREFIX, run_id_of, run_key
from skillweave.agent.state import AgentState, RunStatus
from skillweave.config import WORKER_LIMITS, CatalogMode, WorkflowSettings
from skillweave.engines.base import RunRequest
from skillweave.llm.messages import Usage

__all__ = [
    "EVENTS_CARRIED",
    "EVENT_WINDOW",
    "FAILURE_TYPES",
    "MAX_MESSAGE_CHARS",
    "QUERY_EVENTS",
    "QUERY_STATUS",
    "ROLL_CALL_ACTIVITY",
    "SA_ACTIVE_SKILLS",
    "SA_AGENT",
    "SA_PHASE",
    "SA_TOKENS",
    "SA_TURNS",
    "SEARCH_ATTRIBUTES",
    "SIGNAL_APPROVE",
    "SIGNAL_CANCEL",
    "UPDATE_SEND",
    "WORKER_LIMITS",
    "WORKFLOW_ID_PREFIX",
    "WORKFLOW_NAME",
    "ActivityTimeouts",
    "AgentWorkflowInput",
    "EventPage",
    "Phase",
    "Reply",
    "RunView",
    "UserMessage",
    "activity_timeouts",
    "run_id_of",
    "store_task_queue",
    "workflow_id",
]

WORKFLOW_NAME: Final = "AgentWorkflow"
WORKFLOW_ID_PREFIX: Final = RUN_KEY_PREFIX
UPDATE_SEND: Final = "send_message"
SIGNAL_CANCEL: Final = "cancel"
SIGNAL_APPROVE: Final = "approve"
QUERY_STATUS: Final = "status"
QUERY_EVENTS: Final = "events"

FAILURE_TYPES: Final = ("BudgetExhausted", "RunFailed")
"""``ApplicationError`` types the workflow fails with, the run's ``RunResult`` in their details
(read back by the engine's client and by an eval batch, whose jobs' runs are its children)."""

MAX_MESSAGE_CHARS: Final = 32_000
"""The longest user message the update accepts."""

EVENT_WINDOW: Final = 500
"""Events a workflow keeps for readers catching up."""

EVENTS_CARRIED: Final = 100
"""Of those, the latest carried over continue-as-new (the new run's input stays small)."""

SA_AGENT: Final = SearchAttributeKey.for_keyword("SkillweaveAgent")
SA_PHASE: Final = SearchAttributeKey.for_keyword("SkillweavePhase")
SA_ACTIVE_SKILLS: Final = SearchAttributeKey.for_keyword_list("SkillweaveActiveSkills")
SA_TURNS: Final = SearchAttributeKey.for_int("SkillweaveTurns")
SA_TOKENS: Final = SearchAttributeKey.for_int("SkillweaveTokens")
SEARCH_ATTRIBUTES: Final = (SA_AGENT, SA_PHASE, SA_ACTIVE_SKILLS, SA_TURNS, SA_TOKENS)
"""Registered on the server (``skillweave dev`` does it) so ops can filter runs."""


def workflow_id(run_id: str) -> str:
    """The workflow id of a run: one workflow per run, found again from its id."""
    return run_key(run_id)


ROLL_CALL_ACTIVITY: Final = "roll_call"
"""The activity every worker registers on the base task queue and nothing ever schedules: its
pollers are the roll call of the queue's workers (their identities name their stores)."""


def store_task_queue(task_queue: str, store_id: str) -> str:
    """The queue a run started against the store `store_id` runs on: `task_queue` (the
    configured one, ``WORKFLOW__TASK_QUEUE``) routed to the store, e.g.
    ``skillweave@0123456789abcdef``. Only workers of that store poll it, so nothing of the
    run is ever done by a worker of another store, and it waits until one of its own polls."""
    return f"{task_queue}@{store_id}"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


def activity_timeouts(settings: WorkflowSettings) -> ActivityTimeouts:
    """The activity timeouts of a worker's ``WORKFLOW__*`` settings (:data:`WORKER_LIMITS`):
    what its ``run_limits`` activity answers."""
    return ActivityTimeouts(
        model_seconds=settings.model_timeout_seconds,
        script_seconds=settings.script_timeout_seconds,
        heartbeat_seconds=settings.heartbeat_timeout_seconds,
        short_seconds=settings.activity_timeout_seconds,
        max_attempts=settings.activity_max_attempts,
    )


class AgentWorkflowInput(_Model):
    """What a run of the workflow starts from: the run, and after continue-as-new its state."""

    request: RunRequest
    catalog_mode: CatalogMode = "enabled"
    catalog_top_k: int = 8
    limits: ActivityTimeouts | None = Field(
        default=None,
        description="The worker's limits, carried over continue-as-new (asked once per run).",
    )
    state: AgentState | None = Field(default=None, description="Carried over continue-as-new.")
    inbox: tuple[str, ...] = Field(default=(), description="Messages not yet taken.")
    events: tuple[AgentEvent, ...] = Field(default=(), description="The latest events.")
    events_total: int = Field(default=0, ge=0, description="Events since the run started.")
    runs: int = Field(default=1, ge=1, description="This run's number (1 + continues).")


class UserMessage(_Model):
    """A user message for a running run (the ``send_message`` update)."""

    text: str = Field(description=f"At most {MAX_MESSAGE_CHARS} characters (the validator says).")
    reply_to_turn: int | None = Field(
        default=None,
        ge=0,
        description="The turn of the answer this replies to; stale if a newer answer exists.",
    )


class Reply(_Model):
    """The answer to a user message, or why there is none."""

    run_id: str
    turn: int
    status: RunStatus
    text: str | None = None
    reason: str | None = None


class RunView(_Model):
    """A run's status for people and tools (the ``status`` query). Never the transcript."""

    run_id: str
    agent: str
    task: str
    phase: Phase
    status: RunStatus
    turn: int
    script_runs: int
    usage: Usage
    active_skills: dict[str, str] = Field(default_factory=dict, description="name → version")
    last_error: str | None = None
    reason: str | None = None
    answer: str | None = None
    awaiting_approval: ApprovalRequest | None = None
    answer_turn: int | None = Field(default=None, description="The turn of the latest answer.")
    events_total: int = 0
    runs: int = 1
    outputs: int = Field(default=0, description="Output artifacts so far.")
    limits: ActivityTimeouts | None = Field(
        default=None,
        description="The limits the run's activities run under (the worker's); None until "
        "the run has asked for them.",
    )


class EventPage(_Model):
    """Events after an index (the ``events`` query); ``next`` is the index to ask for next."""

    events: tuple[AgentEvent, ...]
    next: int
    dropped: int = Field(default=0, description="Events older than the window, not returned.")
    finished: bool = False
