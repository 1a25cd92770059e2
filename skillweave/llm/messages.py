"""Provider-neutral messages, tool calls and usage: what the agent and every provider share.

The agent loop speaks only these types; each provider translates them to and from its wire
format. They live here, below ``skillweave.agent`` (which re-exports them), because providers
must import them and imports only point down. Every model is a frozen pydantic model so it
crosses process and activity boundaries by the same JSON serialization everywhere.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "RAW_ARGUMENTS_KEY",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Role",
    "StopReason",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

RAW_ARGUMENTS_KEY: Final = "_raw"
"""Key under which a provider keeps tool-call arguments that are not a JSON object, verbatim
(``{"_raw": text}``), so the agent can tell the model its arguments were unreadable instead of
failing the run."""

Role = Literal["user", "assistant", "tool"]
StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ToolCall(_Frozen):
    """One call the model asks for: ``id`` pairs it with its result."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolSpec(_Frozen):
    """A tool offered to the model: its name, what it does and a JSON Schema of its arguments."""

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str
    input_schema: dict[str, Any]


class Message(_Frozen):
    """One message of a conversation.

    - ``user``: ``text`` from the user (the task, a follow-up).
    - ``assistant``: the model's ``text`` (may be empty) and its ``tool_calls``.
    - ``tool``: the result of the call ``tool_call_id`` (named ``tool_name``) as ``text``;
      ``is_error`` marks a refusal or failure the model should act on.
    """

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False


class Usage(_Frozen):
    """Tokens a model call consumed, as the provider reported them."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class ModelRequest(_Frozen):
    """One model call: the system prompt, the conversation and the tools on offer."""

    model: str = Field(min_length=1)
    system: str = ""
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int = Field(default=4096, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)


class ModelResponse(_Frozen):
    """The model's answer: one assistant message, why it stopped, and the usage of the call."""

    message: Message
    stop_reason: StopReason = "end_turn"
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
