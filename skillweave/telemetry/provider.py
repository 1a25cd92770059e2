"""Whether tracing is on in this process, and the ``skillweave.*`` attributes of its current span.

The lowest piece of telemetry: :mod:`.context` sets the bound fields on the current span
through :func:`annotate` and :mod:`.tracing` asks :func:`active` before any span or header
work; both import it, it imports neither. The Temporal client asks :func:`active` too
(``skillweave.engines.temporal``: the SDK's tracing interceptor only when on).

Off, it costs nothing: the OpenTelemetry API is imported only once something has loaded it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Final

__all__ = ["ATTRIBUTE_PREFIX", "active", "annotate"]

ATTRIBUTE_PREFIX: Final = "skillweave."
"""What our span attributes and baggage keys start with (``skillweave.run_id``)."""


def active() -> bool:
    """Whether a tracer provider is installed (ours from :func:`skillweave.telemetry.tracing.
    setup`, or the embedder's)."""
    if "opentelemetry.trace" not in sys.modules:  # nothing can have installed one
        return False
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def annotate(fields: Mapping[str, str]) -> None:
    """Set `fields` on the current span as ``skillweave.<field>`` attributes (when tracing)."""
    if not fields or not active():
        return
    from opentelemetry import trace

    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes({ATTRIBUTE_PREFIX + k: v for k, v in fields.items()})
