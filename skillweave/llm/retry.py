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
- The wait the server asks for is read by the one ``Retry-After`` rule
  (:func:`skillweave.retry_after.parse_retry_after`: ``retry-after-ms`` or ``Retry-After`` as
  delta-seconds or an HTTP-date measured from the answer's own ``Date``).
- Connection failures and timeouts are retryable (a URL scheme httpx cannot speak is not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import httpx

from skillweave.errors import ModelError
from skillweave.retry_after import parse_retry_after

__all__ = [
    "classify_status",
    "error_from_response",
    "error_from_transport",
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

    The API's message is read from ``{"error": {"message": ...}}`` (OpenAI and Anthropic), or
    ``{"error": "..."}`` / ``{"message": ...}`` / ``{"detail": ...}`` (OpenAI-compatible servers),
    else the start of the body. Credentials sent with the request are masked should the API
    echo them.
    """
    status = response.status_code
    retryable, retry_after = classify_status(status, response.headers)
    detail, code = _api_error(response)
    if status == 429 and code in _PERMANENT_429_CODES:
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
    """The retryable :class:`ModelError` for a call that got no answer (connection refused or
    reset, DNS failure, timeout, broken HTTP).

    The one exception is a URL scheme httpx cannot speak (``UnsupportedProtocol``): that is a
    configuration mistake no retry will fix.
    """
    target = ""
    try:
        url = exc.request.url
        target = f" at {url.copy_with(query=None)}"
    except RuntimeError:  # an error raised without a request attached
        pass
    if isinstance(exc, httpx.TimeoutException):
        what = f"the API{target} did not answer in time ({type(exc).__name__})"
    else:
        reason = _one_line(str(exc)) or type(exc).__name__
        what = f"cannot reach the API{target}: {reason}"
    retryable = not isinstance(exc, httpx.UnsupportedProtocol)
    return ModelError(f"{provider}: {what}", retryable=retryable)


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
