"""The id a run is known by at every door: one format, made in one place.

A run (what a user starts: ``skillweave run``, ``POST /v1/runs/``, ``skillweave demo``) gets
``run-YYYYmmdd-HHMMSS-<8 hex>``, the time in UTC: sortable by start time, unique enough for one
store and one Temporal namespace. The engines call it a job id (``JobRequest.job_id``); its
Temporal workflow id is ``skillweave-job-<run id>`` (``skillweave.agent.identity``), and its files
live under ``runs/<run id>/`` in the store. Called by the CLI's ``run`` and ``demo`` and by the
API's ``/v1/runs``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Final

__all__ = ["RUN_ID_PREFIX", "new_run_id"]

RUN_ID_PREFIX: Final = "run-"


def new_run_id() -> str:
    """A new run id: ``run-YYYYmmdd-HHMMSS-<8 hex>`` (UTC)."""
    return f"{RUN_ID_PREFIX}{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"
