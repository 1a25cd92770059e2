"""The manager's Prometheus metrics (``GET /metrics``), in a registry of its own so that two
managers in one process (tests) do not collide."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["ManagerMetrics"]


class ManagerMetrics:
    """Claim latency (warm/cold), pool size, executions by outcome, timeouts, evictions.

    Claims are counted by the claim histogram (``skillweave_sandbox_claim_seconds_count`` by
    kind); the sandboxes claimed at a moment are ``skillweave_sandbox_pool_busy``.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.claim_seconds = Histogram(
            "skillweave_sandbox_claim_seconds",
            "Time to claim a sandbox from the pool.",
            ["kind"],
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
            registry=self.registry,
        )
        self.manager = Gauge(
            "skillweave_manager_info",
            "1, labelled with this manager's id (SANDBOX__MANAGER_ID; default host:port): the "
            "name in its claims and logs.",
            ["manager_id"],
            registry=self.registry,
        )
        self.isolation = Gauge(
            "skillweave_sandbox_isolation",
            "1 for the isolation mode this manager's scripts run in (mode: bubblewrap, namespaces"
            " or none = scripts are not contained), under its SANDBOX__ISOLATION (setting: auto,"
            " bubblewrap, namespaces or none); with auto, absent until the first sandbox said.",
            ["mode", "setting"],
            registry=self.registry,
        )
        self.pool_ready = Gauge(
            "skillweave_sandbox_pool_ready", "Ready sandboxes.", registry=self.registry
        )
        self.pool_busy = Gauge(
            "skillweave_sandbox_pool_busy",
            "Claimed sandboxes (running a script or about to).",
            registry=self.registry,
        )
        self.evictions = Counter(
            "skillweave_sandbox_evictions",
            "Sandboxes the warm pool destroyed without a run, by reason (exited: a ready one "
            "whose process died, replaced; surplus: a ready one over the target).",
            ["reason"],
            registry=self.registry,
        )
        self.executions = Counter(
            "skillweave_sandbox_executions",
            "Script executions by outcome (succeeded, failed, timed_out, cancelled, error, lost).",
            ["outcome"],
            registry=self.registry,
        )
        self.timeouts = Counter(
            "skillweave_sandbox_timeouts",
            "Executions killed at their timeout.",
            registry=self.registry,
        )
        self.deduplicated = Counter(
            "skillweave_sandbox_deduplicated",
            "Requests answered from a stored or in-flight execution instead of a new run.",
            registry=self.registry,
        )
        self.claims_taken_over = Counter(
            "skillweave_sandbox_claims_taken_over",
            "Executions run again because the manager that claimed them stopped (lease lapsed).",
            registry=self.registry,
        )
        self.claim_conflicts = Counter(
            "skillweave_sandbox_claim_conflicts",
            "Claims another manager won first (kubernetes backend: a 409 on the claim patch).",
            registry=self.registry,
        )
        self.reaped = Counter(
            "skillweave_sandbox_reaped",
            "Sandboxes deleted by the reaper or given up, by reason (kubernetes backend).",
            ["reason"],
            registry=self.registry,
        )
        self.egress = Counter(
            "skillweave_egress_connections",
            "Connections and requests through the egress proxy, by skill and outcome "
            "(allowed, refused).",
            ["skill", "outcome"],
            registry=self.registry,
        )
        self.environment_builds = Counter(
            "skillweave_sandbox_environment_builds",
            "Environments of skill dependencies this manager built (a build happens once per "
            "skill version, runtime and platform; later runs reuse the stored one).",
            registry=self.registry,
        )
        self.environment_seconds = Histogram(
            "skillweave_sandbox_environment_seconds",
            "Time to have a run's environment ready: a lookup in the store, or a build.",
            ["built"],
            buckets=(0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900),
            registry=self.registry,
        )
        self.execution_seconds = Histogram(
            "skillweave_sandbox_execution_seconds",
            "End-to-end time of an execution in the manager.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
            registry=self.registry,
        )
