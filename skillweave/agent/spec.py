"""Agent specs: who the agent is and what it may do, loadable from YAML.

An agent spec names the agent, gives its instruction (the start of the system prompt), the
model to use (``provider:name``, else the settings'), the skills it may use (a parent allows its
whole tree; ``web.*`` every skill of the namespace ``web``; ``name@VERSION`` that skill at a
stored version, 8 or more hex digits of it, resolved to the full version where the run starts;
unset means every enabled skill), how the catalog is shown, optional pre-inference preload, the
run's limits, and the registry skills it may ask to have installed (``acquisition``)::

    name: data-analyst
    instruction: You analyse the user's data files with the skills available to you.
    model: openai:gpt-4o-mini          # optional
    skills: [data-toolkit, unit-converter@3f2a9c1e, web.*]   # name@VERSION pins a version
    catalog: {mode: enabled, top_k: 8}
    preload: {enabled: false}          # min_score: the selection strategy's default
    limits: {max_turns: 40, max_tokens: 2000000, max_script_runs: 30}
    follow_up_seconds: 0               # after an answer, wait this long for a follow-up
    approvals: {skills: [deploy-tool], timeout_seconds: 3600}   # runs that need a person's OK
    authoring: {enabled: false, max_drafts: 5}   # create_skill / publish_skill
    acquisition: {enabled: true, registries: [acme], max_installs: 3, offer: on_miss}
                                       # find_skills / request_skill (registry installs)

Parsing is pure (the text in, a model out); reading the file is the caller's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.agent.state import Budgets
from skillweave.config import CatalogMode
from skillweave.errors import AgentSpecError

__all__ = [
    "DEFAULT_INSTRUCTION",
    "AcquisitionOptions",
    "AgentSpec",
    "ApprovalOptions",
    "AuthoringOptions",
    "CatalogOptions",
    "PinnedSkill",
    "PreloadOptions",
    "parse_agent_spec",
]

DEFAULT_INSTRUCTION: Final = (
    "You are a capable assistant that finishes the user's task with the skills listed below. "
    "Activate a skill to read its instructions before you use it; read its reference files "
    "and run its scripts when they help. Files reach scripts as artifacts: pass the artifact "
    "keys shown in earlier results. When the task is done, answer the user plainly and say "
    "which output artifacts hold the results."
)


class CatalogOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CatalogMode | None = Field(default=None, description="None: the settings' mode.")
    top_k: int | None = Field(default=None, ge=1, le=200)


class PreloadOptions(BaseModel):
    """Pre-inference preload: activate the best-matching skill before the first model call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    min_score: float | None = Field(
        default=None,
        ge=0,
        description="Preload only a match scoring above this, on the selection strategy's "
        "scale; None: the strategy's default, chosen on the selection benchmark.",
    )


class ApprovalOptions(BaseModel):
    """Script runs that wait for a person's approval (human in the loop)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    skills: tuple[str, ...] = Field(
        default=(),
        description="Skills whose script runs need approval; '*' for every skill. A run a "
        "skill's own allowed-tools lists needs none.",
    )
    timeout_seconds: float = Field(
        default=3_600.0, gt=0, le=7 * 86_400, description="Denied when nobody decides by then."
    )

    def required(self, skill: str) -> bool:
        return "*" in self.skills or skill in self.skills


class AuthoringOptions(BaseModel):
    """Skills the agent writes itself (``create_skill``, ``publish_skill``): off unless the
    spec turns it on. A draft is validated strictly, scanned and test-run with the examples
    the model gives, then usable by its own run at once; other runs see it once a person
    approves its publication."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    max_drafts: int = Field(default=5, ge=1, le=50, description="Drafts one run may create.")


class AcquisitionOptions(BaseModel):
    """Skills the agent asks to have installed from the registries (``find_skills``,
    ``request_skill``): off unless the spec turns it on. A request is checked (the entry's
    version, its scan, its signature) before a person is asked; approved, the skill is
    installed for everyone and this run may activate it at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    registries: tuple[str, ...] | None = Field(
        default=None,
        description="The labels of the SKILLS__REGISTRIES entries to search; None: all of them.",
    )
    max_installs: int = Field(default=3, ge=1, le=20, description="Installs one run may make.")
    offer: Literal["on_miss", "always"] = Field(
        default="on_miss",
        description="on_miss: find_skills once the run looked in its own library first (after "
        "a search_skills call, or at once when the run has no search_skills: its whole catalog "
        "is in view); always: from the first turn.",
    )

    def registries_problem(self, configured: Sequence[str]) -> str | None:
        """Why this acquisition cannot search where it says, given the labels of the
        ``SKILLS__REGISTRIES`` entries `configured` (None: it can, or it is off). Every door
        that takes a spec (``skillweave run``, the API's agents) refuses with this line."""
        if not self.enabled:
            return None
        if not configured:
            return (
                "acquisition: SKILLS__REGISTRIES lists no registry here; set it, or turn "
                "acquisition off"
            )
        unknown = [label for label in self.registries or () if label not in configured]
        if unknown:
            return (
                f"acquisition.registries: no registry labelled {', '.join(map(repr, unknown))} "
                f"in SKILLS__REGISTRIES; configured: {', '.join(map(repr, configured))}"
            )
        return None


class PinnedSkill(BaseModel):
    """A skill at the version a run was started with (see ``AgentSpec.pinned``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the skill's package.")
    parent: str | None = Field(default=None, description="The enclosing skill in a tree.")


class AgentSpec(BaseModel):
    """One agent: instruction, model, allowed skills, catalog, preload, limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="default", pattern=r"^[A-Za-z0-9._-]{1,64}$")
    description: str = ""
    instruction: str = DEFAULT_INSTRUCTION
    model: str | None = Field(default=None, description="provider:name; None: settings.")
    skills: tuple[str, ...] | None = None
    catalog: CatalogOptions = Field(default_factory=CatalogOptions)
    preload: PreloadOptions = Field(default_factory=PreloadOptions)
    limits: Budgets = Field(default_factory=Budgets)
    follow_up_seconds: float = Field(
        default=0.0, ge=0, le=86_400, description="After an answer, wait this long for more."
    )
    approvals: ApprovalOptions = Field(default_factory=ApprovalOptions)
    authoring: AuthoringOptions = Field(default_factory=AuthoringOptions)
    acquisition: AcquisitionOptions = Field(default_factory=AcquisitionOptions)
    pinned: tuple[PinnedSkill, ...] | None = Field(
        default=None,
        description="Set when a run starts from a stored agent (the API): the run sees exactly "
        "these skills at these versions, whatever the library holds later.",
    )


def parse_agent_spec(text: str, *, source: str = "<agent spec>") -> AgentSpec:
    """Parse an agent spec from YAML text.

    Raises:
        AgentSpecError: not YAML, not a mapping, or a field is invalid (named in the message).
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise AgentSpecError(source, f"not valid YAML{where}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AgentSpecError(source, "an agent spec is a YAML mapping")
    # "agent:" as a top-level wrapper is accepted, as the seeds write it.
    if set(data) == {"agent"} and isinstance(data["agent"], dict):
        data = data["agent"]
    try:
        return AgentSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise AgentSpecError(source, f"{field}: {first['msg']}") from None
