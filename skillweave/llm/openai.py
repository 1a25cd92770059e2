"""The OpenAI-compatible provider: ``POST {base_url}/chat/completions``.

Speaks the Chat Completions API of OpenAI and of the servers that copy it (vLLM, Ollama,
LM Studio, llama.cpp, LiteLLM…). Without an API key no ``Authorization`` header is sent, which
is what local servers expect. Only the widely supported subset is used: ``messages``, ``tools``
of type ``function`` with ``tool_choice``, ``max_tokens`` and ``temperature``, one choice, no
streaming. (OpenAI's reasoning models want ``max_completion_tokens`` instead of ``max_tokens``;
the compatible servers do not all know that name, so it is not sent.)

Mapping (ours → wire):

- system prompt → the first message, role ``system`` (omitted when empty);
- ``user`` → ``{"role": "user", "content": text}``;
- ``assistant`` → ``{"role": "assistant", "content": text, "tool_calls": [...]}``
  (``tool_calls`` only when there are some), each call as
  ``{"id", "type": "function", "function": {"name", "arguments": "<json>"}}``. ``content`` is
  always a string, ``""`` when the model said nothing: the API allows null beside tool calls,
  but llama-cpp-python's chat templates fail on it with HTTP 500;
- ``tool`` → ``{"role": "tool", "tool_call_id", "content": text}`` (the API has no error flag;
  the text says what went wrong);
- tools → ``tools`` as ``{"type": "function", "function": {"name", "description",
  "parameters"}}`` with ``"tool_choice": "auto"`` (the API's default, but llama-cpp-python's
  function-calling chat format ignores the tools without it); neither when no tool is offered.

Answers are read leniently where compatible servers differ: ``arguments`` given as an object is
taken as is, an empty string means no arguments, and a string that is not a JSON object is kept
as ``{"_raw": "<the string>"}`` (see :data:`RAW_ARGUMENTS_KEY`) so the agent can tell the model
its arguments were unreadable instead of failing the run; a call without an id gets
``call_<n>``; ``content`` given as a list of text parts is joined, and a ``refusal`` stands in
for missing content. Anything else off-spec is a non-retryable
:class:`~skillweave.errors.ModelError`.
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

__all__ = ["DEFAULT_OPENAI_BASE_URL", "RAW_ARGUMENTS_KEY", "OpenAIProvider"]

DEFAULT_OPENAI_BASE_URL: Final = "https://api.openai.com/v1"

_STOP_REASONS: Final[dict[str, StopReason]] = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
}


class OpenAIProvider(HttpProvider):
    """A model behind an OpenAI-compatible Chat Completions endpoint.

    Args:
        model: the model to ask, e.g. ``gpt-4o`` or ``qwen2.5:7b``.
        base_url: the API root, up to and including ``/v1``.
        api_key: the bearer token; None for servers that need none.
        timeout: seconds for each phase of the HTTP call (connect, write, read, pool).
        transport: an httpx transport (tests pass ``httpx.MockTransport``).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_OPENAI_BASE_URL,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        super().__init__(
            name=f"openai:{model}",
            model=model,
            url=f"{base_url.rstrip('/')}/chat/completions",
            headers=headers,
            timeout=timeout,
            transport=transport,
        )

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One chat completion; see the module docstring for the mapping."""
        status, content = await self.post_json(self.request_body(request))
        try:
            completion = _Completion.model_validate_json(content)
        except ValidationError as exc:
            raise self.malformed(status, content, exc) from None
        choice = completion.choices[0]
        message = Message(
            role="assistant",
            text=_text_of(choice.message),
            tool_calls=tuple(
                _tool_call(call, index)
                for index, call in enumerate(choice.message.tool_calls or (), start=1)
            ),
        )
        usage = completion.usage or _Usage()
        return ModelResponse(
            message=message,
            stop_reason=_STOP_REASONS.get(choice.finish_reason or "", "other"),
            usage=Usage(
                input_tokens=usage.prompt_tokens or 0,
                output_tokens=usage.completion_tokens or 0,
            ),
            model=completion.model or self.model,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for `request` (the model is this provider's, see ``ModelProvider``)."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(self._wire_message(message) for message in request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_output_tokens,
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    },
                }
                for tool in request.tools
            ]
            body["tool_choice"] = "auto"
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def _wire_message(self, message: Message) -> dict[str, Any]:
        match message.role:
            case "user":
                return {"role": "user", "content": message.text}
            case "assistant":
                wire: dict[str, Any] = {"role": "assistant", "content": message.text}
                if message.tool_calls:
                    wire["tool_calls"] = [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ]
                return wire
            case "tool":
                if not message.tool_call_id:
                    raise ModelError(f"{self.name}: a tool result without tool_call_id")
                return {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": message.text,
                }
            case _:
                assert_never(message.role)


def _text_of(message: _AssistantMessage) -> str:
    content = message.content
    if isinstance(content, list):
        content = "".join(
            part.get("text", "")
            for part in content
            if part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return content or message.refusal or ""


def _tool_call(call: _ToolCall, index: int) -> ToolCall:
    return ToolCall(
        id=call.id or f"call_{index}",
        name=call.function.name,
        arguments=_arguments(call.function.arguments),
    )


def _arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if raw is None or isinstance(raw, dict):
        return raw or {}
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {RAW_ARGUMENTS_KEY: raw}
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS_KEY: raw}


# The wire format of an answer: only what is read, and lenient where servers differ.


class _Function(BaseModel):
    name: str = Field(min_length=1)
    arguments: str | dict[str, Any] | None = None


class _ToolCall(BaseModel):
    id: str | None = None
    function: _Function


class _AssistantMessage(BaseModel):
    content: str | list[dict[str, Any]] | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _AssistantMessage
    finish_reason: str | None = None


class _Usage(BaseModel):
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)


class _Completion(BaseModel):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None
    model: str | None = None
