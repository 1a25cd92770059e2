"""The ``OBSERVABILITY__`` section: log format, level and repeats, and the worker's metrics
port. Part of :class:`~skillweave.config.Settings`; ``skillweave.telemetry`` reads it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["ObservabilitySettings"]


class ObservabilitySettings(BaseModel):
    """Logs and metrics. Tracing is configured by the standard ``OTEL_*`` variables (see
    ``skillweave.telemetry``): off unless an exporter or endpoint is set."""

    log_format: Literal["text", "json"] = Field(
        default="text",
        description="text: one human line per record; json: one JSON object per line, with "
        "run_id, execution_id, skill and script when the record has them.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_repeat_seconds: float = Field(
        default=60.0,
        ge=0,
        description="A warning or error identical to one written less than this long ago is "
        "counted, not written; the count is written once the time is up (0: write every one).",
    )
    worker_metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="A worker serves Prometheus /metrics on this port (0: not served).",
    )
    worker_metrics_host: str = Field(
        default="127.0.0.1",
        description="The address the worker's /metrics (and the SDK's, when served) listens on.",
    )
    temporal_metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="A worker serves the Temporal SDK's own Prometheus metrics on this port, "
        "beside skillweave's: its cache of runs (temporal_sticky_cache_size, "
        "…_total_forced_eviction, …_hit, …_miss: each eviction is a replay to come), task "
        "slots and poll latencies (0: not served; docs/SCALING.md).",
    )
