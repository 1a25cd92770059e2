"""Benchmark: what a run in flight costs a worker in memory, and what a cache of runs smaller
than the runs in flight costs in evictions and replays (issue 47 part 3).

Each scenario (a cache size and a number of runs) gets a fresh in-memory dev server
(``skillweave.cli.temporal_server.dev_server``, tuned with ``DEV_SERVER_TUNING``) and a fresh
worker in a SUBPROCESS, so that its RSS and CPU are its own: ``python -m
bench.worker_memory_bench worker``, skillweave's worker as ``skillweave worker`` runs it
(``workflows.worker.running_worker``), its tuning read from its environment
(``WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS`` and the rest: the settings under test), the SDK's
runtime metrics served on loopback (``temporalio.runtime.PrometheusConfig``).

Every run is parked mid-run: a scripted model activates the bundled ``commit-message`` skill
and asks to run its linter, which the agent's approvals hold for a person
(``AgentSpec.approvals``), so the run waits on a signal with its workflow in the worker's
cache. Resuming denies the approval (a signal; no sandbox is needed), the model answers and
the run completes. Per scenario:

1. the worker's RSS when it is ready, and once a few warm-up runs have parked and completed
   (every module a run loads is loaded: the baseline);
2. N runs started together and parked (all ``awaiting_approval`` in visibility); the RSS then,
   less the baseline, over the runs the cache holds (the ``sticky_cache_size`` gauge) is the
   **RSS per cached run**;
3. every run resumed at once: the time until all N completed, and the worker's and the
   server's CPU per run, with the sticky cache's forced evictions, misses and the workflow
   tasks replayed (from the worker's metrics). With a cache smaller than N, each resumed run
   beyond the cache was evicted and is replayed from its history: that is what evictions
   cost.

Every run's answer is checked after the timed window (a run that did not answer is reported,
not hidden). Load average is printed at the start and the end: the machine is shared, so
compare the scenarios of one run, not absolute numbers across runs.

Run: ``.venv/bin/python bench/worker_memory_bench.py`` (``--quick`` for a smoke run under a
minute, ``--markdown`` for tables to paste, ``--scenario CACHE:JOBS[:SLOTS[:POLLERS]]``
repeatable). The worker's other ``WORKFLOW__`` settings come from the environment, e.g.
``WORKFLOW__WORKER_WORKFLOW_SANDBOX=true`` to measure workflow code in Temporal's sandbox.
Results go to docs/BENCHMARKS.md by hand; docs/SCALING.md reads them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.table import Table
from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from bench.measures import until_settled
from bench.peers_bench import print_table
from bench.processes import (
    STICKY_CACHE_EVICTIONS,
    STICKY_CACHE_MISSES,
    STICKY_CACHE_SIZE,
    load_average,
    memory_kib,
    metric_totals,
    tree_cpu_seconds,
)
from skillweave.agent import AgentSpec, ApprovalDecision, ApprovalOptions
from skillweave.cli.temporal_server import dev_server, free_port
from skillweave.config import Settings, bundled_skills_dir
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import SIGNAL_APPROVE, workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from workflows.worker import running_worker

REPO: Final = Path(__file__).resolve().parents[1]
SKILL: Final = "commit-message"
SCRIPT: Final = f"""\
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {SKILL}}}}}]
  - tool_calls:
      - {{name: run_skill_script, arguments: {{skill: {SKILL}, script: scripts/lint_commit.py}}}}
  - say: "parked and resumed"
    expect: {{tool_results: [{{contains: not approved}}]}}
"""
"""Activate, ask to run the linter (held for approval: the park), answer once denied."""
ANSWER: Final = "parked and resumed"
AGENT: Final = AgentSpec(skills=(SKILL,), approvals=ApprovalOptions(skills=(SKILL,)))
DENIAL: Final = ApprovalDecision(approved=False, note="benchmark resume", by="bench")
TASK_QUEUE: Final = "memory-bench"
WARM_UP: Final = 5
READY: Final = "ready"
STALL_SECONDS: Final = 120.0
SETTLE_SECONDS: Final = 2.0
AT_ONCE: Final = 64
"""Starts, signals and result reads in flight at once from the driver."""
MIB: Final = 1024.0
METRICS: Final = {
    "evictions": STICKY_CACHE_EVICTIONS,
    "misses": STICKY_CACHE_MISSES,
}
"""The worker's runtime counters of its sticky cache: the shown name, the metric. An eviction
drops a cached run (to make room, or after every task with no cache), and the run's next task
replays its whole history; a miss is a task on the worker's own (sticky) queue for a run it no
longer caches. (The SDK's ``workflow_task_replay_latency`` histogram is no replay count: it
times every workflow task, cached or not.)"""
CACHE_SIZE: Final = STICKY_CACHE_SIZE
"""The runs the worker's cache holds (a gauge)."""


@dataclass(frozen=True)
class Scenario:
    """One worker's tuning and the runs it holds: `cache` runs cached, `jobs` in flight;
    `slots` (workflow task slots) and `pollers` (of each kind) when not the defaults."""

    cache: int
    jobs: int
    slots: int | None = None
    pollers: int | None = None

    @classmethod
    def parse(cls, text: str) -> Scenario:
        """``CACHE:JOBS[:SLOTS[:POLLERS]]``, e.g. ``100:1000`` or ``1000:200:10:2``.

        Raises:
            argparse.ArgumentTypeError: not that shape, or a number below 1 (cache: 0).
        """
        parts = text.split(":")
        try:
            numbers = [int(part) for part in parts]
        except ValueError:
            numbers = []
        if not 2 <= len(numbers) <= 4 or numbers[0] < 0 or min(numbers[1:]) < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r}: give CACHE:JOBS[:SLOTS[:POLLERS]], e.g. 100:1000"
            )
        return cls(*numbers)  # type: ignore[arg-type]

    def environment(self) -> dict[str, str]:
        """The worker's tuning as the variables ``skillweave worker`` reads."""
        found = {"WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS": str(self.cache)}
        if self.slots is not None:
            found["WORKFLOW__WORKER_MAX_CONCURRENT_WORKFLOW_TASKS"] = str(self.slots)
        if self.pollers is not None:
            found["WORKFLOW__WORKER_WORKFLOW_POLLERS"] = str(self.pollers)
            found["WORKFLOW__WORKER_ACTIVITY_POLLERS"] = str(self.pollers)
        return found

    def label(self) -> str:
        extra = "".join(
            f" · {name} {value}"
            for name, value in (("slots", self.slots), ("pollers", self.pollers))
            if value is not None
        )
        return f"cache {self.cache}{extra}"


SCENARIOS: Final = (
    Scenario(1000, 50),
    Scenario(1000, 200),
    Scenario(1000, 1000),
    Scenario(100, 1000),
)
QUICK_SCENARIOS: Final = (Scenario(1000, 10), Scenario(4, 10))


@dataclass(frozen=True)
class Measured:
    """What one scenario measured (memory in KiB, CPU in seconds, times in seconds)."""

    scenario: Scenario
    rss_ready: int
    rss_warm: int
    rss_parked: int
    rss_peak: int
    cached: float
    park_seconds: float
    park_worker_cpu: float
    resume_seconds: float
    resume_worker_cpu: float
    resume_server_cpu: float
    parking: Mapping[str, float]
    """Each of :data:`METRICS`' shown names: its growth while the runs parked."""
    resuming: Mapping[str, float]
    """The same while they resumed and completed."""
    answered: int


def per_cached_run_kib(measured: Measured) -> float | None:
    """The RSS a cached run costs: the parked RSS over the warm baseline, per run the cache
    held then; None when it held none."""
    if measured.cached < 1:
        return None
    return (measured.rss_parked - measured.rss_warm) / measured.cached


def growth(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """Each counter of :data:`METRICS` (by its shown name): its growth from the scrape
    `before` to the scrape `after` (absent: 0, as the SDK exports a counter once it counts)."""
    return {
        name: after.get(metric, 0.0) - before.get(metric, 0.0) for name, metric in METRICS.items()
    }


# --- the worker subprocess ------------------------------------------------------------------


def _services(root: Path, settings: Settings) -> AgentServices:
    """The worker's services over `root`'s store: the bundled skills, the scripted model and
    a sandbox client that is never called (every script run is denied)."""
    return AgentServices(
        settings=settings,
        registry=SkillRegistry.from_scan(SkillScanner([bundled_skills_dir()]).scan()),
        store=LocalArtifactStore(root / "store"),
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=SandboxClient("http://127.0.0.1:9", token="never-called"),
    )


async def _worker(address: str, root: Path, metrics_port: int) -> None:
    settings = Settings(_env_file=None)  # the tuning under test, from the environment
    services = _services(root, settings)
    runtime = Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"127.0.0.1:{metrics_port}")
        )
    )
    client = await Client.connect(
        address, data_converter=data_converter(services.store), runtime=runtime
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with running_worker(client, services, settings):
        print(READY, flush=True)
        await stop.wait()


def worker_main(argv: Sequence[str]) -> int:
    """``python -m bench.worker_memory_bench worker ...``: the worker, until SIGTERM."""
    parser = argparse.ArgumentParser(prog="worker_memory_bench worker")
    parser.add_argument("--address", required=True)
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--metrics-port", required=True, type=int)
    options = parser.parse_args(argv)
    asyncio.run(_worker(options.address, options.root, options.metrics_port))
    return 0


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    metrics_url: str

    def scrape(self) -> dict[str, float]:
        with urllib.request.urlopen(self.metrics_url, timeout=10) as answer:
            return metric_totals(answer.read().decode())

    def cpu(self) -> float:
        return tree_cpu_seconds(self.process.pid)

    def rss(self, key: str = "VmRSS") -> int:
        return memory_kib(self.process.pid, key)


@contextlib.asynccontextmanager
async def _spawned(scenario: Scenario, address: str, root: Path) -> AsyncIterator[_Worker]:
    port = free_port()
    # The caller's other worker settings pass (WORKFLOW__WORKER_WORKFLOW_SANDBOX=true, say);
    # the scenario's tuning and the queue win.
    environment = os.environ | scenario.environment() | {"WORKFLOW__TASK_QUEUE": TASK_QUEUE}
    command = [sys.executable, "-m", "bench.worker_memory_bench", "worker"]
    command += ["--address", address, "--root", str(root), "--metrics-port", str(port)]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 120)
        if line.decode().strip() != READY:
            raise RuntimeError(f"the worker did not start (exit {process.poll()}): {line!r}")
        yield _Worker(process, f"http://127.0.0.1:{port}/metrics")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.to_thread(process.wait), 30)
        except TimeoutError:
            process.kill()


# --- the driver -----------------------------------------------------------------------------


async def _bounded(calls: Sequence[object]) -> list[object]:
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(call: object) -> object:
        async with gate:
            return await call  # type: ignore[misc]

    return await asyncio.gather(*(one(call) for call in calls))


async def _count(client: Client, query: str) -> int:
    return (await client.count_workflows(query)).count


async def _park(engine: TemporalEngine, run_ids: Sequence[str]) -> None:
    """Start `run_ids` together; return once every one waits for its approval."""
    await _bounded(
        [
            engine.start(RunRequest(run_id=r, task="Lint my commit message.", agent=AGENT))
            for r in run_ids
        ]
    )
    prefix = run_ids[0].rsplit("-", 1)[0]
    query = (
        f'WorkflowId STARTS_WITH "{workflow_id(prefix)}-" AND ExecutionStatus = "Running" '
        'AND SkillweavePhase = "awaiting_approval"'
    )

    async def parked() -> dict[str, int]:
        return {"parked": await _count(engine.client, query)}

    await until_settled(
        parked, lambda v: v["parked"] >= len(run_ids), stall_seconds=STALL_SECONDS, what="parking"
    )


async def _resume(client: Client, run_ids: Sequence[str]) -> None:
    """Deny every run's approval; return once every one completed."""
    await _bounded(
        [client.get_workflow_handle(workflow_id(r)).signal(SIGNAL_APPROVE, DENIAL) for r in run_ids]
    )
    prefix = run_ids[0].rsplit("-", 1)[0]
    query = f'WorkflowId STARTS_WITH "{workflow_id(prefix)}-" AND ExecutionStatus != "Running"'

    async def closed() -> dict[str, int]:
        return {"closed": await _count(client, query)}

    await until_settled(
        closed, lambda v: v["closed"] >= len(run_ids), stall_seconds=STALL_SECONDS, what="resuming"
    )


async def _answered(engine: TemporalEngine, run_ids: Sequence[str]) -> int:
    results = await _bounded([engine.result(r) for r in run_ids])
    return sum(1 for r in results if r.status == "completed" and r.answer == ANSWER)  # type: ignore[attr-defined]


async def measure(scenario: Scenario, console: Console) -> Measured:
    """One scenario on a fresh dev server and worker."""
    with tempfile.TemporaryDirectory(prefix="worker-memory-") as folder:
        root = Path(folder)
        store = LocalArtifactStore(root / "store")
        async with dev_server(port=0, ui_port=None) as server:
            client = await Client.connect(server.address, data_converter=data_converter(store))
            engine = TemporalEngine(client, task_queue=TASK_QUEUE, store=store)
            async with _spawned(scenario, server.address, root) as worker:
                rss_ready = worker.rss()
                warm = [f"warm-{i}" for i in range(WARM_UP)]
                await _park(engine, warm)
                await _resume(client, warm)
                await asyncio.sleep(SETTLE_SECONDS)
                rss_warm, before = worker.rss(), worker.scrape()
                runs = [f"job-{i}" for i in range(scenario.jobs)]
                cpu, started = worker.cpu(), time.monotonic()
                await _park(engine, runs)
                park_seconds, park_cpu = time.monotonic() - started, worker.cpu() - cpu
                await asyncio.sleep(SETTLE_SECONDS)
                rss_parked, parked = worker.rss(), worker.scrape()
                cached = parked.get(CACHE_SIZE, 0.0)
                console.print(
                    f"  {scenario.label()} · {scenario.jobs} runs parked in {park_seconds:.1f} s "
                    f"· RSS {rss_parked / MIB:.0f} MiB · {cached:g} cached"
                )
                cpu, server_cpu = worker.cpu(), tree_cpu_seconds(server.pid)
                started = time.monotonic()
                await _resume(client, runs)
                resume_seconds = time.monotonic() - started
                resume_cpu = worker.cpu() - cpu
                resume_server_cpu = tree_cpu_seconds(server.pid) - server_cpu
                after, rss_peak = worker.scrape(), worker.rss("VmHWM")
                answered = await _answered(engine, runs)
    return Measured(
        scenario=scenario,
        rss_ready=rss_ready,
        rss_warm=rss_warm,
        rss_parked=rss_parked,
        rss_peak=rss_peak,
        cached=cached,
        park_seconds=park_seconds,
        park_worker_cpu=park_cpu,
        resume_seconds=resume_seconds,
        resume_worker_cpu=resume_cpu,
        resume_server_cpu=resume_server_cpu,
        parking=growth(before, parked),
        resuming=growth(parked, after),
        answered=answered,
    )


# --- the report -----------------------------------------------------------------------------


def _memory_table(rows: Sequence[Measured]) -> Table:
    table = Table(
        title="Worker memory: runs parked mid-run (RSS, MiB)",
        caption="per cached run = (parked − warm) ÷ runs in the cache (sticky_cache_size)",
    )
    for header in ("worker", "runs", "ready", "warm", "parked", "peak", "cached", "per cached run"):
        table.add_column(header, justify="left" if header == "worker" else "right")
    for m in rows:
        per = per_cached_run_kib(m)
        table.add_row(
            m.scenario.label(),
            str(m.scenario.jobs),
            f"{m.rss_ready / MIB:.0f}",
            f"{m.rss_warm / MIB:.0f}",
            f"{m.rss_parked / MIB:.0f}",
            f"{m.rss_peak / MIB:.0f}",
            f"{m.cached:g}",
            "–" if per is None else f"{per:.0f} KiB",
        )
    return table


def _resume_table(rows: Sequence[Measured]) -> Table:
    table = Table(
        title="Parking and resuming every run (CPU ms per run; evictions, misses and replays "
        "from the worker's metrics)",
        caption="evictions, misses: while parking / while resuming; a run "
        "evicted from the cache replays its history when it resumes",
    )
    headers = (
        "worker",
        "runs",
        "park s",
        "park worker CPU",
        "resume s",
        "resume worker CPU",
        "resume server CPU",
        *METRICS,
        "answered",
    )
    for header in headers:
        table.add_column(header, justify="left" if header == "worker" else "right")
    for m in rows:
        jobs = m.scenario.jobs
        answered = f"{m.answered}/{jobs}"
        table.add_row(
            m.scenario.label(),
            str(jobs),
            f"{m.park_seconds:.1f}",
            f"{1000 * m.park_worker_cpu / jobs:.1f}",
            f"{m.resume_seconds:.1f}",
            f"{1000 * m.resume_worker_cpu / jobs:.1f}",
            f"{1000 * m.resume_server_cpu / jobs:.1f}",
            *(f"{m.parking[name]:g} / {m.resuming[name]:g}" for name in METRICS),
            answered if m.answered == jobs else f"[bold red]{answered}[/]",
        )
    return table


async def _measure_all(scenarios: Sequence[Scenario], console: Console) -> list[Measured]:
    return [await measure(scenario, console) for scenario in scenarios]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["worker"]:
        return worker_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small scenarios (a smoke run)")
    parser.add_argument(
        "--scenario",
        type=Scenario.parse,
        action="append",
        help="CACHE:JOBS[:SLOTS[:POLLERS]] (repeatable; default 1000:50 1000:200 1000:1000 "
        "100:1000)",
    )
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)
    scenarios = options.scenario or (QUICK_SCENARIOS if options.quick else SCENARIOS)
    console = Console(width=max(Console().width, 160))
    console.print(
        f"skillweave worker memory benchmark · "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC · {os.cpu_count()} cores · "
        f"{platform.python_implementation()} {platform.python_version()} · workflow sandbox "
        f"{'on' if Settings(_env_file=None).workflow.worker_workflow_sandbox else 'off'} · "
        f"load average {load_average()} (1, 5, 15 min)"
    )
    rows = asyncio.run(_measure_all(scenarios, console))
    print_table(console, _memory_table(rows), markdown=options.markdown)
    print_table(console, _resume_table(rows), markdown=options.markdown)
    console.print(f"load average at the end: {load_average()} (1, 5, 15 min)")
    return 0 if all(m.answered == m.scenario.jobs for m in rows) else 1


if __name__ == "__main__":
    # Run as a script this file is ``__main__``; one module, whichever way it was started.
    from bench.worker_memory_bench import main as imported_main

    sys.exit(imported_main())
