"""`WorkerMetrics`: Prometheus metrics of what agent runs do, and the worker's ``/metrics``.

:class:`~skillweave.engines.services.AgentServices` owns one and counts its side effects (model
calls and their tokens, script runs, activations, searches), so a Temporal worker and a process
that executes runs in-process on the direct engine (the API, ``skillweave run``) count alike. Each
instance has a registry of its own, so that several services in one process (tests) never
collide.

Labels take few values and never carry what a run says: a provider (``openai``, ``anthropic``,
``scripted``), an outcome, a skill's name (an identifier of the library). Arguments, task text,
outputs and secrets never become labels.

:func:`serve_worker_metrics` serves the registry at ``GET /metrics`` on
``OBSERVABILITY__WORKER_METRICS_HOST:…_PORT`` for the worker processes (``skillweave worker``,
``skillweave dev``), and the worker's readiness at ``GET /healthz`` (200 ``{"ready": true}``
once it polls, 503 ``{"ready": false, "waiting_for": [...]}`` while it waits for Temporal or
the store: :class:`skillweave.readiness.Readiness`); prometheus-client's threaded WSGI server
does it, off the event loop. ``skillweave worker`` starts it before it waits for anything.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, Counter, Histogram, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from skillweave.config import ObservabilitySettings
from skillweave.errors import ConfigError
from skillweave.llm import Usage
from skillweave.readiness import Readiness

__all__ = ["WorkerMetrics", "serve_worker_metrics"]

logger = logging.getLogger("skillweave.worker")


class WorkerMetrics:
    """Model calls, tokens, script runs by outcome, activations by skill, searches."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.served_at: str | None = None
        """The URL it is served at by :func:`serve_worker_metrics`, while it is."""
        self.model_calls = Counter(
            "skillweave_model_calls",
            "Model calls by provider and outcome (ok, error).",
            ["provider", "outcome"],
            registry=self.registry,
        )
        self.model_call_seconds = Histogram(
            "skillweave_model_call_seconds",
            "Time a model call took, answered or failed.",
            ["provider"],
            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
            registry=self.registry,
        )
        self.model_tokens = Counter(
            "skillweave_model_tokens",
            "Tokens the provider reported, by type (input, output).",
            ["provider", "type"],
            registry=self.registry,
        )
        self.script_runs = Counter(
            "skillweave_script_runs",
            "Script steps by outcome: the execution's status (succeeded, failed, timed_out, "
            "cancelled, error; error also when the manager refused to run it), or "
            "infrastructure_error when no result came back (the engine retries the step).",
            ["outcome"],
            registry=self.registry,
        )
        self.activations = Counter(
            "skillweave_skill_activations",
            "Skills activated, by skill name.",
            ["skill"],
            registry=self.registry,
        )
        self.searches = Counter(
            "skillweave_skill_searches",
            "search_skills calls, by result (found: at least one skill, none).",
            ["result"],
            registry=self.registry,
        )

    def model_called(self, provider: str, *, seconds: float, usage: Usage | None) -> None:
        """Count one model call of `provider` (the part of its name before the colon):
        answered with `usage`, or failed (None)."""
        provider = provider.partition(":")[0]
        self.model_call_seconds.labels(provider=provider).observe(seconds)
        if usage is None:
            self.model_calls.labels(provider=provider, outcome="error").inc()
            return
        self.model_calls.labels(provider=provider, outcome="ok").inc()
        self.model_tokens.labels(provider=provider, type="input").inc(usage.input_tokens)
        self.model_tokens.labels(provider=provider, type="output").inc(usage.output_tokens)


_WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _with_health(metrics_app: _WsgiApp, readiness: Readiness | None) -> _WsgiApp:
    """`metrics_app`, and ``GET /healthz`` answered from `readiness` (None: ready)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != "/healthz":
            return metrics_app(environ, start_response)
        body = readiness.health() if readiness is not None else {"ready": True, "waiting_for": []}
        status = "200 OK" if body["ready"] else "503 Service Unavailable"
        data = json.dumps(body).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        if not body["ready"]:
            headers.append(("Retry-After", "2"))
        start_response(status, headers)
        return [data]

    return app


class _QuietHandler(WSGIRequestHandler):
    """No line on stderr per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_worker_metrics(
    metrics: WorkerMetrics,
    settings: ObservabilitySettings,
    *,
    readiness: Readiness | None = None,
) -> Iterator[str | None]:
    """Serve `metrics` at ``http://HOST:PORT/metrics`` (``settings.worker_metrics_*``), and
    `readiness` at ``/healthz`` (None: always ready), while the context lasts; yields that
    URL, logged once, or None when the port is 0 (not served). `metrics` served already (a
    worker serves its health before its services exist): its URL, nothing started again.

    Raises:
        ConfigError: the server cannot listen there (the port is in use, the host is not
            this machine's); the message names the setting to change.
    """
    host, port = settings.worker_metrics_host, settings.worker_metrics_port
    if port == 0:
        yield None
        return
    if metrics.served_at is not None:
        yield metrics.served_at
        return
    app = _with_health(make_wsgi_app(metrics.registry), readiness)
    try:
        server = make_server(host, port, app, _server_class(host), handler_class=_QuietHandler)
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be listened on ({exc})"
        raise ConfigError(
            f"the worker's metrics port {port} on {host} {why}: set "
            "OBSERVABILITY__WORKER_METRICS_PORT to a free port (0: no metrics server) or "
            "OBSERVABILITY__WORKER_METRICS_HOST to another address"
        ) from None
    thread = threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True)
    thread.start()
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/metrics"
    logger.info("worker metrics on %s, readiness on /healthz", url)
    metrics.served_at = url
    try:
        yield url
    finally:
        metrics.served_at = None
        server.shutdown()
        server.server_close()
        thread.join()


def _server_class(host: str) -> type[ThreadingWSGIServer]:
    """A threaded WSGI server of the address family of `host` (IPv6 when it has a colon)."""

    class Server(ThreadingWSGIServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    return Server
