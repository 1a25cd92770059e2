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
