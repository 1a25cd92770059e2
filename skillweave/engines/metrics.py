"""`WorkerMetrics`: Prometheus metrics of what agent jobs do, and the worker's ``/metrics``.

:class:`~skillweave.engines.services.AgentServices` owns one and counts its side effects (model
calls and their tokens, script runs, activations, searches), so a Temporal worker and a process
that runs jobs in-process on the direct engine (the API, ``skillweave run``) count alike. Each
instance has a registry of its own, so that several services in one process (tests) never
collide.

Labels take few values and never carry what a job says: a provider (``openai``, ``anthropic``,
``scripted``), an outcome, a skill's name (an identifier of the library). Arguments, task text,
outputs and secrets never become labels.

:func:`serve_worker_metrics` serves the registry at ``GET /metrics`` on
``OBSERVABILITY__WORKER_METRICS_HOST:…_PORT`` for the worker processes (``skillweave worker``,
``skillweave dev``); prometheus-client's own threaded server does it, off the event loop.
"""

from __future__ import annotations

import contextlib
import errno
import logging
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from skillweave.config import ObservabilitySettings
from skillweave.errors import ConfigError
from skillweave.llm.messages import Usage

__all__ = ["WorkerMetrics", "serve_worker_metrics"]

logger = logging.getLogger("skillweave.worker")


class WorkerMetrics:
    """Model calls, tokens, script runs by outcome, activations by skill, searches."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
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


@contextlib.contextmanager
def serve_worker_metrics(
    metrics: WorkerMetrics, settings: ObservabilitySettings
) -> Iterator[str | None]:
    """Serve `metrics` at ``http://HOST:PORT/metrics`` (``settings.worker_metrics_*``) while
    the context lasts; yields that URL, logged once, or None when the port is 0 (not served).

    Raises:
        ConfigError: the server cannot listen there (the port is in use, the host is not
            this machine's); the message names the setting to change.
    """
    host, port = settings.worker_metrics_host, settings.worker_metrics_port
    if port == 0:
        yield None
        return
    try:
        server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be listened on ({exc})"
        raise ConfigError(
            f"the worker's metrics port {port} on {host} {why}: set "
            "OBSERVABILITY__WORKER_METRICS_PORT to a free port (0: no metrics server) or "
            "OBSERVABILITY__WORKER_METRICS_HOST to another address"
        ) from None
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/metrics"
    logger.info("worker metrics on %s", url)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
