"""The Anthropic provider: ``POST {base_url}/v1/messages`` (Messages API, version 2023-06-01).

Mapping (ours → wire):

- system prompt → the top-level ``system`` string (omitted when empty);
- ``user`` → a ``user`` message with the text;
- ``assistant`` → an ``assistant`` message with a ``text`` block followed by one ``tool_use``
  block ``{"id", "name", "input"}`` per call;
- ``tool`` → a ``tool_result`` block ``{"tool_use_id", "content", "is_error": true}`` (the flag
  only on errors) inside a ``user`` message; an empty result is sent without ``content``, and
  an empty error with a short text, since the API refuses an empty ``is_error`` result;
- tools → ``tools`` as ``{"name", "description", "input_schema"}`` with ``"tool_choice":
  {"type": "auto"}``; neither when no tool is offered.

The API wants user and assistant messages to alternate, so consecutive messages that map to the
same role are merged into one: the results of a turn's tool calls, and a user message that
follows them, become ONE user message, right after the assistant message holding the calls.
Within it the ``tool_result`` blocks come first, as the API requires. The API refuses text
blocks that are empty or only whitespace, so such texts are left out, and a message left with
no content at all is dropped. A message made of a single text block is sent as a plain string.

Answers: the ``text`` blocks are joined into the message text, ``tool_use`` blocks become
:class:`ToolCall` s, other block kinds (thinking…) are ignored; ``stop_sequence`` counts as
``end_turn``. Usage adds the prompt-cache counts to ``input_tokens`` when the API reports them,
so budgets see every input token.
"""

from __future__ import annotations

import json
from typing import Any, Final, assert_never

import httpx
from pydantic import BaseModel, Field, ValidationError

from skillweave.errors import ModelError
from skillweave.llm._http import HttpProvider
from skillweave.llm.messages import (
    RAW_ARGUMENTS_KEY,
    Message,
    ModelRequest,
    ModelResponse,
    StopReason,
    ToolCall,
    Usage,
)

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_ANTHROPIC_BASE_URL", "AnthropicProvider"]

DEFAULT_ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
ANTHROPIC_VERSION: Final = "2023-06-01"
EMPTY_ERROR_TEXT: Final = "(the tool failed without saying why)"
"""Stands in for an empty error result: the API refuses a ``tool_result`` with ``is_error`` and
no content."""

_STOP_REASONS: Final[dict[str, StopReason]] = {
    "tool_use": "tool_use",
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "max_tokens": "max_tokens",
}

_Block = dict[str, Any]


class AnthropicProvider(HttpProvider):
    """A Claude model behind the Anthropic Messages API.

    Args:
        model: the model to ask, e.g. ``claude-sonnet-4-5``.
        base_url: the API root, without ``/v1``.
        api_key: sent as ``x-api-key``; None only for a proxy that adds it.
        timeout: seconds for each phase of the HTTP call (connect, write, read, pool).
        transport: an httpx transport (tests pass ``httpx.MockTransport``).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_ANTHROPIC_BASE_URL,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"anthropic-version": ANTHROPIC_VERSION, "Accept": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(
            name=f"anthropic:{model}",
            model=model,
            url=f"{base_url.rstrip('/')}/v1/messages",
            headers=headers,
            timeout=timeout,
            transport=transport,
        )

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One Messages API call; see the module docstring for the mapping."""
        status, content = await self.post_json(self.request_body(request))
        try:
            answer = _Answer.model_validate_json(content)
        except ValidationError as exc:
            raise self.malformed(status, content, exc) from None
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in enumerate(answer.content):
            if block.type == "text" and block.text:
                texts.append(block.text)
            elif block.type == "tool_use":
                if not block.id or not block.name:
                    problem = f"content.{index}: a tool_use block without id or name"
                    raise self.malformed(status, content, problem)
                calls.append(ToolCall(id=block.id, name=block.name, arguments=_input(block)))
        usage = answer.usage or _Usage()
        return ModelResponse(
            message=Message(role="assistant", text="".join(texts), tool_calls=tuple(calls)),
            stop_reason=_STOP_REASONS.get(answer.stop_reason or "", "other"),
            usage=Usage(
                input_tokens=(usage.input_tokens or 0)
                + (usage.cache_creation_input_tokens or 0)
                + (usage.cache_read_input_tokens or 0),
                output_tokens=usage.output_tokens or 0,
            ),
            model=answer.model or self.model,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for `request` (the model is this provider's, see ``ModelProvider``)."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": request.max_output_tokens}
        if request.system:
            body["system"] = request.system
        body["messages"] = self._wire_messages(request.messages)
        if request.tools:
            body["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                }
                for tool in request.tools
            ]
            body["tool_choice"] = {"type": "auto"}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def _wire_messages(self, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
        merged: list[tuple[str, list[_Block]]] = []
        for message in messages:
            role, blocks = self._blocks(message)
            if not blocks:
                continue
            if merged and merged[-1][0] == role:
                merged[-1][1].extend(blocks)
            else:
                merged.append((role, blocks))
        return [{"role": role, "content": _content(blocks)} for role, blocks in merged]

    def _blocks(self, message: Message) -> tuple[str, list[_Block]]:
        match message.role:
            case "user":
                return "user", _text_blocks(message.text)
            case "assistant":
                blocks = _text_blocks(message.text)
                blocks.extend(
                    {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                    for call in message.tool_calls
                )
                return "assistant", blocks
            case "tool":
                if not message.tool_call_id:
                    raise ModelError(f"{self.name}: a tool result without tool_call_id")
                result: _Block = {"type": "tool_result", "tool_use_id": message.tool_call_id}
                if message.text.strip():
                    result["content"] = message.text
                elif message.is_error:
                    result["content"] = EMPTY_ERROR_TEXT
                if message.is_error:
                    result["is_error"] = True
                return "user", [result]
            case _:
                assert_never(message.role)


def _text_blocks(text: str) -> list[_Block]:
    return [{"type": "text", "text": text}] if text.strip() else []


def _content(blocks: list[_Block]) -> str | list[_Block]:
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    # tool results must open a user message; a user text merged in front of them goes after
    results = [block for block in blocks if block["type"] == "tool_result"]
    others = [block for block in blocks if block["type"] != "tool_result"]
    return results + others


def _input(block: _AnswerBlock) -> dict[str, Any]:
    if block.input is None:
        return {}
    if isinstance(block.input, dict):
        return block.input
    return {RAW_ARGUMENTS_KEY: json.dumps(block.input, ensure_ascii=False)}


# The wire format of an answer: only what is read.


class _AnswerBlock(BaseModel):
    type: str
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: Any = None


class _Usage(BaseModel):
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int | None = Field(default=None, ge=0)


class _Answer(BaseModel):
    content: list[_AnswerBlock]
    stop_reason: str | None = None
    usage: _Usage | None = None
    model: str | None = None
