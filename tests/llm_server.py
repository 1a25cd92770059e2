"""A strict OpenAI-compatible Chat Completions server for tests, scripted per test.

Tests that drive :class:`~skillweave.llm.OpenAIProvider` (or a whole engine) over real HTTP
start one with :func:`strict_llm_server` and point the provider at its ``base_url``::

    async with strict_llm_server(tool_call_reply("activate_skill", {"name": "notes"}),
                                 text_reply("Done.")) as server:
        ...  # OpenAIProvider(model="m", base_url=server.base_url)
    assert len(server.requests) == 2

What it does with each ``POST /v1/chat/completions``:

1. Records it (:attr:`StrictLLMServer.requests`), valid or not.
2. Validates the body against the documented Chat Completions request schema
   (https://platform.openai.com/docs/api-reference/chat/create): ``model``; ``messages`` with
   roles ``system``, ``developer``, ``user``, ``assistant`` and ``tool``; assistant
   ``tool_calls`` as ``{"id", "type": "function", "function": {"name", "arguments": "<str>"}}``;
   tool messages with a ``tool_call_id`` that answers a call of an earlier assistant message,
   and every call answered; ``tools`` of type ``function`` with a valid ``name`` and object
   ``parameters``; ``tool_choice`` ``none``/``auto``/``required``/a named function, and only
   beside ``tools``; no unknown or streaming parameters. An invalid request gets HTTP 400
   with an OpenAI-style error body (``invalid_request_error``) naming the first problem.
3. Reproduces llama-cpp-python's quirks, unless started with ``quirks=False``: an assistant
   message with ``"content": null`` beside ``tool_calls`` gets HTTP 500 (its chat template
   cannot render null), and a request that offers ``tools`` without ``tool_choice`` has them
   ignored: a scripted tool call comes back as plain text.
4. Answers with the next scripted :class:`Reply`; once the script is spent the last reply
   repeats (a real server answers the same request the same way, so a retry is visible as
   one more recorded request), and with no script at all the answer is ``text_reply("ok")``.

Replies are made by :func:`text_reply`, :func:`tool_call_reply` (arguments as a dict, or as
the exact string to send, malformed JSON included), :func:`empty_reply`,
:func:`truncated_reply` (``finish_reason: "length"``), :func:`runaway_reply` (answers only
after some seconds, longer than the client waits), :func:`context_length_error` and
:func:`invalid_request_500` (the error bodies llama-cpp-python sends) and
:func:`unavailable_503` (llama-server's, while it loads its model).

Written with starlette and uvicorn, served as a task on the test's own event loop: the
provider, the engines and the Temporal worker all run on that loop too, so no thread or
process is needed, and a socket bound to port 0 beforehand gives a free port without a race.
A runaway reply ends as soon as the server stops, so no test waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = [
    "RecordedRequest",
    "Reply",
    "StrictLLMServer",
    "context_length_error",
    "empty_reply",
    "invalid_request_500",
    "runaway_reply",
    "strict_llm_server",
    "text_reply",
    "tool_call_reply",
    "truncated_reply",
    "unavailable_503",
]

NULL_CONTENT_500: Final = 'can only concatenate str (not "NoneType") to str'
"""What llama-cpp-python's Jinja chat template says to a null content (HTTP 500)."""

_ROLES: Final = frozenset({"system", "developer", "user", "assistant", "tool"})
_TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_KNOWN_PARAMETERS: Final = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "n",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "response_format",
        "user",
        "stream",
    }
)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status and JSON body, sent after `delay` seconds (cut
    short when the server stops). Made by the ``*_reply`` and ``*_error`` functions."""

    status: int
    body: dict[str, Any]
    delay: float = 0.0

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls this reply's message carries (none for errors)."""
        if self.status != 200:
            return []
        return self.body["choices"][0]["message"].get("tool_calls") or []


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server got: its JSON body (None if it was not JSON), the status it was
    answered with, and its Authorization header (None without one)."""

    body: Any
    status: int
    authorization: str | None = None


def _completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-strict",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "strict-test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _error(
    message: str, *, type_: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def text_reply(text: str = "ok") -> Reply:
    """A plain answer, ``finish_reason: "stop"``."""
    return Reply(200, _completion({"content": text}, "stop"))


def tool_call_reply(
    name: str, arguments: dict[str, Any] | str, *, call_id: str = "call_1", text: str | None = None
) -> Reply:
    """A call of tool `name`, ``finish_reason: "tool_calls"``. `arguments` as a dict is sent
    as JSON; as a string it is sent verbatim (truncated or malformed JSON included)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
    return Reply(200, _completion({"content": text, "tool_calls": [call]}, "tool_calls"))


def empty_reply() -> Reply:
    """An answer with no text and no tool call."""
    return Reply(200, _completion({"content": ""}, "stop"))


def truncated_reply(text: str = "The answer is") -> Reply:
    """An answer cut off at ``max_tokens`` (``finish_reason: "length"``)."""
    return Reply(200, _completion({"content": text}, "length"))


def runaway_reply(seconds: float = 30.0, text: str = "finally") -> Reply:
    """A generation that runs `seconds` before answering: longer than the client's timeout."""
    return Reply(200, _completion({"content": text}, "stop"), delay=seconds)


def context_length_error(*, status: int = 400, context: int = 2048, requested: int = 2200) -> Reply:
    """llama-cpp-python's answer (HTTP 400) when the conversation outgrew the context window.

    Some servers send such errors with a 5xx (Ollama's runner answered 500 to "input exceeds
    context length"); `status` reproduces that."""
    message = (
        f"This model's maximum context length is {context} tokens. However, you requested"
        f" {requested} tokens ({requested - 100} in the messages, 100 in the completion)."
        " Please reduce the length of the messages or completion."
    )
    return Reply(
        status,
        _error(
            message, type_="invalid_request_error", param="messages", code="context_length_exceeded"
        ),
    )


def unavailable_503(message: str = "Loading model") -> Reply:
    """llama-server's answer (HTTP 503) while its model is still loading: worth a retry."""
    return Reply(503, _error(message, type_="unavailable_error"))


def invalid_request_500() -> Reply:
    """llama-cpp-python's answer (HTTP 500) to a body its request model rejects: FastAPI's
    validation error, wrapped by its route handler as an internal server error."""
    message = (
        "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 1,"
        " 'typed-dict', 'content'), 'msg': 'Input should be a valid string', 'input': 42}"
    )
    return Reply(500, _error(message, type_="internal_server_error"))


@dataclass
class StrictLLMServer:
    """A running strict server (see the module docstring).

    Attributes:
        base_url: the API root to give a provider, ``http://127.0.0.1:<port>/v1``.
        requests: every request received, in order.
        quirks: whether llama-cpp-python's quirks are reproduced.
    """

    base_url: str
    quirks: bool = True
    requests: list[RecordedRequest] = field(default_factory=list)
    _script: list[Reply] = field(default_factory=list)
    _last: Reply = field(default_factory=text_reply)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)

    def script(self, *replies: Reply) -> None:
        """Queue `replies`, answered in order after those already queued."""
        self._script.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of :attr:`requests`."""
        return [request.body for request in self.requests]

    async def _chat_completions(self, request: Request) -> JSONResponse:
        try:
            body: Any = json.loads(await request.body())
        except ValueError:
            body = None
        status, answer, delay = self._answer(body)
        self.requests.append(
            RecordedRequest(
                body=body, status=status, authorization=request.headers.get("authorization")
            )
        )
        if delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
        return JSONResponse(answer, status_code=status)

    def _answer(self, body: Any) -> tuple[int, dict[str, Any], float]:
        problem = request_problem(body)
        if problem is not None:
            message, param = problem
            return 400, _error(message, type_="invalid_request_error", param=param), 0.0
        if self.quirks and _null_content_beside_tool_calls(body["messages"]):
            return 500, _error(NULL_CONTENT_500, type_="internal_server_error"), 0.0
        if self._script:
            self._last = self._script.pop(0)
        reply = self._last
        if self.quirks and reply.tool_calls and body.get("tools") and "tool_choice" not in body:
            # llama-cpp-python's function-calling format without tool_choice: no tool call,
            # the model writes the call out as text
            calls = [call["function"] for call in reply.tool_calls]
            reply = Reply(200, text_reply(json.dumps(calls)).body, reply.delay)
        return reply.status, reply.body, reply.delay


@contextlib.asynccontextmanager
async def strict_llm_server(*replies: Reply, quirks: bool = True) -> AsyncIterator[StrictLLMServer]:
    """Serve a :class:`StrictLLMServer` on 127.0.0.1 (a free port) for the duration of the
    block, scripted with `replies` (more with :meth:`StrictLLMServer.script`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = StrictLLMServer(base_url=f"http://127.0.0.1:{port}/v1", quirks=quirks)
    server.script(*replies)
    app = Starlette(
        routes=[Route("/v1/chat/completions", server._chat_completions, methods=["POST"])]
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    uvicorn_server = uvicorn.Server(config)
    task = asyncio.create_task(uvicorn_server.serve(sockets=[sock]))
    try:
        while not uvicorn_server.started:
            if task.done():
                task.result()  # raises what stopped it
                raise AssertionError("the strict LLM server stopped before it started")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server._stopping.set()
        uvicorn_server.should_exit = True
        await task
        sock.close()


# --- the request schema -------------------------------------------------------------------------


def request_problem(body: Any) -> tuple[str, str | None] | None:
    """The first way `body` breaks the Chat Completions request schema, as the error message
    and the parameter it concerns; None for a valid request."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request.", None
    for key in body:
        if key not in _KNOWN_PARAMETERS:
            return f"Unrecognized request argument supplied: {key}", key
    if body.get("stream"):
        return "This test server does not stream; send stream false or leave it out.", "stream"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter", "model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array.", "messages"
    problem = _messages_problem(messages)
    if problem is not None:
        return problem
    tools = body.get("tools")
    if tools is not None:
        problem = _tools_problem(tools)
        if problem is not None:
            return problem
    if "tool_choice" in body:
        problem = _tool_choice_problem(body["tool_choice"], tools)
        if problem is not None:
            return problem
    for key, low, high in (("temperature", 0, 2), ("top_p", 0, 1)):
        value = body.get(key)
        if value is not None and (not _is_number(value) or not low <= value <= high):
            return f"Invalid '{key}': expected a number from {low} to {high}.", key
    for key in ("max_tokens", "max_completion_tokens", "n"):
        value = body.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            return f"Invalid '{key}': expected an integer of at least 1.", key
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_content(value: Any) -> bool:
    """A string, or an array of content parts each with a ``type``."""
    if isinstance(value, str):
        return True
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in value)
    )


def _messages_problem(messages: list[Any]) -> tuple[str, str] | None:
    unanswered: list[str] = []  # calls of the last assistant message not yet answered
    called: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            return f"Invalid type for '{where}': expected an object.", where
        role = message.get("role")
        if role not in _ROLES:
            return (
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user',"
                " 'tool', and 'developer'.",
                f"{where}.role",
            )
        if unanswered and role != "tool":
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages"
                " responding to each 'tool_call_id'. The following tool_call_ids did not have"
                f" response messages: {', '.join(unanswered)}",
                f"{where}.role",
            )
        content = message.get("content")
        if role == "assistant":
            problem = _assistant_problem(message, where)
            if problem is not None:
                return problem
            unanswered = [call["id"] for call in message.get("tool_calls") or ()]
            called.update(unanswered)
            continue
        if not _is_content(content):
            return (
                f"Invalid type for '{where}.content': expected a string or an array of"
                " content parts.",
                f"{where}.content",
            )
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                return f"Missing required parameter: '{where}.tool_call_id'.", where
            if call_id not in called:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a"
                    " preceeding message with 'tool_calls'.",
                    f"{where}.role",
                )
            if call_id in unanswered:
                unanswered.remove(call_id)
    if unanswered:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages"
            " responding to each 'tool_call_id'. The following tool_call_ids did not have"
            f" response messages: {', '.join(unanswered)}",
            "messages",
        )
    return None


def _assistant_problem(message: dict[str, Any], where: str) -> tuple[str, str] | None:
    content = message.get("content")
    calls = message.get("tool_calls")
    if content is not None and not _is_content(content):
        return (
            f"Invalid type for '{where}.content': expected a string, an array of content"
            " parts, or null.",
            f"{where}.content",
        )
    if calls is None:
        if content is None:
            return (
                f"Invalid value for '{where}.content': expected a string, got null"
                " (content is required unless tool_calls is given).",
                f"{where}.content",
            )
        return None
    if not isinstance(calls, list) or not calls:
        return f"Invalid '{where}.tool_calls': expected a non-empty array.", f"{where}.tool_calls"
    for number, call in enumerate(calls):
        at = f"{where}.tool_calls[{number}]"
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            return f"Missing required parameter: '{at}.id'.", at
        if call.get("type") != "function":
            return f"Invalid value for '{at}.type': expected 'function'.", f"{at}.type"
        function = call.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"Missing required parameter: '{at}.function.name'.", f"{at}.function"
        if not isinstance(function.get("arguments"), str):
            return (
                f"Invalid type for '{at}.function.arguments': expected a string.",
                f"{at}.function.arguments",
            )
    return None


def _tools_problem(tools: Any) -> tuple[str, str] | None:
    if not isinstance(tools, list) or not tools:
        return "Invalid 'tools': expected a non-empty array.", "tools"
    for index, tool in enumerate(tools):
        at = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            return f"Invalid value for '{at}.type': expected 'function'.", f"{at}.type"
        function = tool.get("function")
        if not isinstance(function, dict):
            return f"Missing required parameter: '{at}.function'.", f"{at}.function"
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return (
                f"Invalid '{at}.function.name': string does not match pattern"
                " '^[a-zA-Z0-9_-]{1,64}$'.",
                f"{at}.function.name",
            )
        if "description" in function and not isinstance(function["description"], str):
            return (
                f"Invalid type for '{at}.function.description': expected a string.",
                f"{at}.function.description",
            )
        parameters = function.get("parameters")
        if parameters is not None and (
            not isinstance(parameters, dict) or parameters.get("type", "object") != "object"
        ):
            return (
                f"Invalid schema for function '{name}': schema must be a JSON Schema of"
                " 'type: \"object\"'.",
                f"{at}.function.parameters",
            )
    return None


def _tool_choice_problem(choice: Any, tools: Any) -> tuple[str, str] | None:
    if not tools:
        return (
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are"
            " specified.",
            "tool_choice",
        )
    if choice in ("none", "auto", "required"):
        return None
    if (
        isinstance(choice, dict)
        and choice.get("type") == "function"
        and isinstance(choice.get("function"), dict)
        and isinstance(choice["function"].get("name"), str)
    ):
        return None
    return (
        "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or"
        ' {"type": "function", "function": {"name": …}}.',
        "tool_choice",
    )


def _null_content_beside_tool_calls(messages: list[dict[str, Any]]) -> bool:
    return any(
        message["role"] == "assistant"
        and message.get("tool_calls")
        and "content" in message
        and message["content"] is None
        for message in messages
    )
