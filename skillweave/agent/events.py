"""What a job reports as it goes: one `AgentEvent` per step, for live views and JSON streams.

Events are data the loop hands to an ``on_event`` callback (no I/O here); an engine forwards
them to its subscribers (the CLI's live view, ``--json`` lines, later the control API).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.llm.messages import Usage
from skillweave.storage.base import ArtifactRef

__all__ = ["AgentEvent", "EventKind"]

EventKind = Literal[
    "job_started",
    "preloaded",
    "model_called",
    "skill_activated",
    "resource_read",
    "skills_searched",
    "script_ran",
    "tool_refused",
    "compacted",
    "message_received",
    "answered",
    "approval_requested",
    "approval_decided",
    "skill_drafted",
    "skill_published",
    "job_finished",
]


class AgentEvent(BaseModel):
    """One step of a job. Fields beyond ``kind``, ``job_id`` and ``turn`` depend on the kind."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    job_id: str
    turn: int
    at: float = Field(description="Seconds since the epoch, from the runtime's clock.")
    skill: str | None = None
    version: str | None = None
    tool: str | None = None
    detail: str = ""
    status: str | None = None
    duration_ms: int | None = None
    usage: Usage | None = None
    model: str | None = Field(default=None, description="model_called: the model that answered.")
    artifacts: tuple[ArtifactRef, ...] = ()
    tools_registered: tuple[str, ...] = ()
