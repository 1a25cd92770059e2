"""The agent: a pure, deterministic loop over `AgentState` (DESIGN §5).

State, messages, the tools the model sees, the loop, compaction, agent specs, the side
effects (one descriptor each) and the ``Runtime`` port through which they go. Nothing here does
I/O, reads a clock or draws a random number, so the same code runs in-process (the direct
engine) and inside a Temporal workflow. Messages are ``skillweave.llm``'s provider-neutral
types, re-exported.
"""

from skillweave.agent.compaction import compact
from skillweave.agent.effect_models import (
    CatalogInput,
    CatalogResult,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    ReadResourceInput,
    RunScriptInput,
    ScriptOutcome,
    SearchInput,
    SearchOutcome,
    SkillLoaded,
    ToolInvocation,
    ToolOutcome,
    TranscriptView,
    TranscriptWrite,
    WaitInput,
)
from skillweave.agent.effects import EFFECTS, Runtime, SideEffect
from skillweave.agent.events import AgentEvent, EventKind
from skillweave.agent.loop import AgentLoop, new_state, system_prompt
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
    JobStatus,
    SkillTool,
    TranscriptEntry,
)
from skillweave.agent.tools import INPUT_ARTIFACTS, skill_tool_name, tool_specs
from skillweave.llm.messages import Message, ToolCall, ToolSpec, Usage

__all__ = [
    "EFFECTS",
    "INPUT_ARTIFACTS",
    "ActiveSkill",
    "AgentEvent",
    "AgentLoop",
    "AgentSpec",
    "AgentState",
    "Budgets",
    "CatalogInput",
    "CatalogOptions",
    "CatalogResult",
    "EventKind",
    "InvokeModelInput",
    "JobStatus",
    "LoadSkillInput",
    "Message",
    "ModelTurn",
    "PinnedSkill",
    "PreloadOptions",
    "ReadResourceInput",
    "RunScriptInput",
    "Runtime",
    "ScriptOutcome",
    "SearchInput",
    "SearchOutcome",
    "SideEffect",
    "SkillLoaded",
    "SkillTool",
    "ToolCall",
    "ToolInvocation",
    "ToolOutcome",
    "ToolSpec",
    "TranscriptEntry",
    "TranscriptView",
    "TranscriptWrite",
    "Usage",
    "WaitInput",
    "compact",
    "new_state",
    "parse_agent_spec",
    "skill_tool_name",
    "system_prompt",
    "tool_specs",
]
