"""Temporal activities: the side effects workflows schedule, run by the worker.

:class:`AgentActivities` wraps ``AgentServices`` for the agent workflow, :class:`EvalActivities`
``EvalServices`` for the eval batch workflow (both heartbeat with :mod:`activities.heartbeats`);
:mod:`activities.failures` is the one place skillweave's errors become Temporal
``ApplicationError``s (the decision which are retried is ``skillweave.engines.retries``, shared
with the direct engine).
"""

from activities.agent import AgentActivities, checked_execution_key
from activities.evals import EvalActivities
from activities.failures import application_error, raises_application_errors

__all__ = [
    "AgentActivities",
    "EvalActivities",
    "application_error",
    "checked_execution_key",
    "raises_application_errors",
]
