"""What a run reports as it goes: one `AgentEvent` per step, for live views and JSON streams.

This module is the one definition of the kinds the engines emit (:data:`EventKind`, every one
listed in :data:`EVENT_KINDS`). Events are data the loop hands to an ``on_event`` callback (no
I/O here); an engine forwards them to its followers: the CLI's live view and ``--json`` lines,
``runs logs``, the API's event stream, the Temporal UI's details. How each kind is shown is
said once, in :mod:`skillweave.agent.rendering`.

A kind is checked where an event is made (Python validation: the loop cannot emit a kind that
is not listed) but not where one is read back from JSON (an event from a newer server or
worker keeps its kind's name, and the views show it generically), so a reader of another
version never fails on a step it does not know.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from skillweave.llm.messages import Usage
from skillweave.storage.base import ArtifactRef

__all__ = ["EVENT_KINDS", "AgentEvent", "EventKind"]

EventKind = Literal[
    "run_started",
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
    "registry_searched",
    "skill_requested",
    "skill_installed",
    "run_finished",
]

EVENT_KINDS: Final[frozenset[str]] = frozenset(get_args(EventKind))
"""Every kind the engines emit."""


class AgentEvent(BaseModel):
    """One step of a run. Fields beyond ``kind``, ``run_id`` and ``turn`` depend on the kind.

    ``kind`` is one of :data:`EventKind` when the event is made; read from JSON it may be a
    newer version's kind, kept by its name (see the module docstring).
    """

    model_config = ConfigDict(frozen=True)

    kind: EventKind | str
    run_id: str
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

    @field_validator("kind")
    @classmethod
    def _listed_when_made(cls, kind: str, info: ValidationInfo) -> str:
        if info.mode == "python" and kind not in EVENT_KINDS:
            raise ValueError(f"{kind!r} is not an event kind: list it in EventKind")
        return kind
