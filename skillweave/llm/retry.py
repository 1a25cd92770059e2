"""Whether a failed model call may be retried, and the :class:`ModelError` that says so.

This module is the one place retryability of a model call is decided. Providers call
:func:`error_from_response` for every non-2xx answer and :func:`error_from_transport` when no
answer came; they never retry on their own. The activity boundary (or the direct engine) reads
``ModelError.retryable`` and ``ModelError.retry_after`` and owns the retry loop, so a call is
retried by exactly one party.

Rules:

- HTTP 408, 409, 429 and 5xx are retryable; every other status is not. A server that says
  ``x-should-retry: true|false`` (OpenAI and Anthropic both send it) overrides the status, as
  their official SDKs do. A 429 whose body says ``insufficient_quota`` is not retryable: the
  account is out of credit and waiting will not help.
- A 5xx whose body says the request itself is invalid is not retryable: the same request
  fails the same way. OpenAI-compatible servers answer 500 for some bad requests (see
  :data:`INVALID_REQUEST_SIGNS`: llama-cpp-python turns every exception, its own request
  validation included, into a 500; llama.cpp's ``llama-server`` did so before it learned 400).
- A context-length error is not retryable, whatever its status (see
  :data:`CONTEXT_LENGTH_SIGNS`): the conversation only grows. These two body rules win over
  ``x-should-retry: true``.
- The wait the server asks for is read by the one ``Retry-After`` rule
  (:func:`skillweave.retry_after.parse_retry_after`: ``retry-after-ms`` or ``Retry-After`` as
  delta-seconds or an HTTP-date measured from the answer's own ``Date``).
- Connection failures and timeouts are retryable, with two exceptions: a URL scheme httpx
  cannot speak (a configuration mistake), and a read or write timeout against a server at
  ``localhost`` or a loopback, private or link-local address (:func:`is_local_host`). Such a
  server (llama.cpp, llama-cpp-python, Ollama on a laptop) typically runs one generation at a
  time and goes on generating after the client gave up, so a retry only queues behind it; the
  message says to raise ``MODEL__TIMEOUT_SECONDS`` instead.

The signs are looked for in the API's error message and the start of the body; each was taken
from a server's source or issue tracker, named beside it.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import httpx

from skillweave.errors import ModelError
from skillweave.retry_after import parse_retry_after

__all__ = [
    "CONTEXT_LENGTH_SIGNS",
    "INVALID_REQUEST_SIGNS",
    "LOCAL_NETWORKS",
    "classify_status",
    "error_from_response",
    "error_from_transport",
    "is_local_host",
    "parse_retry_after",
]

RETRYABLE_STATUSES: Final = frozenset({408, 409, 429})
"""Client-error statuses worth retrying; every 5xx is retryable too."""

MAX_DETAIL_CHARS: Final = 300
"""How much of the API's error text goes into the one-line message."""

_MAX_BODY_SCAN: Final = 4_000
_SECRET_HEADERS: Final = ("authorization", "x-api-key", "api-key")
_HINTS: Final = {
    401: "check MODEL__API_KEY",
    403: "check MODEL__API_KEY and the model's access rights",
    404: "check the model name and MODEL__BASE_URL",
}
_PERMANENT_429_CODES: Final = frozenset({"insufficient_quota"})

CONTEXT_LENGTH_SIGNS: Final = re.compile(
    "|".join(
        (
            # OpenAI's error code; llama-cpp-python sends it too (server/errors.py)
            r"context_length_exceeded",
            # OpenAI, vLLM and llama-cpp-python: "This model's maximum context length is N tokens"
            r"maximum context length",
            # llama.cpp's llama-server: type exceed_context_size_error, "request (N tokens)
            # exceeds the available context size (M tokens)", and the body's "n_ctx" field
            r"exceed_context_size_error",
            r"\bn_ctx\b",
            # "exceeds the available context size" (llama-server), "input exceeds context
            # length" (Ollama), "Requested tokens (N) exceed context window of M"
            # (llama-cpp-python), "exceeds the context window"
            r"exceeds? (?:the )?(?:available |maximum |model'?s )?context"
            r" (?:length|size|window)",
            r"context length exceeded",
            # Anthropic: "prompt is too long: N tokens > M maximum"
            r"prompt is too long",
        )
    ),
    re.IGNORECASE,
)
"""Texts by which servers say the conversation no longer fits the model's context window."""

INVALID_REQUEST_SIGNS: Final = re.compile(
    "|".join(
        (
            # an error type or message that says so: OpenAI's and llama.cpp's type
            # invalid_request_error, vLLM's BadRequestError and "Bad Request" (the type of its
            # validation errors), and a proxy's 500 that quotes its upstream's "400 Bad Request"
            r"invalid[ _]request",
            r"BadRequestError",
            r"\bBad Request\b",
            # FastAPI's request validation error, which llama-cpp-python's route handler
            # answers with 500: "1 validation error: {'type': …, 'loc': ('body', 'messages', …"
            r"validation errors?:.*'loc': \('body'",
            # llama.cpp's common/chat.cpp, answered with 500 by llama-server before it split
            # invalid_argument (400) from other exceptions: "Failed to parse messages: …",
            # "Failed to parse tools: …", "Expected 'content' (ref: …)", "Invalid 'content'
            # type: …"
            r"Failed to parse (?:messages|tools)",
            r"Expected 'content'",
            r"Invalid 'content' type",
            # a chat template that refuses the conversation (llama-server quotes the
            # template's raise_exception call in its 500, ggml-org/llama.cpp#17040) or cannot
            # render a null content (Python's Jinja under llama-cpp-python:
            # 'can only concatenate str (not "NoneType") to str', langchain-ai/langgraph#1122)
            r"raise_exception",
            r'can only concatenate str \(not "NoneType"\)',
        )
    ),
    re.IGNORECASE | re.DOTALL,
)
"""Texts by which a server answering 5xx says the request itself is at fault."""

LOCAL_NETWORKS: Final = tuple(
    ipaddress.ip_network(network)
    for network in (
        "127.0.0.0/8",  # loopback
        "::1/128",
        "10.0.0.0/8",  # RFC 1918
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",  # link-local
        "fe80::/10",
        "fc00::/7",  # IPv6 unique-local, the RFC 1918 of IPv6
    )
)
"""Where a model server counts as local (:func:`is_local_host`)."""

_LOCAL_TIMEOUT_HINT: Final = (
    "not retried: a local server usually runs one request at a time and keeps generating, so a"
    " retry would queue behind it; raise MODEL__TIMEOUT_SECONDS if the model needs longer"
)


def classify_status(
    status: int, headers: Mapping[str, str], *, now: datetime | None = None
) -> tuple[bool, float | None]:
    """Whether a call that got HTTP `status` may be retried, and after how many seconds.

    Args:
        status: the HTTP status of the answer.
        headers: its headers (any mapping; names are matched case-insensitively).
        now: the moment an HTTP-date ``Retry-After`` is measured from; by default the answer's
            ``Date`` header, else the current time.

    Returns:
        ``(retryable, retry_after)``; ``retry_after`` is None when the call is not retryable or
        the server did not say (or said something unreadable).
    """
    lowered = _lowercase(headers)
    retryable = status in RETRYABLE_STATUSES or 500 <= status <= 599
    should_retry = lowered.get("x-should-retry", "").strip().lower()
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    if not retryable:
        return False, None
    return True, parse_retry_after(lowered, now=now)


def error_from_response(provider: str, response: httpx.Response) -> ModelError:
    """The :class:`ModelError` for a non-2xx answer: one line naming `provider`, the status and
    the API's own error message, with ``retryable``, ``retry_after`` and ``status`` set.

    Retryability is :func:`classify_status`'s, unless the body says the call can never succeed
    (``insufficient_quota``, a context-length error, a 5xx for an invalid request: see the
    module docstring). The API's message is read from ``{"error": {"message": ...}}`` (OpenAI
    and Anthropic), or ``{"error": "..."}`` / ``{"message": ...}`` / ``{"detail": ...}``
    (OpenAI-compatible servers), else the start of the body. Credentials sent with the request
    are masked should the API echo them.
    """
    status = response.status_code
    retryable, retry_after = classify_status(status, response.headers)
    detail, code = _api_error(response)
    if retryable and _never_succeeds(status, detail, code, response):
        retryable, retry_after = False, None
    detail = _truncate(_mask_secrets(detail, response))
    reason = response.reason_phrase or ""
    message = f"{provider}: HTTP {status}{' ' + reason if reason else ''}"
    if detail:
        message += f": {detail}"
    if hint := _HINTS.get(status):
        message += f" ({hint})"
    return ModelError(message, retryable=retryable, retry_after=retry_after, status=status)


def error_from_transport(provider: str, exc: httpx.TransportError) -> ModelError:
    """The :class:`ModelError` for a call that got no answer (connection refused or reset, DNS
    failure, timeout, broken HTTP): retryable, with two exceptions.

    A URL scheme httpx cannot speak (``UnsupportedProtocol``) is a configuration mistake no
    retry will fix. A read or write timeout against a local server (:func:`is_local_host`) is
    not retried either, and its message says why and names ``MODEL__TIMEOUT_SECONDS``: the
    request reached the server, which goes on generating, and a retry would wait behind it.
    (A connect or pool timeout sent nothing, so nothing runs on the server: those stay
    retryable.)
    """
    target = ""
    host = ""
    try:
        url = exc.request.url
        target = f" at {url.copy_with(query=None)}"
        host = url.host
    except RuntimeError:  # an error raised without a request attached
        pass
    retryable = not isinstance(exc, httpx.UnsupportedProtocol)
    if isinstance(exc, httpx.TimeoutException):
        what = f"the API{target} did not answer in time ({type(exc).__name__})"
        if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout) and is_local_host(host):
            what += f"; {_LOCAL_TIMEOUT_HINT}"
            retryable = False
    else:
        reason = _one_line(str(exc)) or type(exc).__name__
        what = f"cannot reach the API{target}: {reason}"
    return ModelError(f"{provider}: {what}", retryable=retryable)


def is_local_host(host: str) -> bool:
    """Whether `host` (a URL's host) names this machine or a private network: ``localhost``
    (and ``*.localhost``) or an address in :data:`LOCAL_NETWORKS`. Other names are not
    resolved: a name is taken as public."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in LOCAL_NETWORKS)


def _never_succeeds(status: int, detail: str, code: str | None, response: httpx.Response) -> bool:
    """Whether a failure the status calls retryable will fail the same way on every retry.

    The signs are looked for in the API's message as decoded (JSON escapes quotes) and in the
    raw body (which holds the error's type and other fields)."""
    if status == 429 and code in _PERMANENT_429_CODES:
        return True
    text = f"{detail}\n{response.text[:_MAX_BODY_SCAN]}"
    if CONTEXT_LENGTH_SIGNS.search(text):
        return True
    return 500 <= status <= 599 and INVALID_REQUEST_SIGNS.search(text) is not None


def _lowercase(headers: Mapping[str, str]) -> dict[str, str]:
    return {key.lower(): value for key, value in headers.items()}


def _api_error(response: httpx.Response) -> tuple[str, str | None]:
    """The API's error message and code (``code`` or ``type``) from the body, if it has them;
    else the start of the body, on one line."""
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            message = error.get("message")
            code = error.get("code") or error.get("type")
            if isinstance(message, str) and message.strip():
                return _one_line(message), code if isinstance(code, str) else None
        if isinstance(error, str) and error.strip():
            return _one_line(error), None
        for key in ("message", "detail"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value), None
    return _one_line(response.text[:_MAX_BODY_SCAN]), None


def _mask_secrets(text: str, response: httpx.Response) -> str:
    try:
        headers = response.request.headers
    except RuntimeError:  # a response built without its request
        return text
    for name in _SECRET_HEADERS:
        value = headers.get(name, "")
        secret = value.removeprefix("Bearer ").strip()
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _truncate(text: str) -> str:
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[: MAX_DETAIL_CHARS - 1] + "…"
