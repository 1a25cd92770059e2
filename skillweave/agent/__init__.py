"""The agent: a pure, deterministic loop over `AgentState` (DESIGN §5).

State, messages, the tools the model sees, the loop, compaction, agent specs, the side
effects (one descriptor each) and the ``Runtime`` port through which they go. Nothing here does
I/O, reads a clock or draws a random number, so the same code runs in-process (the direct
engine) and inside a Temporal workflow. Messages are ``skillweave.llm``'s provider-neutral
types, re-exported.
"""

from skillweave.agent.compaction import compact
from skillweave.agent.effect_models import (
    SUMMARY_MAX_CHARS,
    ActivityTimeouts,
    ApprovalDecision,
    ApprovalRequest,
    CatalogInput,
    CatalogResult,
    CreateSkillInput,
    CreateSkillOutcome,
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
    SkillExample,
    SkillLoaded,
    ToolInvocation,
    ToolOutcome,
    TranscriptView,
    TranscriptWrite,
    WaitInput,
)
from skillweave.agent.effects import (
    EFFECTS,
    RUN_SKILL_SCRIPT,
    Runtime,
    SideEffect,
    check_implemented,
)
from skillweave.agent.events import AgentEvent, EventKind
from skillweave.agent.idempotency import execution_key, run_id_of
from skillweave.agent.loop import AgentLoop, new_state, system_prompt
from skillweave.agent.rendering import Line, Part, Tone, event_line, generic_line, one_line
from skillweave.agent.spec import (
    AgentSpec,
    CatalogOptions,
    PinnedSkill,
    PreloadOptions,
    parse_agent_spec,
)
from skillweave.agent.state import (
    ActiveSkill,
    AgentState,
    Budgets,
    RunStatus,
    SkillTool,
    TranscriptEntry,
)
from skillweave.agent.tools import INPUT_ARTIFACTS, skill_tool_name, tool_specs
from skillweave.llm.messages import Message, ToolCall, ToolSpec, Usage

__all__ = [
    "EFFECTS",
    "INPUT_ARTIFACTS",
    "RUN_SKILL_SCRIPT",
    "SUMMARY_MAX_CHARS",
    "ActiveSkill",
    "ActivityTimeouts",
    "AgentEvent",
    "AgentLoop",
    "AgentSpec",
    "AgentState",
    "ApprovalDecision",
    "ApprovalRequest",
    "Budgets",
    "CatalogInput",
    "CatalogOptions",
    "CatalogResult",
    "CreateSkillInput",
    "CreateSkillOutcome",
    "EventKind",
    "InvokeModelInput",
    "LimitsInput",
    "Line",
    "LoadSkillInput",
    "Message",
    "ModelTurn",
    "Part",
    "PinnedSkill",
    "PreloadOptions",
    "PublishSkillInput",
    "PublishSkillOutcome",
    "ReadResourceInput",
    "RecordInput",
    "RunScriptInput",
    "RunStatus",
    "Runtime",
    "ScriptOutcome",
    "SearchInput",
    "SearchOutcome",
    "SideEffect",
    "SkillExample",
    "SkillLoaded",
    "SkillTool",
    "Tone",
    "ToolCall",
    "ToolInvocation",
    "ToolOutcome",
    "ToolSpec",
    "TranscriptEntry",
    "TranscriptView",
    "TranscriptWrite",
    "Usage",
    "WaitInput",
    "check_implemented",
    "compact",
    "event_line",
    "execution_key",
    "generic_line",
    "new_state",
    "one_line",
    "parse_agent_spec",
    "run_id_of",
    "skill_tool_name",
    "system_prompt",
    "tool_specs",
]
