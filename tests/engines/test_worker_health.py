"""The worker's ``/healthz`` beside its ``/metrics`` (``serve_worker_metrics``): 503 with what it
waits for until it polls, then 200; served once even when the worker's parts each ask."""

from __future__ import annotations

import socket

import httpx

from skillweave.config import ObservabilitySettings
from skillweave.engines.worker_metrics import WorkerMetrics, serve_worker_metrics
from skillweave.readiness import Readiness


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_healthz_says_what_the_worker_waits_for_then_that_it_is_ready() -> None:
    readiness = Readiness()
    port = _free_port()
    settings = ObservabilitySettings(worker_metrics_port=port)
    with serve_worker_metrics(WorkerMetrics(), settings, readiness=readiness):
        health = f"http://127.0.0.1:{port}/healthz"
        readiness.waits("temporal", "Temporal at 127.0.0.1:7233: connection refused")
        waiting = httpx.get(health)
        assert waiting.status_code == 503
        assert waiting.headers["retry-after"] == "2"
        body = waiting.json()
        assert body["ready"] is False
        [wait] = body["waiting_for"]
        assert wait["on"] == "temporal"
        assert wait["detail"] == "Temporal at 127.0.0.1:7233: connection refused"
        assert wait["since"]
        readiness.came_up("temporal")
        readiness.mark_ready()
        ready = httpx.get(health)
        assert ready.status_code == 200
        assert ready.json() == {"ready": True, "waiting_for": []}
        assert "skillweave_model_calls" in httpx.get(f"http://127.0.0.1:{port}/metrics").text


def test_metrics_served_already_are_not_served_twice() -> None:
    metrics = WorkerMetrics()
    port = _free_port()
    settings = ObservabilitySettings(worker_metrics_port=port)
    with serve_worker_metrics(metrics, settings) as first:
        with serve_worker_metrics(metrics, settings) as again:
            assert again == first
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").json()["ready"] is True
    assert metrics.served_at is None
