"""OpenTelemetry tracing: API → workflow → activities → MCP manager → sandbox executor.

Configured the standard way, by environment: tracing is on when ``OTEL_TRACES_EXPORTER`` names
an exporter (``otlp``, ``console``; ``none`` is off) or an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), unless
``OTEL_SDK_DISABLED=true``. ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES`` and the OTLP
exporter's own variables (headers, timeout, protocol over HTTP) apply as documented by
OpenTelemetry. A process that embeds skillweave may install its own tracer provider instead;
whatever provider is installed is used.

Off, it costs nothing measurable: no provider is made, the OpenTelemetry SDK is not imported,
the Temporal client gets no interceptor, no header is read or written and every helper here
returns at its first check.

On, each process adds its part of one trace:

- the API and the manager open a server span per request (:class:`TraceMiddleware`), joined
  to the caller's context from the ``traceparent`` header;
- the Temporal client carries the SDK's ``TracingInterceptor`` (from
  ``temporalio.contrib.opentelemetry``; see ``skillweave.engines.temporal.connect``),
  registered once, on the client, so the worker inherits it: it links the workflow and its
  activities to the span that started the run, and is safe under replay;
- our HTTP calls (activities to the manager, the manager to an executor) carry the context in
  ``traceparent`` (:func:`inject`);
- spans carry ``skillweave.run_id``, ``skillweave.skill``, ``skillweave.script`` and
  ``skillweave.execution_id`` (:func:`skillweave.telemetry.bound`).
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from skillweave.errors import ConfigError
from skillweave.telemetry.context import FIELDS, bound, current_fields
from skillweave.telemetry.provider import ATTRIBUTE_PREFIX, active

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span

__all__ = [
    "TraceMiddleware",
    "carried_fields",
    "extract",
    "inject",
    "requested",
    "setup",
    "span",
]

_TRACER: Final = "skillweave"


def requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the ``OTEL_*`` variables in `environ` ask for traces to be exported."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def setup(
    service_name: str, environ: Mapping[str, str] = os.environ, *, batch: bool = True
) -> bool:
    """Install a tracer provider exporting as `environ` asks, once per process.

    Args:
        service_name: ``service.name`` unless ``OTEL_SERVICE_NAME`` says otherwise
            (``skillweave-api``, ``skillweave-worker``, ``skillweave-manager``,
            ``skillweave-executor``).
        environ: the variables to read.
        batch: export in batches off the request path; False exports each span as it ends,
            for a short-lived process (a one-shot sandbox executor is killed once used, and a
            batch would die with it).

    Returns:
        Whether tracing is on (a provider was installed now or before).

    Raises:
        ConfigError: ``OTEL_TRACES_EXPORTER`` names an exporter we do not ship.
    """
    if active():
        return True
    if not requested(environ):
        return False
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    names = [n.strip() for n in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    exporters: list[Any] = []
    for name in filter(None, names):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
        elif name == "console":
            exporters.append(ConsoleSpanExporter())
        elif name != "none":
            raise ConfigError(
                f"OTEL_TRACES_EXPORTER={name!r} is not available: use otlp, console or none"
            )
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME") or service_name})
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        processor = BatchSpanProcessor if batch else SimpleSpanProcessor
        provider.add_span_processor(processor(exporter))
    trace.set_tracer_provider(provider)
    atexit.register(provider.shutdown)  # flush what is batched when the process ends
    return True


@contextmanager
def span(
    name: str,
    *,
    context: Context | None = None,
    server: bool = False,
    fields: Mapping[str, str] | None = None,
) -> Iterator[Span | None]:
    """A span around the block (None when not tracing), child of `context` or the current one.

    Args:
        name: the span's name.
        context: the parent, e.g. from :func:`extract`; None: the current span.
        server: a SERVER span (one request served), else INTERNAL.
        fields: ``skillweave.*`` attributes to start it with.
    """
    if not active():
        yield None
        return
    from opentelemetry import trace

    kind = trace.SpanKind.SERVER if server else trace.SpanKind.INTERNAL
    attributes = {ATTRIBUTE_PREFIX + k: v for k, v in (fields or {}).items() if v}
    tracer = trace.get_tracer(_TRACER)
    with tracer.start_as_current_span(
        name, context=context, kind=kind, attributes=attributes
    ) as current:
        yield current


def inject(headers: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """Add the current trace context (``traceparent``) to `headers`, when tracing, with the
    bound run fields as W3C baggage (``skillweave.run_id=…``), so the next process's spans
    and log lines carry them too. They are identifiers only: never secrets or arguments."""
    if active():
        from opentelemetry import baggage, propagate
        from opentelemetry import context as otel_context

        carried = otel_context.get_current()
        for name, value in current_fields().items():
            carried = baggage.set_baggage(ATTRIBUTE_PREFIX + name, value, context=carried)
        propagate.inject(headers, context=carried)
    return headers


def extract(headers: Mapping[str, str]) -> Context | None:
    """The trace context `headers` carry (None when not tracing or they carry none)."""
    if not active() or "traceparent" not in headers:
        return None
    from opentelemetry import propagate

    return propagate.extract(headers)


def carried_fields(context: Context | None) -> dict[str, str]:
    """The run fields a caller sent as baggage with `context` (see :func:`inject`)."""
    if context is None:
        return {}
    from opentelemetry import baggage

    fields = {}
    for key, value in baggage.get_all(context).items():
        name = key.removeprefix(ATTRIBUTE_PREFIX)
        if key.startswith(ATTRIBUTE_PREFIX) and name in FIELDS:
            fields[name] = str(value)
    return fields


class TraceMiddleware:
    """ASGI middleware: one SERVER span per HTTP request, joined to the caller's trace.

    The span is named ``METHOD /route/{template}`` (the matched route, so names stay few) and
    records the response status. Not tracing, it passes requests straight through.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not active():
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", ())
        }
        method = scope.get("method", "GET")
        status: list[int] = []

        async def record_status(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        parent = extract(headers)
        fields = carried_fields(parent)
        name = f"{method} {scope.get('path', '')}"
        with span(name, context=parent, server=True, fields=fields) as s, bound(**fields):
            try:
                await self.app(scope, receive, record_status)
            finally:
                if s is not None:
                    route = getattr(scope.get("route"), "path", None)
                    if route:
                        s.update_name(f"{method} {route}")
                        s.set_attribute("http.route", route)
                    s.set_attribute("http.request.method", method)
                    if status:
                        s.set_attribute("http.response.status_code", status[0])
                        if status[0] >= 500:
                            from opentelemetry.trace import Status, StatusCode

                            s.set_status(Status(StatusCode.ERROR))
