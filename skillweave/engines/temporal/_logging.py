"""How much the Temporal SDK says, in which lines, and whether it serves its own metrics:
:func:`configure_logging`.

Called once, before the first client is made, by the CLI commands that talk to Temporal
(``skillweave worker``, ``dev``, ``run``, ``runs``, ``demo``, ``api``). The SDK's metrics (its
cache of runs, task slots, polls) live in its Rust core, apart from skillweave's own
(``skillweave.engines.worker_metrics``): a worker serves them on
``OBSERVABILITY__TEMPORAL_METRICS_PORT`` (:func:`sdk_metrics_address`).
"""

from __future__ import annotations

import logging

from temporalio.exceptions import ApplicationError
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    PrometheusConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

from skillweave.config import ObservabilitySettings
from skillweave.errors import ConfigError

__all__ = ["configure_logging", "sdk_metrics_address"]


def sdk_metrics_address(settings: ObservabilitySettings) -> str | None:
    """Where a worker serves the SDK's Prometheus metrics (``HOST:PORT``); None: not served."""
    if not settings.temporal_metrics_port:
        return None
    return f"{settings.worker_metrics_host}:{settings.temporal_metrics_port}"


def configure_logging(*, verbose: bool, metrics_address: str | None = None) -> None:
    """How much the Temporal SDK says; call before the first client is made.

    A worker (``skillweave worker``, ``skillweave dev``) reports warnings, such as an activity
    that failed and will be retried, and its SDK Core's records are forwarded to the
    ``temporalio.core`` logger, so they reach the process's handler (installed by
    :func:`skillweave.telemetry.logs.configure_logging`) in its format, instead of Core's own
    lines on stderr. A command that only runs or reads a run shows errors only, since the
    run's own events say what happened. With `metrics_address` (:func:`sdk_metrics_address`)
    the SDK serves its Prometheus metrics there.

    Raises:
        ConfigError: the SDK cannot serve its metrics at `metrics_address` (a busy port).
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
    metrics = PrometheusConfig(bind_address=metrics_address) if metrics_address else None
    try:
        runtime = Runtime(
            telemetry=TelemetryConfig(
                logging=LoggingConfig(
                    filter=TelemetryFilter(core_level=core, other_level="ERROR"),
                    forwarding=forwarding,
                ),
                metrics=metrics,
            )
        )
    except ValueError as exc:  # the exporter could not bind
        raise ConfigError(
            f"OBSERVABILITY__TEMPORAL_METRICS_PORT: cannot serve the SDK's metrics at "
            f"{metrics_address} ({exc}): choose a free port, or 0 to serve none"
        ) from None
    Runtime.set_default(runtime, error_if_already_set=False)


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
