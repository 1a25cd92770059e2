"""How long a server asks us to wait: the ``Retry-After`` rule every HTTP client here reads.

The model providers (``skillweave.llm.retry``) and the sandbox manager's client
(``skillweave.sandbox.client``) both call :func:`parse_retry_after`, so a hostile or broken
header means the same on every seam: a wait of ``retry-after-ms`` milliseconds (OpenAI's),
else ``Retry-After`` as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), measured from the
answer's own ``Date`` when it has one so that clock skew cancels out. A date in the past means
"now" (0.0). Anything no clock can wait (negative, ``nan``, ``inf``, unreadable) is ignored
(None), and the caller falls back on its own default.

Pure (stdlib only), in the lowest layer, so every client can import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds the server asks to wait, from ``retry-after-ms`` or ``Retry-After``.

    Args:
        headers: the answer's headers (any mapping; names are matched case-insensitively).
        now: the moment an HTTP-date is measured from; by default the answer's ``Date``
            header, else the current time.

    Returns:
        Non-negative finite seconds, or None when the server did not say anything usable.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _seconds(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = lowered.get("retry-after", "").strip()
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    when = _http_date(value)
    if when is None:
        return None
    reference = now or _http_date(lowered.get("date", "")) or datetime.now(UTC)
    if reference.tzinfo is None:
        reference = reference.replace(tzinfo=UTC)
    return max(0.0, (when - reference).total_seconds())


def _seconds(value: str | None) -> float | None:
    """A non-negative finite number of seconds, else None (float() also reads "nan", "inf")."""
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return number


def _http_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when
