"""Tracing's switch: off (no provider, nothing injected) unless the OTEL_* variables ask."""

from __future__ import annotations

import pytest

from skillweave.errors import ConfigError
from skillweave.telemetry import bound, provider, tracing


def test_tracing_is_off_without_otel_variables() -> None:
    assert not tracing.requested({})
    assert not tracing.requested({"OTEL_TRACES_EXPORTER": "none"})
    assert not tracing.requested({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"})
    assert tracing.requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing.setup("skillweave-test", {}) is False
    assert not provider.active()
    assert tracing.inject({}) == {}


def test_an_exporter_we_do_not_ship_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER='zipkin'"):
        tracing.setup("skillweave-test", {"OTEL_TRACES_EXPORTER": "zipkin"})
    assert not provider.active()


def test_spans_and_annotations_are_free_when_off() -> None:
    with tracing.span("nothing", fields={"run_id": "j"}) as span, bound(run_id="j"):
        assert span is None
    assert tracing.extract({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}) is None
