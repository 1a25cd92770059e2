"""Telemetry shared by every process: the run fields logs and spans carry, and tracing.

- :mod:`.context`: ``bound(run_id=…, skill=…)`` binds the fields that identify what a piece of
  work is about (run id, execution id, skill, script) for the log lines and the span inside it.
- :mod:`.tracing`: OpenTelemetry tracing, configured by the standard ``OTEL_*`` variables and
  off (no provider, no interceptor, no header work) unless they ask for it.
- :mod:`.provider`: whether tracing is on, and the attributes of the current span; below both.
- :mod:`.logs` and :mod:`.masker`: the process's log lines, with the bound fields and without
  the secrets it knows.

Imports nothing above ``skillweave.config``.
"""

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.telemetry.masker import MIN_SECRET_CHARS, SecretMasker
    from skillweave.telemetry.tracing import TraceMiddleware, carried_fields, extract, inject, span

from skillweave.telemetry.context import FIELDS, bound, current_fields

__all__ = [
    "FIELDS",
    "MIN_SECRET_CHARS",
    "SecretMasker",
    "TraceMiddleware",
    "bound",
    "carried_fields",
    "current_fields",
    "extract",
    "inject",
    "span",
]


# Imported on first use (skillweave.lazy): the front stays cheap to import.
_EXPORTS: dict[str, str] = {
    "MIN_SECRET_CHARS": "masker",
    "SecretMasker": "masker",
    "TraceMiddleware": "tracing",
    "carried_fields": "tracing",
    "extract": "tracing",
    "inject": "tracing",
    "span": "tracing",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
