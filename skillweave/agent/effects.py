"""The side effects of an agent run, each declared once, and the `Runtime` port that makes them.

A :class:`SideEffect` says all that the engines need to know of one side effect: its activity
name (recorded in workflow histories: never rename one), its input and result models
(:mod:`skillweave.agent.effect_models`), the limit it runs under, whether it heartbeats,
whether it is a local activity, the phase it puts the run in, its summary for the Temporal UI,
its activity id, whether cancelling waits for it and which limits (and so which retry policy)
apply.
:data:`EFFECTS` holds them all; everything else is derived from it:

- the loop calls ``runtime.call(INVOKE_MODEL, request)`` (``skillweave.agent.loop``);
- the workflow schedules the activity the descriptor describes (``workflows.runtime``);
- the worker registers one activity per descriptor (``activities.agent``) and the direct engine
  makes the same call in-process (``skillweave.engines.direct``), both calling the method of the
  implementation named as the effect (``AgentServices.invoke_model``; the worker's own for
  ``run_limits``), checked when they are built (:func:`check_implemented`).

So adding a side effect is its descriptor here, its method on ``AgentServices`` and its test.
Whether a failure is retried is one rule for every effect (``skillweave.engines.retries``);
what a descriptor chooses is the limits its attempts and timeouts come from.

Pure: no I/O, no clock, no temporalio; the workflow sandbox passes it through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from skillweave.agent.effect_models import (
    ActivityTimeouts,
    ApprovalDecision,
    ApprovalRequest,
    CatalogInput,
    CatalogResult,
    CreateSkillInput,
    CreateSkillOutcome,
    FindSkillsInput,
    FindSkillsOutcome,
    InstallSkillInput,
    InstallSkillOutcome,
    InvokeModelInput,
    LimitsInput,
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
    SkillLoaded,
    SkillRequestChecked,
    SkillRequestInput,
    ToolOutcome,
    WaitInput,
)
from skillweave.agent.idempotency import script_call_id
from skillweave.agent.state import AgentState
from skillweave.errors import ConfigError

__all__ = [
    "CREATE_SKILL",
    "EFFECTS",
    "FIND_SKILLS",
    "INSTALL_SKILL",
    "INVOKE_MODEL",
    "LOAD_SKILL",
    "PREPARE_CATALOG",
    "PREPARE_SKILL_REQUEST",
    "PUBLISH_SKILL",
    "READ_SKILL_RESOURCE",
    "RECORD_TRANSCRIPT",
    "RUN_LIMITS",
    "RUN_SKILL_SCRIPT",
    "SEARCH_SKILLS",
    "Phase",
    "Runtime",
    "SideEffect",
    "check_implemented",
    "effect_named",
]

Phase = Literal[
    "starting",
    "thinking",
    "activating",
    "reading",
    "searching",
    "running_script",
    "awaiting_approval",
    "waiting_input",
    "completed",
    "failed",
    "cancelled",
    "budget_exhausted",
]
"""What a run is doing now; the last four are how it ended."""

Limit = Literal["model", "script", "short"]
"""An :class:`ActivityTimeouts` start-to-close limit, by its field's name (``model_seconds``…)."""

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out")


@dataclass(frozen=True, kw_only=True)
class SideEffect(Generic[In, Out]):
    """One side effect of an agent run: a Temporal activity, or a direct in-process call.

    Attributes:
        name: the activity's name, and the implementation's method name.
        input: what a call takes.
        output: what it answers (None: nothing).
        summary: what the Temporal UI shows for a call, from the request and the run's state.
        retry_name: what a call is in a few words, for its retry notices (``script pdf/x.py``,
            ``activate pdf``); a model call's names the model the services resolved.
        phase: what the run is doing while the call runs (None: unchanged).
        timeout: the start-to-close limit: a :data:`Limit`, or the seconds a call is given
            by its request and the run's limits.
        heartbeat: a long call: the worker heartbeats while it runs, and the workflow gives it
            a heartbeat timeout, so a dead worker is noticed (and a cancellation delivered).
        local: a local activity: recorded as one marker in the workflow task that asked for
            it. Only for a short call that is idempotent where it stores (a read whose result
            goes to a fixed transcript key), since a crash runs it again.
        activity_id: the call's activity id (None: Temporal's); in the run's history, so it is
            made from the same ``seq`` as the request's idempotency keys.
        waits_for_cancellation: a cancelled run waits until the call is cancelled too (a
            script run, at the manager).
        limits: ``run``: the run's limits (the worker's); ``defaults``: the contract's
            defaults (``run_limits``, which asks for the worker's before they are known). The
            timeouts and the retry policy's attempts come from them.
        implemented_by: ``services``: ``AgentServices.<name>``; ``worker``: the worker itself
            (it answers its own settings), never called by the direct engine.
    """

    name: str
    input: type[In]
    output: type[Out] | None
    summary: Callable[[In, AgentState], str]
    retry_name: Callable[[In], str]
    phase: Phase | None = None
    timeout: Limit | Callable[[In, ActivityTimeouts], float] = "short"
    heartbeat: bool = False
    local: bool = False
    activity_id: Callable[[In], str] | None = None
    waits_for_cancellation: bool = False
    limits: Literal["run", "defaults"] = "run"
    implemented_by: Literal["services", "worker"] = "services"

    def seconds(self, request: In, limits: ActivityTimeouts) -> float:
        """The start-to-close timeout of a call of `request` under `limits`."""
        if callable(self.timeout):
            return self.timeout(request, limits)
        seconds: float = getattr(limits, f"{self.timeout}_seconds")
        return seconds


def _script_summary(request: RunScriptInput, state: AgentState) -> str:
    summary = f"run {request.skill}/{request.script}"
    if request.run_json is not None:
        return f"{summary} ({request.tool_name})"
    if request.args:
        return f"{summary} " + " ".join(request.args)
    return summary


def _model_summary(request: InvokeModelInput, state: AgentState) -> str:
    summary = f"model turn {state.turn + 1}"
    match request.reads:
        case ():
            return summary
        case (read,):
            return f"{summary}, after reading {read.skill}/{read.path}"
        case reads:
            return f"{summary}, after {len(reads)} reads"


def _examples_seconds(request: CreateSkillInput, limits: ActivityTimeouts) -> float:
    # its examples run in sandboxes, one after another
    return limits.script_seconds * (1 + len(request.examples))


PREPARE_CATALOG: Final = SideEffect[CatalogInput, CatalogResult](
    name="prepare_catalog",
    input=CatalogInput,
    output=CatalogResult,
    summary=lambda request, state: "prepare the skill catalog",
    retry_name=lambda request: "prepare the skill catalog",
    phase="starting",
    local=True,
)
INVOKE_MODEL: Final = SideEffect[InvokeModelInput, ModelTurn](
    name="invoke_model",
    input=InvokeModelInput,
    output=ModelTurn,
    summary=_model_summary,
    retry_name=lambda request: f"model {request.model or 'default'}",
    phase="thinking",
    timeout="model",
    heartbeat=True,
)
LOAD_SKILL: Final = SideEffect[LoadSkillInput, SkillLoaded](
    name="load_skill",
    input=LoadSkillInput,
    output=SkillLoaded,
    summary=lambda request, state: f"activate {request.skill}",
    retry_name=lambda request: f"activate {request.skill}",
    phase="activating",
    heartbeat=True,  # registering its tools may run ``--help-json`` in a sandbox
)
READ_SKILL_RESOURCE: Final = SideEffect[ReadResourceInput, ToolOutcome](
    name="read_skill_resource",
    input=ReadResourceInput,
    output=ToolOutcome,
    summary=lambda request, state: f"read {request.skill}/{request.path}",
    retry_name=lambda request: f"read {request.skill}/{request.path}",
    phase="reading",
    local=True,
)
RUN_SKILL_SCRIPT: Final = SideEffect[RunScriptInput, ScriptOutcome](
    name="run_skill_script",
    input=RunScriptInput,
    output=ScriptOutcome,
    summary=_script_summary,
    retry_name=lambda request: f"script {request.skill}/{request.script}",
    phase="running_script",
    timeout="script",
    heartbeat=True,
    # The run's idempotency key is in the request (skillweave.agent.idempotency makes both).
    activity_id=lambda request: script_call_id(request.seq),
    waits_for_cancellation=True,
)
SEARCH_SKILLS: Final = SideEffect[SearchInput, SearchOutcome](
    name="search_skills",
    input=SearchInput,
    output=SearchOutcome,
    summary=lambda request, state: f"search skills for {request.query!r}",
    retry_name=lambda request: "search skills",
    phase="searching",
    local=True,
)
RECORD_TRANSCRIPT: Final = SideEffect[RecordInput, None](
    name="record_transcript",
    input=RecordInput,
    output=None,
    summary=lambda request, state: "record the last messages",
    retry_name=lambda request: "record the transcript",
)
CREATE_SKILL: Final = SideEffect[CreateSkillInput, CreateSkillOutcome](
    name="create_skill",
    input=CreateSkillInput,
    output=CreateSkillOutcome,
    summary=lambda request, state: f"create skill {request.name}",
    retry_name=lambda request: f"create skill {request.name}",
    phase="running_script",
    timeout=_examples_seconds,
    heartbeat=True,
    # The examples' idempotency keys are in the request (made from the same seq).
    activity_id=lambda request: f"create-skill-{request.seq}",
)
PUBLISH_SKILL: Final = SideEffect[PublishSkillInput, PublishSkillOutcome](
    name="publish_skill",
    input=PublishSkillInput,
    output=PublishSkillOutcome,
    summary=lambda request, state: f"publish skill {request.name}",
    retry_name=lambda request: f"publish skill {request.name}",
    phase="activating",
    heartbeat=True,
)
FIND_SKILLS: Final = SideEffect[FindSkillsInput, FindSkillsOutcome](
    name="find_skills",
    input=FindSkillsInput,
    output=FindSkillsOutcome,
    summary=lambda request, state: f"find registry skills for {request.query!r}",
    retry_name=lambda request: "find registry skills",
    phase="searching",
    heartbeat=True,  # a registry's index may be fetched
)
PREPARE_SKILL_REQUEST: Final = SideEffect[SkillRequestInput, SkillRequestChecked](
    name="prepare_skill_request",
    input=SkillRequestInput,
    output=SkillRequestChecked,
    summary=lambda request, state: f"check registry skill {request.name}",
    retry_name=lambda request: f"check registry skill {request.name}",
    phase="searching",
    timeout="script",  # fetching its source and scanning it
    heartbeat=True,
)
INSTALL_SKILL: Final = SideEffect[InstallSkillInput, InstallSkillOutcome](
    name="install_skill",
    input=InstallSkillInput,
    output=InstallSkillOutcome,
    summary=lambda request, state: f"install skill {request.name}",
    retry_name=lambda request: f"install skill {request.name}",
    phase="activating",
    timeout="script",  # fetching its source again, scanning it, storing it
    heartbeat=True,
    # Its idempotency marker is keyed on the run and this seq (engines._acquisition).
    activity_id=lambda request: f"install-skill-{request.seq}",
)
RUN_LIMITS: Final = SideEffect[LimitsInput, ActivityTimeouts](
    name="run_limits",
    input=LimitsInput,
    output=ActivityTimeouts,
    summary=lambda request, state: "the worker's limits",
    retry_name=lambda request: "the worker's limits",
    local=True,
    limits="defaults",
    implemented_by="worker",
)

EFFECTS: Final[tuple[SideEffect[Any, Any], ...]] = (
    PREPARE_CATALOG,
    INVOKE_MODEL,
    LOAD_SKILL,
    READ_SKILL_RESOURCE,
    RUN_SKILL_SCRIPT,
    SEARCH_SKILLS,
    RECORD_TRANSCRIPT,
    CREATE_SKILL,
    PUBLISH_SKILL,
    FIND_SKILLS,
    PREPARE_SKILL_REQUEST,
    INSTALL_SKILL,
    RUN_LIMITS,
)
"""Every side effect of an agent run: the worker registers one activity per entry."""

_BY_NAME: Final = {effect.name: effect for effect in EFFECTS}


def effect_named(name: str) -> SideEffect[Any, Any]:
    """The side effect whose activity is `name`.

    Raises:
        KeyError: no side effect has that name.
    """
    return _BY_NAME[name]


def check_implemented(
    implementation: object, effects: Iterable[SideEffect[Any, Any]], *, by: str
) -> None:
    """Check that `implementation` has, for each of `effects`, an async method named as it
    (what the worker and the direct engine call): fail at once, not at the run's first call.

    Raises:
        ConfigError: one is missing; the line names it and `by`.
    """
    missing = [e.name for e in effects if not callable(getattr(implementation, e.name, None))]
    if missing:
        raise ConfigError(
            f"{by} implements no {', '.join(missing)}: every side effect needs a method "
            "named as it, taking its input model (skillweave.agent.effects)"
        )


class Runtime(Protocol):
    """The side effects of an agent run. Implemented by the direct and the Temporal engine."""

    async def call(self, effect: SideEffect[In, Out], request: In) -> Out:
        """Make the side effect `effect` with `request` and answer its result."""
        ...

    def now(self) -> float:
        """Seconds since the epoch (workflow time under Temporal)."""
        ...

    def reads_ride_with_model_calls(self) -> bool:
        """Whether a resource read waits for the next model call, which does it first (a call
        and a workflow activation fewer a read). Asked at each read; under Temporal a patch,
        so a run whose history read on its own replays reading on its own."""
        ...

    async def wait_for_input(self, request: WaitInput) -> list[str]:
        """User messages sent to the run, waiting up to ``timeout_seconds`` for the first."""
        ...

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Wait for a person to approve or deny a script run (denied after the timeout)."""
        ...
