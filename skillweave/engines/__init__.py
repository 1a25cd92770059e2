"""Engines run agent runs: the ``Engine`` protocol, the in-process ``DirectEngine``, the
``TemporalEngine`` client, and the ``AgentServices`` every engine's side effects go through
(the Temporal engine's activities wrap the same services).

Names are imported on first use (PEP 562): the workflow imports only the pure ``contract``
module, so importing this package must not pull in HTTP clients or stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.engines.base import Engine, RunRequest, RunResult, result_of
    from skillweave.engines.contract import (
        ROLL_CALL_ACTIVITY,
        SA_AGENT,
        SEARCH_ATTRIBUTES,
        ActivityTimeouts,
        Phase,
        Reply,
        RunView,
        activity_timeouts,
        store_task_queue,
    )
    from skillweave.engines.direct import DirectEngine, DirectRuntime, call_retrying
    from skillweave.engines.notes import FollowNote, note_line
    from skillweave.engines.retries import Backoff, Retry, classify, retry_notice
    from skillweave.engines.run_id import is_run_id, new_run_id
    from skillweave.engines.services import TOOL_SCHEMA_RUN_ID, AgentServices
    from skillweave.engines.skill_review import ModelSkillReviewer, skill_reviewer
    from skillweave.engines.transcript import TranscriptRecord, read_transcript_record
    from skillweave.engines.worker_metrics import WorkerMetrics, serve_worker_metrics

_EXPORTS = {
    "TOOL_SCHEMA_RUN_ID": "services",
    "AgentServices": "services",
    "DirectEngine": "direct",
    "DirectRuntime": "direct",
    "Engine": "base",
    "RunRequest": "base",
    "RunResult": "base",
    "result_of": "base",
    "TranscriptRecord": "transcript",
    "read_transcript_record": "transcript",
    "ActivityTimeouts": "contract",
    "Backoff": "retries",
    "FollowNote": "notes",
    "RunView": "contract",
    "Phase": "contract",
    "ROLL_CALL_ACTIVITY": "contract",
    "Reply": "contract",
    "Retry": "retries",
    "SEARCH_ATTRIBUTES": "contract",
    "ModelSkillReviewer": "skill_review",
    "WorkerMetrics": "worker_metrics",
    "activity_timeouts": "contract",
    "call_retrying": "direct",
    "classify": "retries",
    "is_run_id": "run_id",
    "new_run_id": "run_id",
    "note_line": "notes",
    "retry_notice": "retries",
    "serve_worker_metrics": "worker_metrics",
    "skill_reviewer": "skill_review",
    "store_task_queue": "contract",
    "SA_AGENT": "contract",
}

__all__ = [
    "ROLL_CALL_ACTIVITY",
    "SA_AGENT",
    "SEARCH_ATTRIBUTES",
    "TOOL_SCHEMA_RUN_ID",
    "ActivityTimeouts",
    "AgentServices",
    "Backoff",
    "DirectEngine",
    "DirectRuntime",
    "Engine",
    "FollowNote",
    "ModelSkillReviewer",
    "Phase",
    "Reply",
    "Retry",
    "RunRequest",
    "RunResult",
    "RunView",
    "TranscriptRecord",
    "WorkerMetrics",
    "activity_timeouts",
    "call_retrying",
    "classify",
    "is_run_id",
    "new_run_id",
    "note_line",
    "read_transcript_record",
    "result_of",
    "retry_notice",
    "serve_worker_metrics",
    "skill_reviewer",
    "store_task_queue",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
