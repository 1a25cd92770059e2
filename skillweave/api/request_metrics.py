"""The API's Prometheus metrics: requests by route and status, latency by route, ``GET /metrics``.

:func:`install_metrics` (called by ``create_api``) adds :class:`RequestMetrics`, the middleware
that counts, and the ``/metrics`` route, behind the same bearer token as the other routes.
An API that executes runs in-process (the direct engine) also shows the metrics of its
``AgentServices`` there (:func:`include_worker_metrics`), in the same text body.

A request is labelled with its route's path template (``/v1/runs/{run_id}``), never the path
it asked for, whose values are unbounded; one that no route served is ``unmatched``. The
middleware is plain ASGI, so that Server-Sent Events and downloads stream through it untouched.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from fastapi import APIRouter, FastAPI, Response
from fastapi.params import Depends
from fastapi.responses import PlainTextResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillweave.api.state import ApiComposition
from skillweave.engines import WorkerMetrics

__all__ = ["ApiMetrics", "RequestMetrics", "include_worker_metrics", "install_metrics"]

UNMATCHED: Final = "unmatched"
"""The route label of a request no route served: none matches (404), or it was refused before
routing (a declared body over the limit, 413)."""


class ApiMetrics:
    """Requests by route, method and status; time to the response by route and method.

    Attributes:
        shown: more registries ``/metrics`` shows after the API's own (an in-process
            worker's, :func:`include_worker_metrics`), set when the app has started.
    """

    def __init__(self) -> None:
        self.shown: list[CollectorRegistry] = []
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "skillweave_api_requests",
            "Requests by route template, method and status code.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "skillweave_api_request_seconds",
            "Time from a request to its response's status and headers, by route template and "
            "method (a stream's first bytes, not its end).",
            ["route", "method"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )


def route_of(scope: Scope) -> str:
    """The path template of the route that served `scope`'s request, or :data:`UNMATCHED`."""
    path = getattr(scope.get("route"), "path", None)
    return path if isinstance(path, str) else UNMATCHED


_METHODS: Final = frozenset(
    {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"}
)


def _method(scope: Scope) -> str:
    """The request's method as a label: any other token a client sends is ``other``, so a
    client cannot mint label values (and series) at will."""
    method = scope["method"]
    return method if method in _METHODS else "other"


class RequestMetrics:
    """ASGI middleware: counts each HTTP request by route template, method and status when its
    response starts, and times it to then. A request that fails without a response counts
    as a 500, as the server answers it."""

    def __init__(self, app: ASGIApp, *, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answered = False

        def count(status: int) -> None:
            nonlocal answered
            answered = True
            route, method = route_of(scope), _method(scope)
            self.metrics.requests.labels(route=route, method=method, status=str(status)).inc()
            self.metrics.request_seconds.labels(route=route, method=method).observe(
                time.perf_counter() - started
            )

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                count(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        except Exception:
            if not answered:
                count(500)
            raise


def include_worker_metrics(metrics: WorkerMetrics) -> Callable[[ApiComposition], Awaitable[None]]:
    """A startup hook for an API that executes runs in-process: its ``/metrics`` also shows
    `metrics` (its services' model calls, script runs, activations, searches)."""

    async def hook(parts: ApiComposition) -> None:
        parts.metrics.append(metrics.registry)

    return hook


def install_metrics(
    app: FastAPI, *, dependencies: Sequence[Depends], responses: dict[int | str, dict[str, Any]]
) -> ApiMetrics:
    """Count `app`'s requests and serve ``GET /metrics`` behind `dependencies` (the token).

    Call it after the app's other middleware, so that it counts their answers too (a body
    over the limit).
    """
    metrics = ApiMetrics()
    app.add_middleware(RequestMetrics, metrics=metrics)
    router = APIRouter(tags=["metrics"])

    @router.get("/metrics", response_class=PlainTextResponse)
    async def prometheus_metrics() -> Response:
        """Prometheus text: the API's requests, and the in-process worker's metrics when the
        API executes runs itself (direct engine)."""
        body = generate_latest(metrics.registry)
        for shown in metrics.shown:
            body += generate_latest(shown)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    app.include_router(router, dependencies=list(dependencies), responses=responses)
    return metrics
