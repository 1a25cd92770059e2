"""Engines run agent jobs: the ``Engine`` protocol, the in-process ``DirectEngine`` and the
``AgentServices`` every engine's side effects go through (the Temporal engine's activities
wrap the same services)."""

from skillweave.engines.base import Engine, JobRequest, JobResult
from skillweave.engines.direct import DirectEngine, DirectRuntime, result_of
from skillweave.engines.services import TOOL_SCHEMA_RUN_ID, AgentServices

__all__ = [
    "TOOL_SCHEMA_RUN_ID",
    "AgentServices",
    "DirectEngine",
    "DirectRuntime",
    "Engine",
    "JobRequest",
    "JobResult",
    "result_of",
]
