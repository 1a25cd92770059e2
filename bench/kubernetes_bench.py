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
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
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
from mcp_manager.server import LoopbackServer  # noqa: E402
from skillweave.config import Settings  # noqa: E402
from skillweave.sandbox.client import SandboxClient  # noqa: E402
from skillweave.sandbox.models import ExecuteRequest  # noqa: E402
from skillweave.sandbox.packages import publish_library  # noqa: E402
from skillweave.skills import SkillRegistry, SkillScanner  # noqa: E402
from skillweave.storage.local import LocalArtifactStore  # noqa: E402
from tests.integration.kubernetes.cluster import FakeCluster  # noqa: E402

TOKEN: Final = "bench-token"
NAMESPACE: Final = "skillweave-sandboxes"


def _settings(backend: str, target: int, cluster: FakeCluster | None) -> Settings:
    sandbox: dict[str, object] = {
        "backend": backend,
        "manager_token": SecretStr(TOKEN),
        "pool_target": target,
        "pool_max": 2,
        "claim_timeout_seconds": STALL_SECONDS,
        "start_timeout_seconds": START_SECONDS,
    }
    if cluster is not None:
        sandbox["isolation"] = "none"  # the sandbox pod template's: the pod is the boundary
        sandbox["kubernetes"] = {
            "namespace": NAMESPACE,
            "pool": "bench",
            "kubeconfig": str(cluster.kubeconfig),
            "manager_id": "bench",
            "api_timeout_seconds": 60,  # the emulator shares a loaded machine's CPU
        }
    return Settings(_env_file=None, sandbox=sandbox)


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
                request = ExecuteRequest(
                    execution_id=f"bench/k8s/{time.time_ns()}/{n}",
                    run_id="bench",
                    skill="probe",
                    version=registry.get("probe").version,
                    script="scripts/trivial.py",
                )
                started = time.perf_counter()
                result = await client.execute(request)
                timings.append(time.perf_counter() - started)
                if result.status != "succeeded":
                    raise RuntimeError(f"{result.status}: {result.stderr or result.error}")
    return timings


async def _main(quick: bool, delay: float, console: Console) -> None:
    runs = 5 if quick else 30
    cold_runs = 3 if quick else 10
    with tempfile.TemporaryDirectory(prefix="skillweave-k8s-bench-") as tmp:
        root = Path(tmp)
        probe = root / "skills" / "probe"
        (probe / "scripts").mkdir(parents=True)
        (probe / "SKILL.md").write_text(
            "---\nname: probe\ndescription: Benchmark scripts.\n---\n# Probe\n"
        )
        (probe / "scripts" / "trivial.py").write_text("print('ok')\n")
        registry = SkillRegistry.from_scan(SkillScanner([root / "skills"]).scan())
        store = LocalArtifactStore(root / "store")
        await publish_library(store, registry)

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
            f"{platform.python_implementation()} {platform.python_version()}; "
            f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
        )
        console.print(table)
        cold = statistics.median(rows["kubernetes cold"])
        console.print(f"kubernetes: warm is {cold / base:.1f}× faster than cold (p50)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller smoke run")
    parser.add_argument(
        "--pod-start-delay",
        type=float,
        default=0.0,
        help="seconds the test kubelet waits before starting a pod's executor",
    )
    args = parser.parse_args(argv)
    asyncio.run(_main(args.quick, args.pod_start_delay, Console()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
