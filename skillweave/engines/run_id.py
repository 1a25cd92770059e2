"""The id a run is known by at every door: one format, made in one place.

A run (what a user starts: ``skillweave run``, ``POST /v1/runs/``, ``skillweave demo``) gets
``run-YYYYmmdd-HHMMSS-<8 hex>``, the time in UTC: sortable by start time, unique enough for one
store and one Temporal namespace. The engines call it a run id (``RunRequest.run_id``); its
Temporal workflow id is ``skillweave-run-<run id>`` (``skillweave.agent.idempotency``), and its
files live under ``runs/<run id>/`` in the store. Called by the CLI's ``run`` and ``demo`` and by
the API's ``/v1/runs``.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Final

__all__ = ["RUN_ID_PREFIX", "is_run_id", "new_run_id"]

RUN_ID_PREFIX: Final = "run-"


def new_run_id() -> str:
    """A new run id: ``run-YYYYmmdd-HHMMSS-<8 hex>`` (UTC)."""
    return f"{RUN_ID_PREFIX}{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


_RUN_ID: Final = re.compile(r"[A-Za-z0-9._-]{1,200}")
"""What ``RunRequest.run_id`` takes: also a key segment and a Temporal workflow id's tail."""


def is_run_id(value: str) -> bool:
    """Whether `value` can be a run's id (of any door, also older ``run-…`` ones): letters,
    digits, ``.``, ``_`` and ``-``, at most 200, and not only dots (a path's ``.``/``..``)."""
    return _RUN_ID.fullmatch(value) is not None and value.strip(".") != ""
