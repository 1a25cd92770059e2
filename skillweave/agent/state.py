"""`AgentState`: everything a run is, small enough to live in a workflow's history.

The state holds *references*, not content: each transcript entry is a pointer to a message
stored in the artifact store (record `seq` of the run's transcript) with its size, its kind and
the short summary the model sees once the entry is compacted. It never holds what the scripts
printed or the files the agent read.

Nor does it grow with the number of turns: the front of ``transcript`` is *folded* into a few
numbers (``folded``, ``folded_chars``, and the outputs among them not elided yet), and the
compaction state is one boundary, ``elide_before``: every compactable output below it whose
summary is shorter than its text is elided (compaction elides oldest first, so that set is
always such a prefix). A model call rebuilds its view from the store with that rule, so a run
of any length carries a window of at most :data:`FOLD_AT` entries.

The loop (``skillweave.agent.loop``) is the only writer; engines read it for status, and it
serializes to JSON with the same pydantic round-trip in both engines.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.llm.messages import Role, Usage
from skillweave.skills.allowed_tools import AllowedTools
from skillweave.storage.base import ArtifactRef

__all__ = [
    "COMPACTABLE",
    "FOLD_AT",
    "ActiveSkill",
    "AgentState",
    "Budgets",
    "DraftSkill",
    "EntryKind",
    "FoundSkill",
    "RunStatus",
    "SkillTool",
    "TranscriptEntry",
    "elidable",
]

RunStatus = Literal["running", "completed", "failed", "cancelled", "budget_exhausted"]
"""``running`` until the loop ends; then why it ended."""

EntryKind = Literal["task", "user", "assistant", "skill", "resource", "script", "tool", "note"]
"""``skill`` entries are activation payloads: never compacted. ``resource``, ``script`` and
``tool`` entries are tool outputs: compacted oldest first. ``note`` is a short loop reply."""


class Budgets(BaseModel):
    """Limits that end a run; each is checked where it is spent."""

    model_config = ConfigDict(frozen=True)

    max_turns: int = Field(default=40, ge=1, le=100_000, description="Model calls.")
    max_tokens: int = Field(
        default=2_000_000, ge=1, description="Input plus output tokens over the run."
    )
    max_script_runs: int = Field(default=30, ge=0, le=100_000)
    transcript_chars: int = Field(
        default=120_000,
        ge=1_000,
        description="Compaction threshold: beyond it older tool outputs are elided to refs.",
    )
    keep_recent_outputs: int = Field(
        default=2, ge=0, description="The latest tool outputs compaction never elides."
    )
    max_output_tokens: int = Field(default=4096, ge=1, description="Per model call.")


class SkillTool(BaseModel):
    """A tool an executable skill registered at activation (from its ``--help-json``)."""

    model_config = ConfigDict(frozen=True)

    name: str  # as offered to the model: ``<skill>__<tool>``
    tool: str  # as the script knows it
    script: str  # package path, e.g. ``scripts/convert.py``
    description: str
    input_schema: dict[str, Any]
    shared_script: bool = Field(
        default=False, description="The script offers several tools: it gets --tool NAME too."
    )


class ActiveSkill(BaseModel):
    """An activated skill, pinned to the version it had at activation."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    children: tuple[str, ...] = ()
    tools: tuple[SkillTool, ...] = ()
    allowed: AllowedTools | None = Field(
        default=None,
        description="Its allowed-tools, read onto skillweave's tools; None: it restricts nothing.",
    )
    read_chars: int | None = Field(
        default=None, description="The most characters a read of its files answers."
    )


class DraftSkill(BaseModel):
    """A skill the run wrote (``create_skill``): its version, its scan and its evals (when
    it has any), each in a line."""

    model_config = ConfigDict(frozen=True)

    version: str
    report: str = ""
    evals: str = ""


class FoundSkill(BaseModel):
    """A registry skill ``find_skills`` found: which registry lists it, at which version."""

    model_config = ConfigDict(frozen=True)

    registry: str
    version: str


class TranscriptEntry(BaseModel):
    """One message of the transcript: record `seq` of the run's transcript in the store."""

    model_config = ConfigDict(frozen=True)

    seq: int = Field(ge=0)
    role: Role
    kind: EntryKind
    chars: int = Field(ge=0, description="Length of the message's text.")
    summary: str = Field(default="", description="What the model sees once it is elided.")
    elided: bool = False
    deferred: bool = Field(
        default=False,
        description="A resource read the next model call does: until it answers, chars is the "
        "most the read can answer, and neither compaction nor folding passes the entry.",
    )


FOLD_AT: Final = 64
"""Fold the transcript window once it holds more entries than this."""

COMPACTABLE: Final = frozenset({"resource", "script", "tool"})
"""Entry kinds compaction may elide (tool outputs)."""


def elidable(entry: TranscriptEntry) -> bool:
    """Whether compaction would elide `entry`: a tool output whose summary is shorter."""
    return entry.kind in COMPACTABLE and len(entry.summary) < entry.chars


class AgentState(BaseModel):
    """One agent run. Mutable: the loop updates it in place, turn by turn."""

    run_id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._-]+$")
    agent: str = "default"
    model: str | None = Field(
        default=None,
        description="The model its agent names (a profile or provider:name); None: the default.",
    )
    task: str
    status: RunStatus = "running"
    reason: str | None = Field(default=None, description="Why the run ended, in one line.")
    turn: int = Field(default=0, ge=0, description="Model calls made so far.")
    script_runs: int = Field(default=0, ge=0)
    usage: Usage = Field(default_factory=Usage)
    budgets: Budgets = Field(default_factory=Budgets)
    system: str = Field(default="", description="The system prompt, catalog included.")
    roots: tuple[str, ...] = Field(default=(), description="Skills attachable from the start.")
    search_enabled: bool = False
    aliases: dict[str, str] = Field(
        default_factory=dict, description="Other names skills answer to (web.scraper)."
    )
    active: dict[str, ActiveSkill] = Field(default_factory=dict)
    authoring: bool = Field(default=False, description="create_skill is offered.")
    store_id: str | None = Field(
        default=None, description="The id of the store the run was started against."
    )
    drafts: dict[str, DraftSkill] = Field(
        default_factory=dict, description="Skills this run wrote (create_skill), by name."
    )
    acquisition: Literal["off", "on_miss", "always"] = Field(
        default="off", description="When find_skills is offered (the agent's acquisition)."
    )
    library_searched: bool = Field(
        default=False,
        description="The run looked in its own library first (a search_skills call, or it has "
        "none: its whole catalog is in view): find_skills is offered under acquisition on_miss.",
    )
    found: dict[str, FoundSkill] = Field(
        default_factory=dict, description="Registry skills find_skills found, by name."
    )
    acquired: dict[str, str] = Field(
        default_factory=dict,
        description="Skills this run had installed (request_skill), by name: the version it "
        "activates, whatever the agent's allowlist or pins say.",
    )
    transcript: list[TranscriptEntry] = Field(
        default_factory=list, description="The window of entries from seq ``folded`` on."
    )
    folded: int = Field(default=0, ge=0, description="Entries folded off the window's front.")
    folded_chars: int = Field(default=0, ge=0, description="Their visible characters.")
    elide_before: int = Field(
        default=0, ge=0, description="Elidable outputs below this seq are elided."
    )
    pending_outputs: int = Field(
        default=0, ge=0, description="Folded outputs not elided yet (compaction's first pick)."
    )
    pending_saving: int = Field(default=0, ge=0, description="Characters eliding them saves.")
    pending_last_seq: int = Field(default=-1, description="The last of them.")
    inputs: list[ArtifactRef] = Field(
        default_factory=list, description="Files given with the task."
    )
    artifacts: dict[str, ArtifactRef] = Field(
        default_factory=dict, description="Every artifact the run knows, by key."
    )
    outputs: list[ArtifactRef] = Field(
        default_factory=list, description="Artifacts scripts produced, in order."
    )
    answer: str | None = None
    pending_messages: list[str] = Field(default_factory=list)
    unusable_replies: int = Field(
        default=0,
        ge=0,
        description="Model replies in a row that were no answer (empty, or cut off at the "
        "output limit) and were asked again.",
    )

    @property
    def next_seq(self) -> int:
        return self.folded + len(self.transcript)

    @property
    def finished(self) -> bool:
        return self.status != "running"

    def visible_chars(self) -> int:
        """Characters the next model call will carry (elided entries count as their summary)."""
        return self.folded_chars + sum(
            len(e.summary) if e.elided else e.chars for e in self.transcript
        )

    def fold(self) -> int:
        """Fold the front of the window into counters; how many entries were folded.

        Runs once the window passes :data:`FOLD_AT` entries and folds it down to half of
        that, keeping the latest ``keep_recent_outputs`` outputs in the window (compaction
        never elides those). A folded output that is not elided yet joins the *pending* block:
        compaction elides that whole block first, before any output of the window (it is the
        oldest), so "every elidable output below ``elide_before``" stays the elided set.
        """
        window = self.transcript
        if len(window) <= FOLD_AT:
            return 0
        count = len(window) - FOLD_AT // 2
        # A deferred read's size is not known yet: it stays in the window until it is.
        count = min(count, next((i for i, e in enumerate(window) if e.deferred), count))
        keep = self.budgets.keep_recent_outputs
        if keep:
            outputs = [i for i, e in enumerate(window) if e.kind in COMPACTABLE and not e.elided]
            if outputs:
                count = min(count, outputs[-keep] if len(outputs) >= keep else outputs[0])
        for entry in window[:count]:
            if entry.elided:
                self.folded_chars += len(entry.summary)
                continue
            self.folded_chars += entry.chars
            if elidable(entry):
                self.pending_outputs += 1
                self.pending_saving += entry.chars - len(entry.summary)
                self.pending_last_seq = entry.seq
        del window[:count]
        self.folded += count
        return count

    def elide_pending(self) -> int:
        """Elide the folded outputs still shown in full (all at once); how many there were."""
        count = self.pending_outputs
        if count:
            self.folded_chars -= self.pending_saving
            self.elide_before = max(self.elide_before, self.pending_last_seq + 1)
            self.pending_outputs = self.pending_saving = 0
        return count
