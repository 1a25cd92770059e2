"""Engines run agent jobs: the ``Engine`` protocol, the in-process ``DirectEngine``, the
``TemporalEngine`` client, and the ``AgentServices`` every engine's side effects go through
(the Temporal engine's activities wrap the same services).

Names are imported on first use (PEP 562): the workflow imports only the pure ``contract``
module, so importing this package must not pull in HTTP clients or stores.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillweave.engines.base import Engine, JobRequest, JobResult, result_of
    from skillweave.engines.direct import DirectEngine, DirectRuntime
    from skillweave.engines.services import TOOL_SCHEMA_RUN_ID, AgentServices

_EXPORTS = {
    "TOOL_SCHEMA_RUN_ID": "skillweave.engines.services",
    "AgentServices": "skillweave.engines.services",
    "DirectEngine": "skillweave.engines.direct",
    "DirectRuntime": "skillweave.engines.direct",
    "Engine": "skillweave.engines.base",
    "JobRequest": "skillweave.engines.base",
    "JobResult": "skillweave.engines.base",
    "result_of": "skillweave.engines.base",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
