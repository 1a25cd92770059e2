"""Where a worker serves the Temporal SDK's own metrics (``OBSERVABILITY__TEMPORAL_METRICS_PORT``),
and the one line a busy port gives (a real worker serving them:
``tests/integration/temporal/test_sdk_metrics.py``)."""

from __future__ import annotations

import socket

import pytest

from skillweave.config import ObservabilitySettings
from skillweave.engines.temporal import configure_logging, sdk_metrics_address
from skillweave.errors import ConfigError


def test_the_sdks_metrics_are_served_only_when_a_port_is_set() -> None:
    assert sdk_metrics_address(ObservabilitySettings()) is None
    settings = ObservabilitySettings(temporal_metrics_port=9464, worker_metrics_host="10.0.0.5")
    assert sdk_metrics_address(settings) == "10.0.0.5:9464"


def test_a_busy_port_is_one_line_naming_the_setting() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        with pytest.raises(ConfigError) as raised:
            configure_logging(verbose=False, metrics_address=address)
    said = str(raised.value)
    assert said.startswith("OBSERVABILITY__TEMPORAL_METRICS_PORT: cannot serve the SDK's metrics")
    assert address in said
    assert "\n" not in said
