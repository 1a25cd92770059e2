"""The models that cross the `Runtime` port: one input and one result model per side effect.

Every side effect of the agent loop is one call through the port
(:class:`skillweave.agent.effects.Runtime`), declared once in :mod:`skillweave.agent.effects`
with the models of this module, so that the Temporal engine can make each call an activity
(``invoke_model``, ``load_skill``…) and the direct engine can call the same services in-process
through the same JSON round-trip. Results are small: a tool's full output is written by the
runtime to the transcript in the store (its record `seq`) and comes back as its
size and a one-line summary, so the loop's state grows with turns, not with output.

Errors: a mistake the model can fix is *not* an exception here; it comes back as a result with
``is_error`` set (an unknown resource path, a script that is not in the skill). Exceptions are
infrastructure failures (``ModelError``, ``SandboxError``, ``StorageError``…) and end the run
(the Temporal engine retries them first, by the classification in ``skillweave.llm.retry``).
"""

from __future__ import annotations

from typing import Any, Final, Literal

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
    "ActivityTimeouts",
    "ApprovalDecision",
    "ApprovalRequest",
    "CatalogInput",
    "CatalogResult",
    "CreateSkillInput",
    "CreateSkillOutcome",
    "DraftFile",
    "FindSkillsInput",
    "FindSkillsOutcome",
    "InstallSkillInput",
    "InstallSkillOutcome",
    "InvokeModelInput",
    "LimitsInput",
    "LoadSkillInput",
    "ModelTurn",
    "PublishSkillInput",
    "PublishSkillOutcome",
    "ReadResourceInput",
    "RecordInput",
    "RegistryOrigin",
    "RegistrySkill",
    "RunScriptInput",
    "ScriptOutcome",
    "SearchInput",
    "SearchOutcome",
    "SkillExample",
    "SkillLoaded",
    "SkillRequestChecked",
    "SkillRequestInput",
    "ToolInvocation",
    "ToolOutcome",
    "TranscriptView",
    "TranscriptWrite",
    "WaitInput",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class CatalogInput(_Model):
    """What the run may see of the skill library (from the agent spec)."""

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
        "the strategy's default. Set alone (by runs started before `preload`), it means preload.",
    )
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None, description="The skills at the versions the run started with."
    )
    store_id: str | None = Field(
        default=None, description="The store the run was started against; the runtime's must be it."
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
        description="Qualified names (web.scraper) of the run's namespaced skills, to the "
        "names the catalog shows them by.",
    )


class TranscriptWrite(_Model):
    """A message the loop made itself (the task, a refusal, a note) to store at `seq`."""

    seq: int
    message: Message


class TranscriptView(_Model):
    """Which stored messages a model call sees: ``0..upto-1``, where every elidable output
    (a compactable kind whose summary is shorter than its text) below ``elide_before`` is
    replaced by its summary. Two numbers, however long the run: the call's input stays flat."""

    upto: int = Field(ge=0)
    elide_before: int = Field(default=0, ge=0)


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
        description="The run's model: a profile or provider:name, resolved where it runs.",
    )
    reads: tuple[ReadResourceInput, ...] = Field(
        default=(),
        description="Resource reads the loop answered since the last call, done first (each "
        "stored at its seq, so this call's view holds them); their outcomes come back in "
        "ModelTurn.reads.",
    )


class ModelTurn(_Model):
    message: Message
    stop_reason: StopReason
    usage: Usage
    model: str = ""
    reads: tuple[ToolOutcome, ...] = Field(
        default=(), description="The outcomes of the request's reads, in its order."
    )


class LoadSkillInput(_Model):
    run_id: str
    skill: str
    draft: str | None = Field(
        default=None, description="The version of a skill this run wrote (create_skill)."
    )
    seq: int = Field(description="Where the activation payload is stored.")
    tool_call_id: str
    allowed: tuple[str, ...] | None = None
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None, description="The skills at the versions the run started with."
    )
    taken_tools: tuple[str, ...] = Field(
        default=(),
        description="Tool names the run's active skills registered: a new tool keeps its own "
        "name only while no other tool has it.",
    )
    acquired: str | None = Field(
        default=None,
        description="The version of a skill this run had installed (request_skill): loaded "
        "at it from the store, whatever the allowlist or pins say.",
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
    refused: str | None = Field(
        default=None,
        description="Why it was not activated (its signature is refused by skills.trust): the "
        "runtime stored this as an error where the instructions would have gone.",
    )
    read_chars: int | None = Field(
        default=None,
        ge=0,
        description="The most characters a read of its files answers (its largest file, up to "
        "the read limit): what the loop counts for a read it defers to the next model call. "
        "None: not known (a read is then done at once).",
    )


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
        "script in the package, or another mistake in the request); the run's script budget "
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
        default=None, description="The skills at the versions the run started with."
    )
    seq: int
    tool_call_id: str


class WaitInput(_Model):
    timeout_seconds: float = Field(default=0.0, ge=0)


class DraftFile(_Model):
    """A file of a skill an agent writes: its path in the skill folder and its text."""

    path: str = Field(min_length=1, max_length=200)
    content: str = Field(max_length=256 * 1024)


class SkillExample(_Model):
    """A test run of a draft's script: what it is given, and what its output must contain."""

    script: str = Field(min_length=1, max_length=200)
    args: tuple[str, ...] = Field(default=(), max_length=32)
    expect: str = Field(default="", max_length=2_000, description="A substring of stdout.")


class CreateSkillInput(_Model):
    """``create_skill``: a skill the agent wrote, to validate, scan, test and keep as a draft
    of its run."""

    run_id: str
    seq: int = Field(description="Where the result is stored; the examples' runs key on it.")
    tool_call_id: str
    execution_id: str = Field(description="The examples' runs: `{execution_id}/example-{n}`.")
    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1_024)
    instructions: str = Field(min_length=1, max_length=64 * 1024)
    files: tuple[DraftFile, ...] = Field(default=(), max_length=50)
    examples: tuple[SkillExample, ...] = Field(default=(), max_length=8)
    allowed: tuple[str, ...] | None = None
    pinned: tuple[PinnedSkill, ...] | None = None
    replaces: str | None = Field(
        default=None, description="The run's earlier draft of that name, which this replaces."
    )


class CreateSkillOutcome(ToolOutcome):
    """What became of a ``create_skill``: the draft's version when it was kept, its scan in
    a line (what an approver of its publication reads first), and the example runs made."""

    name: str
    version: str | None = None
    report: str = Field(default="", max_length=1_000)
    runs: int = Field(default=0, ge=0, description="Example runs made in sandboxes.")
    evals: str = Field(
        default="", max_length=500, description="Its evals in a line (skillweave.evals.summary)."
    )


class PublishSkillInput(_Model):
    """``publish_skill``, once a person approved it: the draft becomes an uploaded skill."""

    run_id: str
    seq: int
    tool_call_id: str
    name: str
    version: str = Field(pattern=r"^[0-9a-f]{64}$")
    approved_by: str = ""


class PublishSkillOutcome(ToolOutcome):
    published: bool = False


_VERSION: Final = r"^[0-9a-f]{64}$"


class RegistryOrigin(_Model):
    """Where a registry skill comes from: the registry that lists it, and the source, ref,
    commit and folder its entry names (what an install reads, and records as its origin)."""

    registry: str = Field(min_length=1, max_length=2_048, description="The registry's label.")
    source: str = Field(min_length=1, max_length=4_096, description="A git URL or a path.")
    kind: Literal["git", "zip", "folder"] = "git"
    ref: str | None = Field(default=None, max_length=200)
    commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
    path: str | None = Field(default=None, max_length=1_024)

    def describe(self) -> str:
        """``registry (source@commit path)`` in a line."""
        at = self.commit[:12] if self.commit else self.ref
        where = self.source + (f"@{at}" if at else "") + (f" {self.path}" if self.path else "")
        return f"{self.registry} ({where})"


class RegistrySkill(_Model):
    """A registry skill ``find_skills`` found: its name, registry and version."""

    name: str
    registry: str
    version: str = Field(pattern=_VERSION)


class FindSkillsInput(_Model):
    """``find_skills``: the registries searched for a query."""

    run_id: str
    seq: int
    tool_call_id: str
    query: str = Field(min_length=1, max_length=1_000)
    top_k: int = Field(default=5, ge=1, le=200)
    registries: tuple[str, ...] | None = Field(
        default=None, description="The registry labels the agent may use; None: all."
    )


class FindSkillsOutcome(ToolOutcome):
    """What ``find_skills`` found (stored as its tool result): ``request_skill`` may name them."""

    found: tuple[RegistrySkill, ...] = ()


class SkillRequestInput(_Model):
    """``request_skill``, before anyone is asked: find the entry, fetch and stage the skill,
    check its version, scan it and check its signature."""

    run_id: str
    seq: int = Field(description="Where a refusal is stored (else the install's result is).")
    tool_call_id: str
    name: str = Field(min_length=1, max_length=64)
    registry: str | None = Field(default=None, description="The registry find_skills named.")
    registries: tuple[str, ...] | None = None


class SkillRequestChecked(ToolOutcome):
    """A checked request: `ready` (nothing stored yet: a person is asked next) with what they
    read, or refused (`is_error`, the refusal stored at `seq` as the tool result)."""

    ready: bool = False
    name: str
    version: str = ""
    origin: RegistryOrigin | None = None
    scan: str = Field(default="", max_length=1_000, description="The scan, in a line.")
    decision: str = Field(default="", description="What skills.scan.policy makes of it.")
    signature: str = Field(default="", max_length=500, description="Its signature, in words.")


class InstallSkillInput(_Model):
    """``request_skill``, once a person approved: install exactly the version they saw."""

    run_id: str
    seq: int
    tool_call_id: str
    name: str = Field(min_length=1, max_length=64)
    version: str = Field(pattern=_VERSION)
    origin: RegistryOrigin
    approved_by: str = Field(default="", max_length=200)


class InstallSkillOutcome(ToolOutcome):
    """What became of an approved install: the version installed, or (``is_error``) why the
    library refused it, stored as the ``request_skill`` call's result."""

    installed: bool = False
    version: str = ""


class ApprovalRequest(_Model):
    """Something that waits for a person's approval: a script run (``AgentSpec.approvals``),
    the publication of a skill the agent wrote (``publish_skill``), with its scan report, or
    the install of a registry skill the agent asked for (``request_skill``), with its origin,
    scan and signature."""

    seq: int
    skill: str
    script: str
    args: tuple[str, ...] = ()
    timeout_seconds: float = Field(gt=0)
    action: Literal["run", "publish", "install"] = "run"
    version: str = Field(default="", description="The version to publish or install.")
    report: str = Field(
        default="", max_length=4_000, description="What an approver reads first: the scan."
    )
    origin: RegistryOrigin | None = Field(
        default=None, description="install: the registry and source it comes from."
    )
    decision: str = Field(default="", description="install: what the scan policy decided.")
    signature: str = Field(default="", max_length=500, description="install: its signature.")
    evals: str = Field(
        default="", max_length=500, description="publish: its evals in a line, when it has any."
    )

    def describe(self) -> str:
        """What is asked, in a line (the Temporal UI, ``runs show``)."""
        if self.action == "publish":
            scan = f" (scan: {self.report})" if self.report else ""
            evals = f"; {self.evals}" if self.evals else ""
            return f"publish the skill {self.skill} version {self.version[:12]}{scan}{evals}"
        if self.action == "install":
            origin = f" from {self.origin.describe()}" if self.origin is not None else ""
            scan = f"; scan: {self.report}" if self.report else ""
            decision = f" ({self.decision})" if self.decision else ""
            signature = f"; signature: {self.signature}" if self.signature else ""
            return (
                f"install the skill {self.skill} version {self.version[:12]}{origin}"
                f"{scan}{decision}{signature}"
            )
        return f"{self.skill}/{self.script}"


class ApprovalDecision(_Model):
    approved: bool
    note: str = Field(default="", max_length=2_000)
    by: str = Field(default="", max_length=200, description="Who decided (free text).")


class RecordInput(_Model):
    """``record_transcript``: loop-made messages no model call carried (the end of a run)."""

    run_id: str
    writes: tuple[TranscriptWrite, ...]


class LimitsInput(_Model):
    """``run_limits``: the run asking for its worker's limits (for the worker's log lines)."""

    run_id: str


class ActivityTimeouts(_Model):
    """The limits a run's side effects run under: start-to-close timeouts, the heartbeat
    timeout and the attempts. The worker's (``engines.contract.activity_timeouts`` of its
    ``settings.workflow``), asked for once per run with ``run_limits``."""

    model_seconds: float = Field(default=600.0, gt=0, description="One model call.")
    script_seconds: float = Field(
        default=900.0, gt=0, description="One script run, claim and byte moving included."
    )
    heartbeat_seconds: float = Field(
        default=30.0, gt=0, description="A long activity silent this long is retried."
    )
    short_seconds: float = Field(default=120.0, gt=0, description="Every other activity.")
    max_attempts: int = Field(default=8, ge=1, description="Tries per activity call.")
    model_calls_read: bool = Field(
        default=False,
        description="The worker's model calls do the resource reads a run defers to them, so "
        "its reads ride with them. An earlier worker's answer lacks it: that run reads with a "
        "call of its own, as its history did.",
    )
