"""Logging configured for one test, into a buffer, and the process's logging put back after."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once
from pydantic import BaseModel

from skillweave.config import ObservabilitySettings
from skillweave.telemetry import logs


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """Put back, at the end, the root handlers, every logger's level and the registered
    secrets (a fresh, empty registry inside), whatever the block configured."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {
        name: logger.level
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    root_level = root.level
    redactor = logs._REDACTOR
    logs._REDACTOR = logs._Redactor()  # secrets registered inside stay inside
    try:
        yield
    finally:
        logs._REDACTOR = redactor
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(root_level)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def captured_logs(
    *, secrets: BaseModel | None = None, service: str = "skillweave-test", **settings: Any
) -> Iterator[io.StringIO]:
    """:func:`logs.configure_logging` with ``ObservabilitySettings(**settings)`` into the
    buffer yielded, inside :func:`logging_restored`."""
    buffer = io.StringIO()
    with logging_restored():
        logs.configure_logging(
            ObservabilitySettings(**settings), service=service, secrets=secrets, stream=buffer
        )
        yield buffer


@contextlib.contextmanager
def in_memory_tracing() -> Iterator[InMemorySpanExporter]:
    """A process-wide SDK tracer provider for the test, removed afterwards (OpenTelemetry lets
    a provider be set once per process; the test resets that guard, as its own tests do)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = trace._TRACER_PROVIDER
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace.set_tracer_provider(provider)
    try:
        yield exporter
    finally:
        provider.shutdown()
        trace._TRACER_PROVIDER = previous
        trace._TRACER_PROVIDER_SET_ONCE = Once()
        if previous is not None:
            trace._TRACER_PROVIDER_SET_ONCE._done = True
