"""The `Engine` protocol: start a run, stream its events, send it a message, cancel it, get
its result. Two engines implement it: ``direct`` (the loop in-process) and ``temporal`` (the
loop in a workflow); callers pick one through settings and never see the difference.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillweave.agent import AgentEvent, AgentSpec, AgentState, ApprovalDecision, RunStatus
from skillweave.llm import Usage
from skillweave.storage import ArtifactRef

__all__ = ["Engine", "RunRequest", "RunResult", "result_of"]


class RunRequest(BaseModel):
    """A run to start: the task, the agent, and the input artifacts (already in the store,
    under ``runs/{run_id}/inputs/``)."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,200}$")
    task: str = Field(min_length=1)
    agent: AgentSpec = Field(default_factory=AgentSpec)
    inputs: tuple[ArtifactRef, ...] = ()
    store_id: str | None = Field(
        default=None,
        description="The id of the store the run was started against (``storage.identity``): "
        "a worker with another store refuses it at its first step.",
    )


class RunResult(BaseModel):
    """How a run ended."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    status: RunStatus
    reason: str | None = None
    answer: str | None = None
    turns: int = 0
    script_runs: int = 0
    usage: Usage = Field(default_factory=Usage)
    active_skills: dict[str, str] = Field(default_factory=dict, description="name → version")
    outputs: tuple[ArtifactRef, ...] = ()
    transcript_entries: int = 0


class Engine(Protocol):
    """Runs agent runs."""

    async def start(self, request: RunRequest) -> str:
        """Start a run; returns its id (the request's)."""
        ...

    def events(self, run_id: str) -> AsyncIterator[AgentEvent]:
        """Every event of the run from its start, ending after ``run_finished``."""
        ...

    async def send(self, run_id: str, text: str) -> None:
        """A user message for the run (taken before its next model call)."""
        ...

    async def approve(self, run_id: str, decision: ApprovalDecision) -> None:
        """Approve or deny the script run the run is waiting on."""
        ...

    async def cancel(self, run_id: str) -> None:
        """Stop the run; its result says ``cancelled``."""
        ...

    async def result(self, run_id: str) -> RunResult:
        """Wait for the run to end and return how it ended."""
        ...


def result_of(state: AgentState) -> RunResult:
    """The :class:`RunResult` of a finished (or running) state."""
    return RunResult(
        run_id=state.run_id,
        status=state.status,
        reason=state.reason,
        answer=state.answer,
        turns=state.turn,
        script_runs=state.script_runs,
        usage=state.usage,
        active_skills={name: skill.version for name, skill in state.active.items()},
        outputs=tuple(state.outputs),
        transcript_entries=state.next_seq,
    )
