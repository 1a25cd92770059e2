"""The one Retry-After rule (``skillweave.retry_after``), read by the model providers and the
sandbox manager's client alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillweave.llm import retry as model_retry
from skillweave.retry_after import parse_retry_after
from skillweave.sandbox import client as sandbox_client

NOW = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": " 2.5 "}, 2.5),
        ({"Retry-After-Ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "Thu, 26 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Thu, 26 Nov 2026 11:00:00 GMT"}, 0.0),
        ({}, None),
        ({"Retry-After": ""}, None),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-5"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "1e999"}, None),
        ({"Retry-After-Ms": "nan", "Retry-After": "3"}, 3.0),
    ],
)
def test_what_a_server_may_say(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == seconds


def test_both_clients_read_it_from_the_one_module() -> None:
    assert model_retry.parse_retry_after is parse_retry_after
    assert sandbox_client.parse_retry_after is parse_retry_after
