"""AnthropicProvider against a mocked Messages endpoint: the exact request (with merged user
turns), the answer mapping, and failures."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from skillweave.errors import ModelError
from skillweave.llm import (
    AnthropicProvider,
    Message,
    ModelProvider,
    ModelRequest,
    ToolCall,
    ToolSpec,
    Usage,
)

BASE_URL = "https://claude.example.test"

RUN_SCRIPT = ToolSpec(
    name="run_skill_script",
    description="Run a script of an active skill in a sandbox.",
    input_schema={
        "type": "object",
        "properties": {"skill": {"type": "string"}, "script": {"type": "string"}},
        "required": ["skill", "script"],
    },
)


def message_answer(
    content: list[dict[str, Any]], stop_reason: str = "end_turn", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    }
    body.update(extra)
    return body


class Recorder:
    def __init__(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._status, self._body, self._headers = status, body, headers or {}
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if isinstance(self._body, str):
            return httpx.Response(self._status, text=self._body, headers=self._headers)
        return httpx.Response(self._status, json=self._body, headers=self._headers)

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.requests[-1].content)


def provider(recorder: Recorder) -> AnthropicProvider:
    return AnthropicProvider(
        model="claude-sonnet-4-5",
        base_url=BASE_URL,
        api_key="sk-ant-test-key",
        timeout=5,
        transport=recorder.transport,
    )


def request(*messages: Message, **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model="claude-sonnet-4-5", messages=messages or (Message(role="user", text="Hi"),), **kwargs
    )


async def test_request_headers_and_body() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "Done."}]))
    conversation = (
        Message(role="user", text="Compute the stats of sales.csv"),
        Message(
            role="assistant",
            text="Running two scripts.",
            tool_calls=(
                ToolCall(
                    id="toolu_01",
                    name="run_skill_script",
                    arguments={"skill": "data-toolkit", "script": "stats.py"},
                ),
                ToolCall(
                    id="toolu_02",
                    name="run_skill_script",
                    arguments={"skill": "data-toolkit", "script": "plot.py"},
                ),
            ),
        ),
        Message(
            role="tool",
            text='{"exit_code": 0}',
            tool_call_id="toolu_01",
            tool_name="run_skill_script",
        ),
        Message(
            role="tool",
            text="script not found",
            tool_call_id="toolu_02",
            tool_name="run_skill_script",
            is_error=True,
        ),
        Message(role="user", text="Use a bar chart."),
        Message(
            role="assistant",
            tool_calls=(
                ToolCall(
                    id="toolu_03",
                    name="run_skill_script",
                    arguments={"skill": "data-toolkit", "script": "bar.py"},
                ),
            ),
        ),
        Message(role="tool", text="ok", tool_call_id="toolu_03", tool_name="run_skill_script"),
    )
    async with provider(recorder) as model:
        await model.complete(
            request(
                *conversation,
                system="You are careful.",
                tools=(RUN_SCRIPT,),
                max_output_tokens=1024,
                temperature=0.5,
            )
        )
    sent = recorder.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://claude.example.test/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test-key"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    assert recorder.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are careful.",
        "messages": [
            {"role": "user", "content": "Compute the stats of sales.csv"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Running two scripts."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "run_skill_script",
                        "input": {"skill": "data-toolkit", "script": "stats.py"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "run_skill_script",
                        "input": {"skill": "data-toolkit", "script": "plot.py"},
                    },
                ],
            },
            {
                # both results and the user's follow-up: ONE user message, results first
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": '{"exit_code": 0}',
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": "script not found",
                        "is_error": True,
                    },
                    {"type": "text", "text": "Use a bar chart."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_03",
                        "name": "run_skill_script",
                        "input": {"skill": "data-toolkit", "script": "bar.py"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_03", "content": "ok"}],
            },
        ],
        "tools": [
            {
                "name": "run_skill_script",
                "description": "Run a script of an active skill in a sandbox.",
                "input_schema": RUN_SCRIPT.input_schema,
            }
        ],
        "tool_choice": {"type": "auto"},
        "temperature": 0.5,
    }


async def test_minimal_request_omits_system_and_tools() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "Hello"}]))
    async with provider(recorder) as model:
        await model.complete(request())
    assert recorder.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi"}],
    }


async def test_a_user_text_sent_before_tool_results_still_puts_results_first() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "ok"}]))
    conversation = (
        Message(role="user", text="Go"),
        Message(
            role="assistant",
            tool_calls=(ToolCall(id="t1", name="search_skills", arguments={"query": "pdf"}),),
        ),
        Message(role="user", text="(while you work: use A4)"),
        Message(role="tool", text="pdf-tools", tool_call_id="t1"),
    )
    async with provider(recorder) as model:
        await model.complete(request(*conversation))
    assert recorder.body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "pdf-tools"},
            {"type": "text", "text": "(while you work: use A4)"},
        ],
    }


async def test_empty_messages_are_dropped_and_neighbours_merged() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "ok"}]))
    conversation = (
        Message(role="user", text="First"),
        Message(role="assistant", text=""),
        Message(role="user", text="Second"),
    )
    async with provider(recorder) as model:
        await model.complete(request(*conversation))
    assert recorder.body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "First"}, {"type": "text", "text": "Second"}],
        }
    ]


async def test_whitespace_only_texts_are_left_out() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "ok"}]))
    conversation = (
        Message(role="user", text="Go"),
        Message(
            role="assistant",
            text="  \n",
            tool_calls=(ToolCall(id="t1", name="search_skills", arguments={}),),
        ),
        Message(role="tool", text="found", tool_call_id="t1"),
        Message(role="user", text=" "),
    )
    async with provider(recorder) as model:
        await model.complete(request(*conversation))
    assert recorder.body["messages"] == [
        {"role": "user", "content": "Go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "search_skills", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}],
        },
    ]


async def test_empty_tool_results_send_no_empty_content() -> None:
    recorder = Recorder(200, message_answer([{"type": "text", "text": "ok"}]))
    conversation = (
        Message(role="user", text="Go"),
        Message(
            role="assistant",
            tool_calls=(
                ToolCall(id="t1", name="run_skill_script", arguments={}),
                ToolCall(id="t2", name="run_skill_script", arguments={}),
            ),
        ),
        Message(role="tool", text="", tool_call_id="t1"),
        Message(role="tool", text=" ", tool_call_id="t2", is_error=True),
    )
    async with provider(recorder) as model:
        await model.complete(request(*conversation))
    assert recorder.body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1"},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": "(the tool failed without saying why)",
            "is_error": True,
        },
    ]


async def test_text_answer_and_usage() -> None:
    recorder = Recorder(
        200, message_answer([{"type": "text", "text": "Total: "}, {"type": "text", "text": "42."}])
    )
    async with provider(recorder) as model:
        response = await model.complete(request())
    assert response.message == Message(role="assistant", text="Total: 42.")
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input_tokens=2095, output_tokens=503)
    assert response.model == "claude-sonnet-4-5-20250929"


async def test_one_tool_use() -> None:
    content = [
        {"type": "text", "text": "I'll activate the toolkit."},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "activate_skill",
            "input": {"name": "data-toolkit"},
        },
    ]
    async with provider(Recorder(200, message_answer(content, "tool_use"))) as model:
        response = await model.complete(request())
    assert response.stop_reason == "tool_use"
    assert response.message.text == "I'll activate the toolkit."
    assert response.message.tool_calls == (
        ToolCall(
            id="toolu_01A09q90qw90lq917835lq9",
            name="activate_skill",
            arguments={"name": "data-toolkit"},
        ),
    )


async def test_several_tool_uses_in_one_turn_and_unknown_blocks_ignored() -> None:
    content = [
        {"type": "thinking", "thinking": "Two files to read.", "signature": "abc"},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "read_skill_resource",
            "input": {"skill": "s", "path": "a.md"},
        },
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "read_skill_resource",
            "input": {"skill": "s", "path": "b.md"},
        },
        {"type": "tool_use", "id": "toolu_3", "name": "search_skills", "input": {}},
    ]
    async with provider(Recorder(200, message_answer(content, "tool_use"))) as model:
        response = await model.complete(request())
    assert response.message.text == ""
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("toolu_1", "read_skill_resource", {"skill": "s", "path": "a.md"}),
        ("toolu_2", "read_skill_resource", {"skill": "s", "path": "b.md"}),
        ("toolu_3", "search_skills", {}),
    ]


@pytest.mark.parametrize(
    ("wire", "ours"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "end_turn"),
        ("refusal", "other"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons(wire: str, ours: str) -> None:
    async with provider(
        Recorder(200, message_answer([{"type": "text", "text": "x"}], wire))
    ) as model:
        assert (await model.complete(request())).stop_reason == ours


async def test_cache_tokens_count_as_input() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
    }
    async with provider(
        Recorder(200, message_answer([{"type": "text", "text": "x"}], usage=usage))
    ) as model:
        assert (await model.complete(request())).usage == Usage(input_tokens=1110, output_tokens=5)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("not json", "Invalid JSON"),
        ({"type": "message", "role": "assistant"}, "content: Field required"),
        ({"content": [{"text": "x"}]}, "content.0.type: Field required"),
        (
            {"content": [{"type": "tool_use", "name": "x", "input": {}}]},
            "content.0: a tool_use block without id or name",
        ),
    ],
)
async def test_malformed_answers(body: object, problem: str) -> None:
    async with provider(Recorder(200, body)) as model:
        with pytest.raises(ModelError, match="malformed answer") as caught:
            await model.complete(request())
    assert problem in str(caught.value)
    assert not caught.value.retryable


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
        (529, True),
    ],
)
async def test_http_errors_are_classified(status: int, retryable: bool) -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "Something happened"}}
    async with provider(Recorder(status, body, {"retry-after": "2"})) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    assert (caught.value.status, caught.value.retryable) == (status, retryable)
    assert caught.value.retry_after == (2.0 if retryable else None)
    assert str(caught.value).startswith(f"anthropic:claude-sonnet-4-5: HTTP {status}")
    assert "Something happened" in str(caught.value)
    assert "sk-ant-test-key" not in str(caught.value)


async def test_a_context_length_error_is_not_retried() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 208310 tokens > 200000 maximum",
        },
    }
    async with provider(Recorder(400, body, {"x-should-retry": "true"})) as model:
        with pytest.raises(ModelError, match="prompt is too long") as caught:
            await model.complete(request())
    assert not caught.value.retryable


async def test_timeouts_are_retryable() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    model = AnthropicProvider(
        model="claude-sonnet-4-5", api_key="k", timeout=1, transport=httpx.MockTransport(slow)
    )
    with pytest.raises(ModelError, match="did not answer in time") as caught:
        await model.complete(request())
    assert caught.value.retryable
    await model.aclose()


async def test_is_a_model_provider_and_hides_its_key() -> None:
    model = provider(Recorder(200, {}))
    assert isinstance(model, ModelProvider)
    assert model.name == "anthropic:claude-sonnet-4-5"
    assert "sk-ant-test-key" not in repr(model)
    await model.aclose()
