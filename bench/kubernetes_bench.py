"""Benchmark: claim-to-result latency through the manager's kubernetes backend, warm vs cold.

Measured the way ``bench/sandbox_bench.py`` measures the local pool, end to end from the
manager's client, for a trivial Python script:

- **warm**: a pod Ready in the pool (the pool is back at its target before each call; the
  refill is not timed): one claim patch, the run, the pod's deletion in the background;
- **cold**: a pool with target 0, so every call creates its pod and waits for it to be Ready;

beside the local pool's warm and cold, measured in the same run. The Kubernetes API is the
``kmock`` emulator on loopback, driven by the official client; a test kubelet starts a real
executor for each pod on its own 127.x address (``tests/integration/kubernetes/cluster.py``).
What a real cluster adds to a cold start (scheduling, image pulls, container start: seconds)
is not in these numbers; ``--pod-start-delay`` adds a fixed kubelet delay to show its effect.
Run: ``python bench/kubernetes_bench.py`` (``--quick`` for a smaller smoke run). As in the
sandbox bench, nothing waits against a short clock (``until_warm``, minutes to start a pod).

``--throughput`` measures sustained load instead (issue 23): ``--concurrency`` clients run the
trivial script back to back until ``--runs`` runs are done, through one manager with the
pool's ``--target`` and ``--maximum``, once per ``--pod-start-delay`` given. Each row reports
the claim rate and script runs per second, the claim wait (the pool's ``claim`` call, timed
by wrapping it) at p50/p95, how many claims found a pod warm, the pod churn (pods created and
deleted per second and per run) and the most pods that were being created at once, read from
the API server's own record of every pod (created, first Ready, deleted), with the median
time a pod took from created to Ready.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from bench.measures import percentile

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.sandbox_bench import STALL_SECONDS, START_SECONDS, until_warm  # noqa: E402
from mcp_manager import create_app  # noqa: E402
from mcp_manager.kubernetes import LABEL_POOL  # noqa: E402
from mcp_manager.server import LoopbackServer  # noqa: E402
from skillweave.config import Settings  # noqa: E402
from skillweave.sandbox.client import SandboxClient  # noqa: E402
from skillweave.sandbox.models import ExecuteRequest  # noqa: E402
from skillweave.sandbox.packages import publish_library  # noqa: E402
from skillweave.skills import SkillRegistry, SkillScanner  # noqa: E402
from skillweave.storage.local import LocalArtifactStore  # noqa: E402
from tests.integration.kubernetes.cluster import (  # noqa: E402
    FakeCluster,
    in_creation_peak,
)

TOKEN: Final = "bench-token"
NAMESPACE: Final = "skillweave-sandboxes"


def _settings(
    backend: str,
    target: int,
    cluster: FakeCluster | None,
    *,
    maximum: int = 2,
    pool: str = "bench",
) -> Settings:
    sandbox: dict[str, object] = {
        "backend": backend,
        "manager_token": SecretStr(TOKEN),
        "pool_target": target,
        "pool_max": maximum,
        "claim_timeout_seconds": STALL_SECONDS,
        "start_timeout_seconds": START_SECONDS,
    }
    if cluster is not None:
        sandbox["isolation"] = "none"  # the sandbox pod template's: the pod is the boundary
        sandbox["kubernetes"] = {
            "namespace": NAMESPACE,
            "pool": pool,
            "kubeconfig": str(cluster.kubeconfig),
            "manager_id": "bench",
            "api_timeout_seconds": 60,  # the emulator shares a loaded machine's CPU
        }
    return Settings(_env_file=None, sandbox=sandbox)


def _request(registry: SkillRegistry, n: int) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=f"bench/k8s/{time.time_ns()}/{n}",
        run_id="bench",
        skill="probe",
        version=registry.get("probe").version,
        script="scripts/trivial.py",
    )


async def _timings(
    settings: Settings,
    store: LocalArtifactStore,
    registry: SkillRegistry,
    *,
    runs: int,
    warm: bool,
) -> list[float]:
    app = create_app(settings, store=store, publish=False)
    async with LoopbackServer(app) as server:
        pool = app.state.manager.pool
        timings = []
        async with SandboxClient(server.url, token=TOKEN) as client:
            for n in range(runs):
                if warm:
                    await until_warm(pool)
                started = time.perf_counter()
                result = await client.execute(_request(registry, n))
                timings.append(time.perf_counter() - started)
                if result.status != "succeeded":
                    raise RuntimeError(f"{result.status}: {result.stderr or result.error}")
    return timings


async def _library(root: Path) -> tuple[SkillRegistry, LocalArtifactStore]:
    """The one-script skill every run uses, published to a local store under `root`."""
    probe = root / "skills" / "probe"
    (probe / "scripts").mkdir(parents=True)
    (probe / "SKILL.md").write_text(
        "---\nname: probe\ndescription: Benchmark scripts.\n---\n# Probe\n"
    )
    (probe / "scripts" / "trivial.py").write_text("print('ok')\n")
    registry = SkillRegistry.from_scan(SkillScanner([root / "skills"]).scan())
    store = LocalArtifactStore(root / "store")
    await publish_library(store, registry)
    return registry, store


def _stamp() -> str:
    return (
        f"{platform.python_implementation()} {platform.python_version()}; {os.cpu_count()} cores; "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
    )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def _latency(quick: bool, delay: float, console: Console) -> None:
    runs = 5 if quick else 30
    cold_runs = 3 if quick else 10
    with tempfile.TemporaryDirectory(prefix="skillweave-k8s-bench-") as tmp:
        root = Path(tmp)
        registry, store = await _library(root)
        rows: dict[str, list[float]] = {}
        with FakeCluster(root / "cluster") as cluster:
            cluster.set_start_delay(delay)
            rows["kubernetes warm"] = await _timings(
                _settings("kubernetes", 1, cluster), store, registry, runs=runs, warm=True
            )
            rows["kubernetes cold"] = await _timings(
                _settings("kubernetes", 0, cluster), store, registry, runs=cold_runs, warm=False
            )
        rows["local warm"] = await _timings(
            _settings("local", 1, None), store, registry, runs=runs, warm=True
        )
        rows["local cold"] = await _timings(
            _settings("local", 0, None), store, registry, runs=cold_runs, warm=False
        )

        table = Table(title="Claim-to-result latency, trivial script (seconds; end to end)")
        for column in ("pool", "runs", "p50", "p95", "× kubernetes warm p50"):
            table.add_column(column, justify="right")
        base = statistics.median(rows["kubernetes warm"])
        for name, values in rows.items():
            p50 = statistics.median(values)
            table.add_row(
                name,
                str(len(values)),
                f"{p50:.4f}",
                f"{percentile(values, 0.95):.4f}",
                f"{p50 / base:.2f}×",
            )
        table.caption = (
            f"kmock API server + test kubelet on loopback; kubelet start delay {delay:g} s; "
            f"{_stamp()}"
        )
        console.print(table)
        cold = statistics.median(rows["kubernetes cold"])
        console.print(f"kubernetes: warm is {cold / base:.1f}× faster than cold (p50)")


# --- sustained throughput (issue 23) ---------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One sustained-load run: how many clients, how many runs in all, the pool's size."""

    concurrency: int
    runs: int
    target: int
    maximum: int


@dataclass(frozen=True)
class Throughput:
    """What one sustained-load run measured (seconds; pod counts from the API server)."""

    delay: float
    seconds: float
    runs: int
    claim_waits: list[float]
    warm_claims: int
    created: int
    deleted: int
    peak_creating: int
    start_times: list[float]
    load: str

    @property
    def runs_per_second(self) -> float:
        return self.runs / self.seconds

    @property
    def claims_per_second(self) -> float:
        return len(self.claim_waits) / self.seconds


async def _sustained(
    settings: Settings,
    store: LocalArtifactStore,
    registry: SkillRegistry,
    cluster: FakeCluster,
    *,
    load: Load,
    delay: float,
) -> Throughput:
    """`load.concurrency` clients running the trivial script back to back, `load.runs` runs
    in all, from a pool at its target; the pods the pool creates are recorded meanwhile."""
    app = create_app(settings, store=store, publish=False)
    async with LoopbackServer(app) as server:
        pool = app.state.manager.pool
        await until_warm(pool)
        waits: list[tuple[float, bool]] = []
        claim = pool.claim

        async def timed_claim() -> tuple[object, bool]:
            started = time.perf_counter()
            sandbox, warm = await claim()
            waits.append((time.perf_counter() - started, warm))
            return sandbox, warm

        pool.claim = timed_claim  # the execution service calls the pool through this name
        numbers = itertools.count()
        recorder = cluster.record_pods(NAMESPACE)
        try:
            async with SandboxClient(server.url, token=TOKEN) as client:

                async def client_loop() -> None:
                    while (n := next(numbers)) < load.runs:
                        result = await client.execute(_request(registry, n))
                        if result.status != "succeeded":
                            raise RuntimeError(f"{result.status}: {result.stderr or result.error}")

                started = time.monotonic()
                await asyncio.gather(*(client_loop() for _ in range(load.concurrency)))
                ended = time.monotonic()
            lives = recorder.lives()
        finally:
            recorder.stop()
            pool.claim = claim
    window = [life for life in lives if life.created <= ended]
    return Throughput(
        delay=delay,
        seconds=ended - started,
        runs=load.runs,
        claim_waits=[wait for wait, _ in waits],
        warm_claims=sum(1 for _, warm in waits if warm),
        created=len(window),
        deleted=sum(1 for life in lives if life.deleted is not None and life.deleted <= ended),
        peak_creating=in_creation_peak(lives, until=ended),
        start_times=[life.ready - life.created for life in window if life.ready is not None],
        load=_load(),
    )


def _clear(cluster: FakeCluster, pool: str) -> None:
    """Delete what a finished run left in its pool (warm pods stay after a manager stops)."""
    for pod in cluster.pods(NAMESPACE, {LABEL_POOL: pool}):
        cluster.delete_pod(NAMESPACE, pod["metadata"]["name"])


async def _throughput(
    quick: bool,
    delays: Sequence[float],
    load: Load,
    console: Console,
    *,
    markdown: bool = False,
) -> list[Throughput]:
    if quick:
        load = Load(min(load.concurrency, 2), min(load.runs, 8), load.target, load.maximum)
    rows: list[Throughput] = []
    with tempfile.TemporaryDirectory(prefix="skillweave-k8s-bench-") as tmp:
        root = Path(tmp)
        registry, store = await _library(root)
        with FakeCluster(root / "cluster") as cluster:
            for index, delay in enumerate(delays):
                cluster.set_start_delay(delay)
                pool = f"load{index}"  # a pool of its own: no pod of an earlier run is claimed
                settings = _settings(
                    "kubernetes", load.target, cluster, maximum=load.maximum, pool=pool
                )
                rows.append(
                    await _sustained(settings, store, registry, cluster, load=load, delay=delay)
                )
                _clear(cluster, pool)
    title = (
        f"Sustained load through the kubernetes pool: {load.concurrency} clients, "
        f"{load.runs} runs of a trivial script, target {load.target}, maximum {load.maximum}"
    )
    columns = (
        "pod start delay (s)",
        "wall (s)",
        "claims/s",
        "runs/s",
        "claim wait p50 (ms)",
        "claim wait p95 (ms)",
        "warm claims",
        "pods created/s",
        "pods deleted/s",
        "pods created per run",
        "peak pods in creation",
        "pod start p50 (s)",
        "load average at end",
    )
    cells = [
        (
            f"{row.delay:g}",
            f"{row.seconds:.1f}",
            f"{row.claims_per_second:.2f}",
            f"{row.runs_per_second:.2f}",
            f"{1000 * statistics.median(row.claim_waits):.0f}",
            f"{1000 * percentile(row.claim_waits, 0.95):.0f}",
            f"{row.warm_claims}/{len(row.claim_waits)}",
            f"{row.created / row.seconds:.2f}",
            f"{row.deleted / row.seconds:.2f}",
            f"{row.created / row.runs:.2f}",
            str(row.peak_creating),
            f"{statistics.median(row.start_times):.2f}" if row.start_times else "-",
            row.load,
        )
        for row in rows
    ]
    caption = f"kmock API server + test kubelet on loopback; {_stamp()}"
    if markdown:  # for docs/BENCHMARKS.md, whatever the terminal's width
        console.print(f"{title} ({caption})\n", soft_wrap=True)
        console.print("| " + " | ".join(columns) + " |", soft_wrap=True)
        console.print("|" + "---|" * len(columns), soft_wrap=True)
        for line in cells:
            console.print("| " + " | ".join(line) + " |", soft_wrap=True)
        return rows
    table = Table(title=title, caption=caption)
    for column in columns:
        table.add_column(column, justify="right")
    for line in cells:
        table.add_row(*line)
    console.print(table)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller smoke run")
    parser.add_argument(
        "--pod-start-delay",
        type=float,
        nargs="+",
        default=[0.0],
        help="seconds the test kubelet waits before starting a pod's executor (several: one "
        "table or row each)",
    )
    parser.add_argument(
        "--throughput", action="store_true", help="sustained load instead of latency"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="clients (--throughput)")
    parser.add_argument("--runs", type=int, default=60, help="runs in all (--throughput)")
    parser.add_argument("--target", type=int, default=2, help="pool target (--throughput)")
    parser.add_argument("--maximum", type=int, default=8, help="pool maximum (--throughput)")
    parser.add_argument(
        "--markdown", action="store_true", help="print the table as Markdown (--throughput)"
    )
    args = parser.parse_args(argv)
    console = Console()
    console.print(f"load average at start: {_load()}")
    if args.throughput:
        load = Load(args.concurrency, args.runs, args.target, args.maximum)
        asyncio.run(
            _throughput(args.quick, args.pod_start_delay, load, console, markdown=args.markdown)
        )
    else:
        for delay in args.pod_start_delay:
            asyncio.run(_latency(args.quick, delay, console))
    return 0


if __name__ == "__main__":
    sys.exit(main())
