"""The `Runtime` port: every side effect of the agent loop goes through it.

One method per effect, each taking one input model and returning one result model, so that the
Temporal engine can make each call an activity (``invoke_model``, ``load_skill``…) and the
direct engine can call the same services in-process through the same JSON round-trip. Results
are small: a tool's full output is written by the runtime to the transcript in the store
(``runs/{run}/transcript/{seq}``) and comes back as its size and a one-line summary, so the
loop's state grows with turns, not with output.

Errors: a mistake the model can fix is *not* an exception here; it comes back as a result with
``is_error`` set (an unknown resource path, a script that is not in the skill). Exceptions are
infrastructure failures (``ModelError``, ``SandboxError``, ``StorageError``…) and end the job
(the Temporal engine retries them first, by the classification in ``skillweave.llm.retry``).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillweave.agent.disclosure import RUN_SKILL_SCRIPT
from skillweave.agent.spec import PinnedSkill
from skillweave.agent.state import SkillTool
from skillweave.config import CatalogMode
from skillweave.llm.messages import Message, StopReason, ToolSpec, Usage
from skillweave.sandbox.models import ExecutionStatus
from skillweave.skills.allowed_tools import AllowedTools
from skillweave.storage.base import ArtifactRef

__all__ = [
    "SUMMARY_MAX_CHARS",
    "ApprovalDecision",
    "ApprovalRequest",
    "CatalogInput",
    "CatalogResult",
    "InvokeModelInput",
    "LoadSkillInput",
    "ModelTurn",
    "ReadResourceInput",
    "RunScriptInput",
    "Runtime",
    "ScriptOutcome",
    "SearchInput",
    "SearchOutcome",
    "SkillLoaded",
    "ToolInvocation",
    "ToolOutcome",
    "TranscriptView",
    "TranscriptWrite",
    "WaitInput",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class CatalogInput(_Model):
    """What the job may see of the skill library (from the agent spec)."""

    run_id: str
    task: str
    mode: CatalogMode = "enabled"
    top_k: int = 8
    allowed: tuple[str, ...] | None = Field(
        default=None, description="Skill names the agent may use (a parent allows its tree)."
    )
    preload: bool = Field(default=False, description="Activate the best match first.")
    preload_threshold: float | None = Field(
        default=None,
        description="Preload only above this score (the selection strategy's scale); None: "
        "the strategy's default. Set alone (by jobs started before `preload`), it means preload.",
    )
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None, description="The skills at the versions the job started with."
    )


class CatalogResult(_Model):
    """The tier-1 catalog and the skills ``activate_skill`` may name at the start."""

    catalog: str
    roots: tuple[str, ...]
    search_enabled: bool = False
    preload: str | None = None
    auto_load: tuple[str, ...] = Field(
        default=(), description="Skills to activate before the first model call, in order."
    )
    aliases: dict[str, str] = Field(
        default_factory=dict,
        description="Qualified names (web.scraper) of the job's namespaced skills, to the "
        "names the catalog shows them by.",
    )


class TranscriptWrite(_Model):
    """A message the loop made itself (the task, a refusal, a note) to store at `seq`."""

    seq: int
    message: Message


class TranscriptView(_Model):
    """Which stored messages a model call sees: ``0..upto-1``, where every elidable output
    (a compactable kind whose summary is shorter than its text) below ``elide_before`` is
    replaced by its summary. Two numbers, however long the job: the call's input stays flat."""

    upto: int = Field(ge=0)
    elide_before: int = Field(default=0, ge=0)


class InvokeModelInput(_Model):
    run_id: str
    system: str
    tools: tuple[ToolSpec, ...]
    view: TranscriptView
    writes: tuple[TranscriptWrite, ...] = Field(
        default=(), description="Stored first: the loop's own messages since the last call."
    )
    reply_seq: int = Field(description="Where the model's reply is stored.")
    max_output_tokens: int = 4096
    model: str | None = Field(
        default=None,
        description="The job's model: a profile or provider:name, resolved where it runs.",
    )


class ModelTurn(_Model):
    message: Message
    stop_reason: StopReason
    usage: Usage
    model: str = ""


class LoadSkillInput(_Model):
    run_id: str
    skill: str
    seq: int = Field(description="Where the activation payload is stored.")
    tool_call_id: str
    allowed: tuple[str, ...] | None = None
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None, description="The skills at the versions the job started with."
    )
    taken_tools: tuple[str, ...] = Field(
        default=(),
        description="Tool names the job's active skills registered: a new tool keeps its own "
        "name only while no other tool has it.",
    )


class SkillLoaded(_Model):
    """An activation: the pinned version, the children now attachable, registered tools."""

    skill: str
    version: str
    chars: int
    children: tuple[str, ...] = ()
    tools: tuple[SkillTool, ...] = ()
    notes: tuple[str, ...] = Field(
        default=(), description="Problems registering tools (the skill is active regardless)."
    )
    allowed: AllowedTools | None = Field(
        default=None, description="Its allowed-tools, read onto skillweave's tools."
    )


class ReadResourceInput(_Model):
    run_id: str
    skill: str
    version: str
    path: str
    seq: int
    tool_call_id: str


SUMMARY_MAX_CHARS: Final = 300
"""The longest summary an output may have (what the model sees once it is elided)."""


class ToolOutcome(_Model):
    """A tool result the runtime stored at `seq`: its size and what compaction leaves.

    The runtime stores the same summary beside the output, so a model call can elide it."""

    seq: int
    chars: int
    is_error: bool = False
    summary: str = Field(max_length=SUMMARY_MAX_CHARS)


class ToolInvocation(_Model):
    """An executable-skill tool call: the script gets ``--run-json ARGUMENTS`` (and
    ``--tool NAME`` when it offers several tools)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    shared_script: bool = False


class RunScriptInput(_Model):
    run_id: str
    execution_id: str = Field(description="Idempotency key, stable across retries.")
    skill: str
    version: str
    script: str
    args: tuple[str, ...] = ()
    inputs: tuple[ArtifactRef, ...] = ()
    seq: int
    tool_call_id: str
    tool_name: str = RUN_SKILL_SCRIPT
    run_json: ToolInvocation | None = None


class ScriptOutcome(ToolOutcome):
    status: ExecutionStatus
    exit_code: int | None = None
    duration_ms: int = 0
    outputs: tuple[ArtifactRef, ...] = ()
    ran: bool = Field(
        default=True,
        description="False: refused before any sandbox was claimed (the manager found no such "
        "script in the package, or another mistake in the request); the job's script budget "
        "does not count it.",
    )


class SearchOutcome(ToolOutcome):
    """Search hits: their names become attachable."""

    found: tuple[str, ...] = ()


class SearchInput(_Model):
    run_id: str
    query: str
    top_k: int = 5
    allowed: tuple[str, ...] | None = None
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None, description="The skills at the versions the job started with."
    )
    seq: int
    tool_call_id: str


class WaitInput(_Model):
    timeout_seconds: float = Field(default=0.0, ge=0)


class ApprovalRequest(_Model):
    """A script run that needs a person's approval before it runs (``AgentSpec.approvals``)."""

    seq: int
    skill: str
    script: str
    args: tuple[str, ...] = ()
    timeout_seconds: float = Field(gt=0)


class ApprovalDecision(_Model):
    approved: bool
    note: str = Field(default="", max_length=2_000)
    by: str = Field(default="", max_length=200, description="Who decided (free text).")


class Runtime(Protocol):
    """The side effects of an agent job. Implemented by the direct and the Temporal engine."""

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult: ...

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn: ...

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded: ...

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome: ...

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome: ...

    async def search_skills(self, request: SearchInput) -> SearchOutcome: ...

    async def record(self, writes: tuple[TranscriptWrite, ...]) -> None:
        """Store loop-made messages that no model call will carry (the end of a job)."""
        ...

    def now(self) -> float:
        """Seconds since the epoch (workflow time under Temporal)."""
        ...

    async def wait_for_input(self, request: WaitInput) -> list[str]:
        """User messages sent to the job, waiting up to ``timeout_seconds`` for the first."""
        ...

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Wait for a person to approve or deny a script run (denied after the timeout)."""
        ...
