"""What ``/v1/runs`` takes and answers: a run (:class:`Run`), a listing's rows and pages, a
message, an approval, a cancel, an artifact. The run routes (:mod:`skillweave.api.runs`) and the
services under them (:mod:`skillweave.api.run_launcher`, :mod:`skillweave.api.run_reader`,
:mod:`skillweave.api.run_records`) use them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from skillweave.agent import PinnedSkill
from skillweave.api.agent_store import Agent
from skillweave.engines import RunResult
from skillweave.storage import ArtifactRef
from skillweave.waiting import Waiting

__all__ = ["Approval", "Artifact", "Cancel", "Message", "Run", "RunPage", "RunSummary"]


class Run(BaseModel):
    """A run as stored and returned."""

    id: str
    agent_id: str | None = Field(
        description="The stored agent it ran; None for a run another door started (the CLI)."
    )
    agent: Agent | None = Field(
        description="The agent as it was when the run started; None for a run another door "
        "started (agent_name names its agent)."
    )
    agent_name: str | None = Field(
        default=None,
        description="The agent's name as the engine knows it (a stored agent's slug), as the "
        "listing shows it.",
    )
    input: str
    inputs: list[ArtifactRef] = Field(default_factory=list)
    skills: list[PinnedSkill] | None = Field(
        default=None,
        description="The skills the run uses, at the versions they had when it started.",
    )
    model: str | None = Field(
        default=None,
        description=(
            "The model that runs it, as provider:name (with its profile): the one the agent"
            " names, else the API's default model, given to the run by name. None only for a"
            " run another door started without naming one (its worker's default runs it)."
            " Each model_called event names the model that answered."
        ),
    )
    created_at: datetime
    status: str = Field(default="running", description="running, or how the run ended.")
    result: RunResult | None = None
    waiting: list[Waiting] = Field(
        default_factory=list,
        description="What the running run's steps wait for now (a manager, a worker, a free "
        "sandbox…) and since when; empty when nothing waits. Not stored: read when asked.",
    )


class Approval(BaseModel):
    """What ``POST /v1/runs/{id}/approvals`` takes: the decision on the script run the run
    waits on."""

    approved: bool
    note: str = Field(default="", max_length=2_000, description="Why (the model sees it).")


class Cancel(BaseModel):
    """What ``POST /v1/runs/{id}/cancel`` may take."""

    reason: str = Field(
        default="cancelled by the user", min_length=1, max_length=500, description="Why."
    )


class RunSummary(BaseModel):
    """A run as listed: from the run records (direct engine) or Temporal visibility (every
    run on the namespace, whichever door started it)."""

    id: str
    status: str
    agent: str | None = Field(default=None, description="The agent's name.")
    created_at: datetime
    closed_at: datetime | None = None
    phase: str | None = Field(
        default=None, description="What it does now, or how it ended (temporal engine)."
    )
    turns: int | None = None
    tokens: int | None = None
    active_skills: list[str] = Field(default_factory=list)


class RunPage(BaseModel):
    items: list[RunSummary]
    total: int | None = Field(description="None when the listing is a page of visibility.")
    limit: int
    offset: int


class Message(BaseModel):
    text: str = Field(min_length=1, max_length=32_000)


class Artifact(BaseModel):
    path: str = Field(description="Path under the run: inputs/…, executions/…/outputs/…")
    size: int
    sha256: str
