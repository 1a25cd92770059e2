"""Telemetry shared by every process: the job fields logs and spans carry, and tracing.

- :mod:`.context`: ``bound(job_id=…, skill=…)`` binds the fields that identify what a piece of
  work is about (job id, execution id, skill, script) for the log lines and the span inside it.
- :mod:`.tracing`: OpenTelemetry tracing, configured by the standard ``OTEL_*`` variables and
  off (no provider, no interceptor, no header work) unless they ask for it.
- :mod:`.provider`: whether tracing is on, and the attributes of the current span; below both.
- :mod:`.logs` and :mod:`.masker`: the process's log lines, with the bound fields and without
  the secrets it knows.

Imports nothing above ``skillweave.config``.
"""

from skillweave.telemetry.context import FIELDS, bound, current_fields

__all__ = ["FIELDS", "bound", "current_fields"]
