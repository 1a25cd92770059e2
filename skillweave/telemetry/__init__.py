"""Telemetry shared by every process: the job fields logs and spans carry, and tracing.

- :mod:`.context`: ``bound(job_id=…, skill=…)`` binds the fields that identify what a piece of
  work is about (job id, execution id, skill, script) for the log lines and the span inside it.
- :mod:`.tracing`: OpenTelemetry tracing, configured by the standard ``OTEL_*`` variables and
  off (no provider, no interceptor, no header work) unless they ask for it.

Imports nothing above ``skillweave.config``.
"""

from skillweave.telemetry.context import FIELDS, bound, current_fields

__all__ = ["FIELDS", "bound", "current_fields"]
