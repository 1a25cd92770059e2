"""OpenAIProvider over real HTTP against the strict server of ``tests.llm_server``: what it
sends is accepted, tools are honoured, and failures that never succeed are not retryable."""

from __future__ import annotations

import httpx
import pytest

from skillweave.errors import ModelError
from skillweave.llm import RAW_ARGUMENTS_KEY, Message, ModelRequest, OpenAIProvider, ToolCall
from skillweave.llm.messages import ToolSpec
from tests.llm_server import (
    NULL_CONTENT_500,
    Reply,
    StrictLLMServer,
    context_length_error,
    invalid_request_500,
    runaway_reply,
    strict_llm_server,
    text_reply,
    tool_call_reply,
)

ACTIVATE = ToolSpec(
    name="activate_skill",
    description="Load a skill's instructions.",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
)

# A turn in which the model called a tool without saying anything: the message llama-cpp-python
# answered with HTTP 500 when it was sent with null content.
CONVERSATION = (
    Message(role="user", text="Take notes."),
    Message(
        role="assistant",
        tool_calls=(ToolCall(id="call_1", name="activate_skill", arguments={"name": "notes"}),),
    ),
    Message(
        role="tool", text="<skill_content/>", tool_call_id="call_1", tool_name="activate_skill"
    ),
)


def provider(server: StrictLLMServer, *, timeout: float = 10.0) -> OpenAIProvider:
    return OpenAIProvider(model="strict-test-model", base_url=server.base_url, timeout=timeout)


def request(*, tools: tuple[ToolSpec, ...] = (ACTIVATE,)) -> ModelRequest:
    return ModelRequest(
        model="strict-test-model", system="Be brief.", messages=CONVERSATION, tools=tools
    )


async def test_the_request_is_accepted_and_tools_are_honoured() -> None:
    async with (
        strict_llm_server(tool_call_reply("activate_skill", {"name": "notes"})) as server,
        provider(server) as model,
    ):
        response = await model.complete(request())
    assert [r.status for r in server.requests] == [200]
    sent = server.bodies[0]
    assert sent["tool_choice"] == "auto"
    assert sent["messages"][2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "activate_skill", "arguments": '{"name": "notes"}'},
            }
        ],
    }
    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls == (
        ToolCall(id="call_1", name="activate_skill", arguments={"name": "notes"}),
    )


async def test_without_tools_no_tool_choice_is_sent() -> None:
    async with (
        strict_llm_server(text_reply("Noted.")) as server,
        provider(server) as model,
    ):
        response = await model.complete(request(tools=()))
    assert response.message.text == "Noted."
    assert "tools" not in server.bodies[0]
    assert "tool_choice" not in server.bodies[0]


async def test_truncated_tool_arguments_reach_the_agent_verbatim() -> None:
    async with (
        strict_llm_server(tool_call_reply("activate_skill", '{"name": "no')) as server,
        provider(server) as model,
    ):
        response = await model.complete(request())
    assert response.message.tool_calls[0].arguments == {RAW_ARGUMENTS_KEY: '{"name": "no'}


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (invalid_request_500(), 500),
        (context_length_error(), 400),
        (context_length_error(status=500), 500),
    ],
    ids=["invalid-request-500", "context-length-400", "context-length-500"],
)
async def test_failures_that_never_succeed_are_not_retryable(reply: Reply, status: int) -> None:
    async with (
        strict_llm_server(reply) as server,
        provider(server) as model,
    ):
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    assert (caught.value.status, caught.value.retryable) == (status, False)
    assert str(caught.value).startswith(f"openai:strict-test-model: HTTP {status}")
    assert len(server.requests) == 1


async def test_a_timeout_against_the_loopback_server_is_not_retryable() -> None:
    async with (
        strict_llm_server(runaway_reply(seconds=30)) as server,
        provider(server, timeout=0.5) as model,
    ):
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    error = caught.value
    assert not error.retryable
    assert isinstance(error.__cause__, httpx.ReadTimeout)
    assert "did not answer in time (ReadTimeout)" in str(error)
    assert "MODEL__TIMEOUT_SECONDS" in str(error)
    assert len(server.requests) == 1


# --- the strict server itself: it refuses what real servers refuse ----------------------------


async def test_the_server_reproduces_llama_cpp_pythons_quirks() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "activate_skill", "arguments": "{}"},
    }
    tools = [{"type": "function", "function": {"name": "activate_skill", "parameters": {}}}]
    messages = [
        {"role": "user", "content": "Go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]
    async with (
        strict_llm_server(tool_call_reply("activate_skill", {})) as server,
        httpx.AsyncClient(base_url=server.base_url) as client,
    ):
        null_content = await client.post(
            "/chat/completions", json={"model": "m", "messages": messages}
        )
        no_tool_choice = await client.post(
            "/chat/completions", json={"model": "m", "messages": messages[:1], "tools": tools}
        )
    assert null_content.status_code == 500
    assert null_content.json()["error"]["message"] == NULL_CONTENT_500
    assert no_tool_choice.status_code == 200
    message = no_tool_choice.json()["choices"][0]["message"]
    assert "tool_calls" not in message
    assert "activate_skill" in message["content"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "m", "messages": []}, "non-empty"),
        ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "Supported values"),
        ({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        (
            {"model": "m", "messages": [{"role": "tool", "content": "x", "tool_call_id": "c"}]},
            "must be a response to a preceeding message",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
                    }
                ],
            },
            "function.arguments",
        ),
        (
            {
                "model": "m",
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "has space"}}],
            },
            "does not match pattern",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": "auto"},
            "only allowed when 'tools' are specified",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
            "does not stream",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "foo": 1},
            "Unrecognized request argument supplied: foo",
        ),
    ],
)
async def test_the_server_refuses_invalid_requests_with_400(body: object, problem: str) -> None:
    async with (
        strict_llm_server() as server,
        httpx.AsyncClient(base_url=server.base_url) as client,
    ):
        answer = await client.post("/chat/completions", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert problem in answer.json()["error"]["message"]
    assert server.requests[0].status == 400
