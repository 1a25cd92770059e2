"""Engines run agent jobs: the ``Engine`` protocol, the in-process ``DirectEngine``, the
``TemporalEngine`` client, and the ``AgentServices`` every engine's side effects go through
(the Temporal engine's activities wrap the same services).

Names are imported on first use (PEP 562): the workflow imports only the pure ``contract``
module, so importing this package must not pull in HTTP clients or stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.engines.base import Engine, JobRequest, JobResult, result_of
    from skillweave.engines.direct import DirectEngine, DirectRuntime
    from skillweave.engines.services import TOOL_SCHEMA_RUN_ID, AgentServices

_EXPORTS = {
    "TOOL_SCHEMA_RUN_ID": "services",
    "AgentServices": "services",
    "DirectEngine": "direct",
    "DirectRuntime": "direct",
    "Engine": "base",
    "JobRequest": "base",
    "JobResult": "base",
    "result_of": "base",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
