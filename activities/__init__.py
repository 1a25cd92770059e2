"""Temporal activities: the side effects workflows schedule, run by the worker.

:class:`AgentActivities` wraps ``AgentServices`` for the agent workflow; :mod:`activities.errors`
is the one place skillweave's errors become Temporal ``ApplicationError``s (and decides which
are retried).
"""

from activities.agent import AgentActivities, execution_key
from activities.errors import application_error, raises_application_errors, retry_of

__all__ = [
    "AgentActivities",
    "application_error",
    "execution_key",
    "raises_application_errors",
    "retry_of",
]
