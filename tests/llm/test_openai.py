"""OpenAIProvider against a mocked Chat Completions endpoint: the exact request, the answer
mapping, and failures."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from skillweave.errors import ModelError
from skillweave.llm import (
    RAW_ARGUMENTS_KEY,
    Message,
    ModelProvider,
    ModelRequest,
    OpenAIProvider,
    ToolCall,
    ToolSpec,
    Usage,
)

BASE_URL = "https://llm.example.test/v1"

ACTIVATE = ToolSpec(
    name="activate_skill",
    description="Load a skill's instructions.",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string", "enum": ["data-toolkit"]}},
        "required": ["name"],
    },
)

CONVERSATION = (
    Message(role="user", text="Summarise sales.csv"),
    Message(
        role="assistant",
        text="Loading the toolkit.",
        tool_calls=(
            ToolCall(id="call_a", name="activate_skill", arguments={"name": "data-toolkit"}),
        ),
    ),
    Message(
        role="tool",
        text='<skill_content name="data-toolkit">…</skill_content>',
        tool_call_id="call_a",
        tool_name="activate_skill",
    ),
    Message(
        role="assistant",
        tool_calls=(
            ToolCall(
                id="call_b",
                name="read_skill_resource",
                arguments={"skill": "data-toolkit", "path": "a.md"},
            ),
            ToolCall(
                id="call_c",
                name="read_skill_resource",
                arguments={"skill": "data-toolkit", "path": "b.md"},
            ),
        ),
    ),
    Message(role="tool", text="A", tool_call_id="call_b", tool_name="read_skill_resource"),
    Message(
        role="tool",
        text="no such file",
        tool_call_id="call_c",
        tool_name="read_skill_resource",
        is_error=True,
    ),
    Message(role="user", text="Also plot it, please."),
)


def completion(
    message: dict[str, Any], finish_reason: str = "stop", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1741000000,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
    }
    body.update(extra)
    return body


class Recorder:
    """A MockTransport that answers from a handler and keeps every request."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []
        self._handler = handler
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._handler(request)

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.requests[-1].content)


def answering(body: object, status: int = 200, **kwargs: Any) -> Recorder:
    if isinstance(body, str | bytes):
        kwargs["content"] = body
    else:
        kwargs["json"] = body
    return Recorder(lambda _request: httpx.Response(status, **kwargs))


def provider(recorder: Recorder, *, api_key: str | None = "sk-test-key") -> OpenAIProvider:
    return OpenAIProvider(
        model="gpt-4o",
        base_url=BASE_URL + "/",
        api_key=api_key,
        timeout=5,
        transport=recorder.transport,
    )


def request(**kwargs: Any) -> ModelRequest:
    return ModelRequest(model="gpt-4o", messages=kwargs.pop("messages", CONVERSATION[:1]), **kwargs)


async def test_request_body_maps_every_role_and_the_tools() -> None:
    recorder = answering(completion({"content": "Done."}))
    async with provider(recorder) as model:
        await model.complete(
            request(
                system="You are careful.",
                messages=CONVERSATION,
                tools=(ACTIVATE,),
                max_output_tokens=512,
                temperature=0.2,
            )
        )
    sent = recorder.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://llm.example.test/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test-key"
    assert sent.headers["content-type"] == "application/json"
    assert recorder.body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "Summarise sales.csv"},
            {
                "role": "assistant",
                "content": "Loading the toolkit.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {
                            "name": "activate_skill",
                            "arguments": '{"name": "data-toolkit"}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_a",
                "content": '<skill_content name="data-toolkit">…</skill_content>',
            },
            {
                # never null: llama-cpp-python answers HTTP 500 to null content
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {
                            "name": "read_skill_resource",
                            "arguments": '{"skill": "data-toolkit", "path": "a.md"}',
                        },
                    },
                    {
                        "id": "call_c",
                        "type": "function",
                        "function": {
                            "name": "read_skill_resource",
                            "arguments": '{"skill": "data-toolkit", "path": "b.md"}',
                        },
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_b", "content": "A"},
            {"role": "tool", "tool_call_id": "call_c", "content": "no such file"},
            {"role": "user", "content": "Also plot it, please."},
        ],
        "max_tokens": 512,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "activate_skill",
                    "description": "Load a skill's instructions.",
                    "parameters": ACTIVATE.input_schema,
                },
            }
        ],
        "tool_choice": "auto",
        "temperature": 0.2,
    }


async def test_minimal_request_omits_system_tools_and_temperature() -> None:
    recorder = answering(completion({"content": "Hi."}))
    async with provider(recorder) as model:
        await model.complete(request())
    assert recorder.body == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "Summarise sales.csv"}],
        "max_tokens": 4096,
    }


async def test_no_message_has_null_content_and_tools_come_with_tool_choice_auto() -> None:
    recorder = answering(completion({"content": "Hi."}))
    async with provider(recorder) as model:
        await model.complete(request(messages=CONVERSATION, tools=(ACTIVATE,)))
    assert all(isinstance(m["content"], str) for m in recorder.body["messages"])
    assert recorder.body["tool_choice"] == "auto"


async def test_without_api_key_no_authorization_header_is_sent() -> None:
    recorder = answering(completion({"content": "Hi."}))
    async with provider(recorder, api_key=None) as model:
        await model.complete(request())
    assert "authorization" not in recorder.requests[0].headers


async def test_an_assistant_message_with_neither_text_nor_calls_keeps_empty_content() -> None:
    recorder = answering(completion({"content": "Hi."}))
    async with provider(recorder) as model:
        await model.complete(
            request(
                messages=(
                    CONVERSATION[0],
                    Message(role="assistant"),
                    Message(role="user", text="?"),
                )
            )
        )
    assert recorder.body["messages"][1] == {"role": "assistant", "content": ""}


async def test_text_answer() -> None:
    recorder = answering(completion({"content": "Total sales: 42.", "refusal": None}))
    async with provider(recorder) as model:
        response = await model.complete(request())
    assert response.message == Message(role="assistant", text="Total sales: 42.")
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input_tokens=82, output_tokens=17)
    assert response.model == "gpt-4o-2024-08-06"


async def test_one_tool_call() -> None:
    answer = completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc123",
                    "type": "function",
                    "function": {"name": "activate_skill", "arguments": '{"name":"data-toolkit"}'},
                }
            ],
        },
        finish_reason="tool_calls",
    )
    async with provider(answering(answer)) as model:
        response = await model.complete(request(tools=(ACTIVATE,)))
    assert response.stop_reason == "tool_use"
    assert response.message.text == ""
    assert response.message.tool_calls == (
        ToolCall(id="call_abc123", name="activate_skill", arguments={"name": "data-toolkit"}),
    )


async def test_several_tool_calls_in_one_turn() -> None:
    answer = completion(
        {
            "content": "Reading both files.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "read_skill_resource",
                        "arguments": '{"skill": "s", "path": "a.md"}',
                    },
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {
                        "name": "read_skill_resource",
                        "arguments": '{"skill": "s", "path": "b.md"}',
                    },
                },
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "search_skills", "arguments": "{}"},
                },
            ],
        },
        finish_reason="tool_calls",
    )
    async with provider(answering(answer)) as model:
        response = await model.complete(request())
    assert response.message.text == "Reading both files."
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("call_1", "read_skill_resource", {"skill": "s", "path": "a.md"}),
        ("call_2", "read_skill_resource", {"skill": "s", "path": "b.md"}),
        ("call_3", "search_skills", {}),
    ]


@pytest.mark.parametrize(
    ("raw", "arguments"),
    [
        ('{"name": "x"', {RAW_ARGUMENTS_KEY: '{"name": "x"'}),  # cut off
        ('["not", "an", "object"]', {RAW_ARGUMENTS_KEY: '["not", "an", "object"]'}),
        ("", {}),
        ({"name": "x"}, {"name": "x"}),  # some compatible servers send an object
        (None, {}),
    ],
)
async def test_unreadable_or_unusual_arguments_do_not_crash(
    raw: object, arguments: dict[str, Any]
) -> None:
    answer = completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "activate_skill", "arguments": raw},
                }
            ],
        },
        finish_reason="tool_calls",
    )
    async with provider(answering(answer)) as model:
        response = await model.complete(request())
    assert response.message.tool_calls[0].arguments == arguments


async def test_tool_calls_without_ids_get_numbered_ones() -> None:
    answer = completion(
        {
            "content": "",
            "tool_calls": [
                {"function": {"name": "a", "arguments": "{}"}},
                {"function": {"name": "b", "arguments": "{}"}},
            ],
        },
        finish_reason="tool_calls",
    )
    async with provider(answering(answer)) as model:
        response = await model.complete(request())
    assert [call.id for call in response.message.tool_calls] == ["call_1", "call_2"]


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "other"),
        (None, "other"),
    ],
)
async def test_finish_reasons(finish_reason: str | None, stop_reason: str) -> None:
    async with provider(
        answering(completion({"content": "x"}, finish_reason=finish_reason))
    ) as model:  # type: ignore[arg-type]
        response = await model.complete(request())
    assert response.stop_reason == stop_reason


async def test_missing_usage_counts_zero_and_missing_model_is_ours() -> None:
    answer = {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]
    }
    async with provider(answering(answer)) as model:
        response = await model.complete(request())
    assert response.usage == Usage()
    assert response.model == "gpt-4o"


async def test_content_as_text_parts_and_refusals() -> None:
    parts = completion(
        {
            "content": [
                {"type": "text", "text": "Hello, "},
                {"type": "image_url"},
                {"type": "text", "text": "world."},
            ]
        }
    )
    refusal = completion({"content": None, "refusal": "I can't help with that."})
    async with provider(answering(parts)) as model:
        assert (await model.complete(request())).message.text == "Hello, world."
    async with provider(answering(refusal)) as model:
        assert (await model.complete(request())).message.text == "I can't help with that."


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("<html>oops</html>", "Invalid JSON"),
        ({"choices": []}, "choices: List should have at least 1 item"),
        ({"id": "x"}, "choices: Field required"),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {}}]}}]},
            "choices.0.message.tool_calls.0.function.name: Field required",
        ),
        (
            {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}},
            "usage.prompt_tokens",
        ),
        ([1, 2], "Input should be an object"),
    ],
)
async def test_malformed_answers_are_clear_non_retryable_errors(body: object, problem: str) -> None:
    async with provider(answering(body)) as model:
        with pytest.raises(ModelError, match="malformed answer") as caught:
            await model.complete(request())
    assert problem in str(caught.value)
    assert str(caught.value).startswith("openai:gpt-4o: malformed answer (HTTP 200)")
    assert (caught.value.retryable, caught.value.status) == (False, 200)


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (404, False),
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
    ],
)
async def test_http_errors_are_classified(status: int, retryable: bool) -> None:
    body = {
        "error": {
            "message": "something went wrong",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    async with provider(answering(body, status=status, headers={"retry-after": "4"})) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    error = caught.value
    assert (error.status, error.retryable) == (status, retryable)
    assert error.retry_after == (4.0 if retryable else None)
    assert str(error).startswith(f"openai:gpt-4o: HTTP {status}")
    assert "something went wrong" in str(error)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # llama-cpp-python: its request validation, answered with 500
        (
            500,
            {
                "error": {
                    "message": "1 validation error:\n  {'type': 'missing', 'loc': ('body',"
                    " 'messages', 1, 'content'), 'msg': 'Field required', 'input': {}}",
                    "type": "internal_server_error",
                    "param": None,
                    "code": None,
                }
            },
        ),
        # llama-cpp-python and vLLM: the context window is full
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 2048 tokens. However,"
                    " you requested 2200 tokens (2100 in the messages, 100 in the"
                    " completion). Please reduce the length of the messages or completion.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
        ),
        # Ollama's runner: the context window is full, answered with 500
        (500, {"error": "input exceeds context length"}),
    ],
)
async def test_errors_that_never_succeed_are_not_retried(status: int, body: object) -> None:
    async with provider(answering(body, status=status)) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    assert (caught.value.status, caught.value.retryable) == (status, False)


async def test_connection_failures_are_retryable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    async with provider(Recorder(refuse)) as model:
        with pytest.raises(ModelError, match="cannot reach the API") as caught:
            await model.complete(request())
    assert caught.value.retryable
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_the_key_never_shows() -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-test-key.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    async with provider(answering(body, status=401)) as model:
        assert "sk-test-key" not in repr(model)
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    assert "sk-test-key" not in str(caught.value)


async def test_a_tool_result_without_call_id_is_refused() -> None:
    async with provider(answering(completion({"content": "x"}))) as model:
        with pytest.raises(ModelError, match="without tool_call_id"):
            await model.complete(request(messages=(Message(role="tool", text="x"),)))


async def test_is_a_model_provider() -> None:
    model = OpenAIProvider(
        model="qwen2.5:7b", base_url="http://localhost:11434/v1", api_key=None, timeout=1
    )
    assert isinstance(model, ModelProvider)
    assert model.name == "openai:qwen2.5:7b"
    assert model.url == "http://localhost:11434/v1/chat/completions"
    await model.aclose()
