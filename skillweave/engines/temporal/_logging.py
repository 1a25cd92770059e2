"""How much the Temporal SDK says, and in which lines: :func:`configure_logging`.

Called once, before the first client is made, by the CLI commands that talk to Temporal
(``skillweave worker``, ``dev``, ``run``, ``runs``, ``demo``, ``api``).
"""

from __future__ import annotations

import logging

from temporalio.exceptions import ApplicationError
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

__all__ = ["configure_logging"]


def configure_logging(*, verbose: bool) -> None:
    """How much the Temporal SDK says; call before the first client is made.

    A worker (``skillweave worker``, ``skillweave dev``) reports warnings, such as an activity
    that failed and will be retried, and its SDK Core's records are forwarded to the
    ``temporalio.core`` logger, so they reach the process's handler (installed by
    :func:`skillweave.telemetry.logs.configure_logging`) in its format, instead of Core's own
    lines on stderr. A command that only runs or reads a run shows errors only, since the
    run's own events say what happened.
    """
    level = logging.WARNING if verbose else logging.ERROR
    logging.getLogger("temporalio").setLevel(level)
    activities = logging.getLogger("temporalio.activity")
    if _one_line_failures not in activities.filters:
        activities.addFilter(_one_line_failures)
    core = "WARN" if verbose else "ERROR"
    forwarding = (
        LogForwardingConfig(logger=logging.getLogger("temporalio.core")) if verbose else None
    )
    Runtime.set_default(
        Runtime(
            telemetry=TelemetryConfig(
                logging=LoggingConfig(
                    filter=TelemetryFilter(core_level=core, other_level="ERROR"),
                    forwarding=forwarding,
                )
            )
        ),
        error_if_already_set=False,
    )


def _one_line_failures(record: logging.LogRecord) -> bool:
    """An activity failure the SDK logs ("Completing activity as failed") is one line when
    the activities made it an ``ApplicationError`` (``activities.failures``: its message is the
    cause in one line, its traceback already at DEBUG); anything else keeps its traceback."""
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, ApplicationError):
        kind = f"{error.type}: " if error.type else ""
        retry = "not retryable" if error.non_retryable else "retryable"
        record.msg = f"{record.getMessage()}: {kind}{error.message} ({retry})"
        record.args = None
        record.exc_info = None
        record.exc_text = None
    return True
