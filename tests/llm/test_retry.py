"""Retry classification: which failures may be retried, after how long, and the one-line
messages the errors carry."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from skillweave.llm.retry import (
    classify_status,
    error_from_response,
    error_from_transport,
    is_local_host,
    parse_retry_after,
)

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
REQUEST = httpx.Request("POST", "https://api.example.test/v1/chat/completions?x=1")


def answer(status: int, body: object = None, **kwargs: object) -> httpx.Response:
    if isinstance(body, dict):
        kwargs["json"] = body
    elif isinstance(body, str):
        kwargs["text"] = body
    return httpx.Response(status, request=REQUEST, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422, 301])
def test_client_errors_are_not_retryable(status: int) -> None:
    assert classify_status(status, {"Retry-After": "3"}) == (False, None)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_timeouts_conflicts_rate_limits_and_server_errors_are_retryable(status: int) -> None:
    assert classify_status(status, {}) == (True, None)


def test_retry_after_in_seconds() -> None:
    assert classify_status(429, {"Retry-After": "7"}) == (True, 7.0)
    assert classify_status(503, {"retry-after": " 1.5 "}) == (True, 1.5)


def test_retry_after_as_http_date_is_measured_from_now() -> None:
    headers = {"Retry-After": "Sat, 01 Mar 2025 12:00:30 GMT"}
    assert classify_status(503, headers, now=NOW) == (True, 30.0)


def test_retry_after_as_http_date_defaults_to_the_answers_date_header() -> None:
    headers = {
        "Retry-After": "Sat, 01 Mar 2025 12:01:00 GMT",
        "Date": "Sat, 01 Mar 2025 12:00:45 GMT",
    }
    assert classify_status(429, headers) == (True, 15.0)


def test_retry_after_date_in_the_past_means_now() -> None:
    headers = {"Retry-After": "Sat, 01 Mar 2025 11:59:00 GMT"}
    assert parse_retry_after(headers, now=NOW) == 0.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = httpx.Headers({"Retry-After": "2", "retry-after-ms": "250"})
    assert classify_status(429, headers) == (True, 0.25)


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", ""])
def test_unreadable_retry_after_is_ignored(value: str) -> None:
    assert classify_status(503, {"Retry-After": value}) == (True, None)


@pytest.mark.parametrize(
    ("status", "should_retry", "expected"),
    [(400, "true", True), (503, "false", False), (409, "FALSE", False), (500, "maybe", True)],
)
def test_x_should_retry_overrides_the_status(
    status: int, should_retry: str, expected: bool
) -> None:
    retryable, _ = classify_status(status, {"x-should-retry": should_retry})
    assert retryable is expected


def test_openai_error_body_gives_the_message() -> None:
    body = {
        "error": {
            "message": "Invalid value for 'messages'.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": None,
        }
    }
    error = error_from_response("openai:gpt-4o", answer(400, body))
    assert str(error) == "openai:gpt-4o: HTTP 400 Bad Request: Invalid value for 'messages'."
    assert (error.retryable, error.retry_after, error.status) == (False, None, 400)


def test_anthropic_error_body_gives_the_message_and_retry_after() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Number of requests has exceeded your rate limit.",
        },
    }
    error = error_from_response(
        "anthropic:claude", answer(429, body, headers={"retry-after": "12"})
    )
    assert str(error) == (
        "anthropic:claude: HTTP 429 Too Many Requests: "
        "Number of requests has exceeded your rate limit."
    )
    assert (error.retryable, error.retry_after, error.status) == (True, 12.0, 429)


def test_overloaded_is_retryable() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    error = error_from_response("anthropic:claude", answer(529, body))
    assert error.retryable
    assert str(error).endswith("HTTP 529: Overloaded")


@pytest.mark.parametrize(
    ("status", "hint"),
    [(401, "check MODEL__API_KEY"), (404, "check the model name and MODEL__BASE_URL")],
)
def test_auth_and_not_found_errors_say_what_to_check(status: int, hint: str) -> None:
    error = error_from_response("openai:gpt-4o", answer(status, {"error": {"message": "nope"}}))
    assert not error.retryable
    assert str(error).endswith(f": nope ({hint})")


def test_insufficient_quota_is_not_retried() -> None:
    body = {
        "error": {
            "message": "You exceeded your current quota.",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    error = error_from_response("openai:gpt-4o", answer(429, body, headers={"retry-after": "1"}))
    assert (error.retryable, error.retry_after) == (False, None)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"error": "model 'llama9' not found"}, "model 'llama9' not found"),
        ({"object": "error", "message": "bad input", "code": 400}, "bad input"),
        ({"detail": "Not Found"}, "Not Found"),
        (
            "<html>\n  <body>Bad   gateway</body>\n</html>",
            "<html> <body>Bad gateway</body> </html>",
        ),
        ({"error": {"code": 5}}, '{"error":{"code":5}}'),
    ],
)
def test_compatible_servers_error_shapes(body: object, detail: str) -> None:
    error = error_from_response("openai:local", answer(502, body))
    assert str(error) == f"openai:local: HTTP 502 Bad Gateway: {detail}"


def test_long_bodies_are_truncated_to_one_line() -> None:
    error = error_from_response("openai:x", answer(500, "boom\n" * 1000))
    message = str(error)
    assert "\n" not in message
    assert len(message) < 400
    assert message.endswith("…")


def test_an_echoed_credential_is_masked() -> None:
    request = httpx.Request(
        "POST", "https://api.example.test/v1/messages", headers={"x-api-key": "sk-ant-SECRET123"}
    )
    body = {"error": {"message": "invalid x-api-key: sk-ant-SECRET123"}}
    response = httpx.Response(401, json=body, request=request)
    message = str(error_from_response("anthropic:claude", response))
    assert "SECRET123" not in message
    assert "invalid x-api-key: ***" in message


def test_a_response_without_request_still_gives_an_error() -> None:
    error = error_from_response(
        "openai:x", httpx.Response(503, json={"error": {"message": "down"}})
    )
    assert error.retryable
    assert str(error) == "openai:x: HTTP 503 Service Unavailable: down"


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("[Errno 111] Connection refused", request=REQUEST),
        httpx.ReadTimeout("timed out", request=REQUEST),
        httpx.RemoteProtocolError("peer closed connection", request=REQUEST),
        httpx.ConnectTimeout("timed out", request=REQUEST),
    ],
)
def test_transport_errors_are_retryable(exc: httpx.TransportError) -> None:
    error = error_from_transport("openai:gpt-4o", exc)
    assert (error.retryable, error.status) == (True, None)
    message = str(error)
    assert message.startswith("openai:gpt-4o: ")
    assert "https://api.example.test/v1/chat/completions" in message
    assert "x=1" not in message  # the query string stays out of messages


def test_timeout_message_says_it_timed_out() -> None:
    error = error_from_transport("anthropic:c", httpx.ReadTimeout("", request=REQUEST))
    assert "did not answer in time (ReadTimeout)" in str(error)


def test_an_unsupported_url_scheme_is_not_retryable() -> None:
    error = error_from_transport(
        "openai:x", httpx.UnsupportedProtocol("Request URL has an unsupported protocol 'ftp://'.")
    )
    assert not error.retryable
    assert "unsupported protocol" in str(error)


def test_error_bodies_are_read_as_json_not_by_content_type() -> None:
    response = httpx.Response(
        400,
        content=json.dumps({"error": {"message": "plain text type"}}).encode(),
        headers={"content-type": "text/plain"},
        request=REQUEST,
    )
    assert str(error_from_response("p", response)).endswith(": plain text type")


# --- errors that never succeed on retry --------------------------------------------------------

# Real error bodies of OpenAI-compatible servers (see the signs in skillweave.llm.retry).
LLAMA_CPP_PYTHON_VALIDATION = {
    "error": {
        "message": "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 2,"
        " 'typed-dict', 'content'), 'msg': 'Input should be a valid string', 'input': None}",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}
LLAMA_CPP_PYTHON_NULL_CONTENT = {
    "error": {
        "message": 'can only concatenate str (not "NoneType") to str',
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}
LLAMA_SERVER_PARSE = {
    "error": {
        "code": 500,
        "message": "Failed to parse messages: Expected 'content' (ref: https://github.com/"
        'ggml-org/llama.cpp/issues/8367); messages = [{"role": "assistant"}]',
        "type": "server_error",
    }
}
LLAMA_SERVER_TEMPLATE = {
    "error": {
        "code": 500,
        "message": "Cannot pass both content and thinking in an assistant message with tool"
        ' calls! at row 290, column 178:\n {{- raise_exception("Cannot pass both") }}',
        "type": "server_error",
    }
}


@pytest.mark.parametrize(
    "body",
    [
        LLAMA_CPP_PYTHON_VALIDATION,
        LLAMA_CPP_PYTHON_NULL_CONTENT,
        LLAMA_SERVER_PARSE,
        LLAMA_SERVER_TEMPLATE,
        {"error": {"message": "Invalid request", "type": "invalid_request_error"}},
        {"object": "error", "message": "bad tools", "type": "BadRequestError", "code": 400},
    ],
)
@pytest.mark.parametrize("status", [500, 502])
def test_a_5xx_that_says_the_request_is_invalid_is_not_retried(status: int, body: object) -> None:
    error = error_from_response("openai:local", answer(status, body, headers={"retry-after": "1"}))
    assert (error.retryable, error.retry_after, error.status) == (False, None, status)
    assert str(error).startswith(f"openai:local: HTTP {status}")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            500,
            {
                "error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error",
                }
            },
        ),
        (503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
        (
            500,
            {"object": "error", "message": "", "type": "InternalServerError", "code": 500},
        ),
        # llama-cpp-python's own answer failed its response model: not the request's fault
        (
            500,
            {
                "error": {
                    "message": "1 validation error:\n  {'type': 'missing', 'loc': ('response',"
                    " 'CreateChatCompletionResponse', 'choices', 0, 'message', 'refusal')}",
                    "type": "internal_server_error",
                }
            },
        ),
        (502, "<html><body>502 Bad Gateway</body></html>"),
    ],
)
def test_other_server_errors_stay_retryable(status: int, body: object) -> None:
    assert error_from_response("openai:local", answer(status, body)).retryable


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # OpenAI, llama-cpp-python (and vLLM, with code 400)
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 2048 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        ),
        # a proxy in front of vLLM that answered 500 (kserve/kserve#3886)
        (
            500,
            {
                "error": {
                    "code": "500",
                    "message": "This model's maximum context length is 8192 tokens. However,"
                    " you requested 50014 tokens (14 in the messages, 50000 in the completion).",
                    "type": "OpenAIError",
                }
            },
        ),
        # llama.cpp's llama-server
        (
            500,
            {
                "error": {
                    "code": 500,
                    "message": "request (4476 tokens) exceeds the available context size"
                    " (4096 tokens)",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 4476,
                    "n_ctx": 4096,
                }
            },
        ),
        (503, {"error": {"message": "the request exceeds the available context size"}}),
        # Ollama's runner, and llama-cpp-python's own text
        (500, {"error": "input exceeds context length"}),
        (500, {"error": {"message": "Requested tokens (3000) exceed context window of 2048"}}),
    ],
)
def test_context_length_errors_are_never_retried(status: int, body: object) -> None:
    headers = {"x-should-retry": "true", "retry-after": "1"}
    error = error_from_response("openai:local", answer(status, body, headers=headers))
    assert (error.retryable, error.retry_after) == (False, None)


# --- timeouts against local servers ------------------------------------------------------------

LOCAL_HOSTS = [
    "127.0.0.1",
    "127.8.9.10",
    "localhost",
    "llm.localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.20",
    "169.254.10.10",
    "[fe80::1]",
    "[fd12:3456::1]",
]
PUBLIC_HOSTS = ["api.openai.com", "8.8.8.8", "172.32.0.1", "100.64.0.1", "[2001:4860::8888]"]


def _timeout(exc_type: type[httpx.TimeoutException], host: str) -> httpx.TimeoutException:
    request = httpx.Request("POST", f"http://{host}:8080/v1/chat/completions")
    return exc_type("timed out", request=request)


@pytest.mark.parametrize("host", LOCAL_HOSTS)
@pytest.mark.parametrize("exc_type", [httpx.ReadTimeout, httpx.WriteTimeout])
def test_a_timeout_against_a_local_server_is_not_retried(
    exc_type: type[httpx.TimeoutException], host: str
) -> None:
    error = error_from_transport("openai:local", _timeout(exc_type, host))
    assert not error.retryable
    message = str(error)
    assert "\n" not in message
    assert f"did not answer in time ({exc_type.__name__})" in message
    assert "queue behind it" in message
    assert "MODEL__TIMEOUT_SECONDS" in message


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_a_timeout_against_a_public_host_is_retried(host: str) -> None:
    error = error_from_transport("openai:gpt-4o", _timeout(httpx.ReadTimeout, host))
    assert error.retryable
    assert "MODEL__TIMEOUT_SECONDS" not in str(error)


@pytest.mark.parametrize("exc_type", [httpx.ConnectTimeout, httpx.PoolTimeout])
def test_a_timeout_before_the_request_was_sent_is_retried_even_locally(
    exc_type: type[httpx.TimeoutException],
) -> None:
    assert error_from_transport("openai:local", _timeout(exc_type, "127.0.0.1")).retryable


@pytest.mark.parametrize(
    ("host", "local"), [*((h.strip("[]"), True) for h in LOCAL_HOSTS), ("example.com", False)]
)
def test_is_local_host(host: str, local: bool) -> None:
    assert is_local_host(host) is local
