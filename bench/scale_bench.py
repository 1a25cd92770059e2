"""Benchmark: many jobs at once on one worker, skillweave against its peers, in steps/s and CPU.

``bench/peers_bench.py`` runs one job at a time; long-running agent fleets run many. Here N jobs
of R steps each are started together on ONE worker, for skillweave and each peer, with the same
frameworks, workflows, models and tool as the peer benchmark (imported from it: a step is one
cheap tool call and the model call after it). Every batch, one framework at one N, gets a fresh
dev server (``skillweave.cli.temporal_server.dev_server``: the same ``temporal`` binary and
``DEV_SERVER_TUNING`` for all) and a fresh worker, so that CPU and memory are attributable:

- **the server**: the dev server process (and any children); its CPU (utime + stime) read from
  ``/proc/<pid>/stat`` before and after the timed window.
- **the worker**: a subprocess (``python -m bench.scale_bench worker --framework F --address A
  --task-queue Q ...``) that prints one ``ready`` line and runs until SIGTERM; its CPU from
  ``/proc``, its resident memory after a warm-up job (``VmRSS``) and its peak (``VmHWM``): peak
  RSS per job = (peak − RSS after warm-up) ÷ N. It serves the SDK's runtime metrics (Prometheus,
  on loopback), scraped at the end: sticky-cache forced evictions and misses, the cache's size,
  and workflow-task replays, which say how the worker fares when its cache holds fewer
  workflows than there are jobs in flight (``--cache 100 --jobs 200``).
- **the client**: this process starts the N workflows together (``asyncio.gather`` of the
  starts), then awaits every result; its CPU (``getrusage``) around the window is reported
  separately.

The worker's tuning is identical for every framework and explicit (``--cache``,
``--workflow-slots``, ``--activity-slots``, ``--local-activity-slots``, ``--pollers``); unset,
each is skillweave's default (``WORKFLOW__WORKER_…``, ``workflows.worker.worker_tuning``), which
every framework's worker then gets too. One warm-up job runs before the window (imports, the
workflow sandbox). The window runs from the first start to the last result; a job that fails or
is not done by ``--timeout`` is counted, never hidden. ``--local-reads`` makes skillweave's
runs read skill files with local activities of their own (its worker answers ``run_limits``
without ``model_calls_read``, as an earlier release's did): run with and without it, in turn,
to measure what a read riding with the model call saves. After the window the histories of a
sample of jobs (:data:`SAMPLE`) give events and bytes per step (the whole run ÷ R, as in the
peer benchmark's table 2). Batches run in rotated order at each N, so that the machine's load
falls alike on every framework.

Target (issue 47): skillweave's steps/s at 200 concurrent jobs ≥ 1.5× the fastest peer's; at
1,000 every job completes and the ratio holds.

The worker's side (its tuning, the subprocess) is ``bench/scale_worker.py``; what is read of a
process (``/proc``, its metrics) is ``bench/processes.py``.

Run: ``make bench-scale`` (the peers' ``.venv-bench``), or ``python bench/scale_bench.py
--frameworks skillweave`` in ``.venv`` for skillweave alone (the peers are skipped, with a note,
where they are not installed). ``--quick`` is a smoke run (N = 10, R = 3); ``--markdown`` prints
tables to paste into docs/BENCHMARKS.md. Needs no network beyond loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from rich.console import Console
from rich.table import Table
from temporalio.client import Client

from bench.peers_bench import (
    ANSWER,
    FRAMEWORKS,
    INSTALL_HINT,
    PEERS_INSTALLED,
    SKILLWEAVE,
    history_bytes,
    peers,
    print_table,
    prompt,
    rotated,
    skillweave_request,
    skillweave_services,
)
from bench.processes import (
    STICKY_CACHE_EVICTIONS,
    STICKY_CACHE_HITS,
    STICKY_CACHE_MISSES,
    STICKY_CACHE_SIZE,
    load_average,
    memory_kib,
    own_cpu_seconds,
    tree_cpu_seconds,
)
from bench.scale_worker import (
    TASK_QUEUE,
    Tuning,
    add_tuning_options,
    spawned_worker,
    tuning_of,
    worker_main,
)
from bench.temporal_bench import SKILL
from skillweave.cli.temporal_server import dev_server
from skillweave.engines.contract import workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage import store_identity

JOBS: Final = (50, 200, 1000)
STEPS: Final = 10
QUICK_JOBS: Final = (10,)
QUICK_STEPS: Final = 3
SAMPLE: Final = 10
TARGET_RATIO: Final = 1.5
TIMEOUT_SECONDS: Final = 900.0
METRICS: Final = {
    "forced evictions": STICKY_CACHE_EVICTIONS,
    "hits": STICKY_CACHE_HITS,
    "misses (replays)": STICKY_CACHE_MISSES,
    "size at end": STICKY_CACHE_SIZE,
}
"""What the worker's runtime metrics say of its sticky cache: the shown name, the metric. A miss
is a workflow task for a workflow not in the cache: the worker replays its whole history."""


# --- the client side ------------------------------------------------------------------------


class _Starter(Protocol):
    """Starts one framework's jobs and waits for them, as its documented client does."""

    client: Client

    async def start(self, run_id: str, steps: int) -> None: ...

    async def finish(self, run_id: str) -> None: ...

    def workflow_id(self, run_id: str) -> str: ...


@dataclass
class _SkillweaveStarter:
    client: Client
    engine: TemporalEngine

    async def start(self, run_id: str, steps: int) -> None:
        await self.engine.start(skillweave_request(run_id, steps))

    async def finish(self, run_id: str) -> None:
        result = await self.engine.result(run_id)
        if result.status != "completed":
            raise RuntimeError(f"{result.status}: {result.reason}")

    def workflow_id(self, run_id: str) -> str:
        return workflow_id(run_id)


@dataclass
class _PeerStarter:
    client: Client
    workflow: Any
    page: Path

    async def start(self, run_id: str, steps: int) -> None:
        task = prompt(str(self.page), steps)
        await self.client.start_workflow(self.workflow, task, id=run_id, task_queue=TASK_QUEUE)

    async def finish(self, run_id: str) -> None:
        answer = await self.client.get_workflow_handle(run_id).result()
        if answer != ANSWER:
            raise RuntimeError(f"answered {answer!r}")

    def workflow_id(self, run_id: str) -> str:
        return run_id


async def _starter(framework: str, address: str, root: Path) -> _Starter:
    if framework == SKILLWEAVE:
        store = skillweave_services(root).store
        client = await Client.connect(address, data_converter=data_converter(store))
        store_id = await store_identity(store)
        engine = TemporalEngine(client, task_queue=TASK_QUEUE, store=store, store_id=store_id)
        return _SkillweaveStarter(client, engine)
    skillweave_services(root)  # writes the probe skill's page the peers read
    peer = peers()[framework]
    client = await Client.connect(address, plugins=peer.client_plugins())
    page = root / "skills" / SKILL / "references" / "page.md"
    return _PeerStarter(client, peer.workflow, page)


# --- one batch ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """One framework's N jobs of R steps, started together on one worker: what was measured."""

    framework: str
    jobs: int
    steps: int
    completed: int
    wall_seconds: float
    worker_cpu: float
    server_cpu: float
    client_cpu: float
    history_events: float
    history_bytes: float
    rss_ready_kib: int
    rss_peak_kib: int
    metrics: Mapping[str, float] = field(default_factory=dict)
    failures: tuple[str, ...] = ()

    @property
    def done_steps(self) -> int:
        """The steps of the jobs that completed."""
        return self.completed * self.steps

    @property
    def steps_per_second(self) -> float:
        """Completed steps ÷ the window (first start to last result)."""
        return self.done_steps / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def jobs_per_second(self) -> float:
        """Completed jobs ÷ the window."""
        return self.completed / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def cpu_ms_per_step(self, cpu_seconds: float) -> float:
        """`cpu_seconds` (one process's, over the window) per completed step, in ms."""
        return cpu_seconds * 1000 / self.done_steps if self.done_steps else float("nan")

    @property
    def cpu_ms_total(self) -> float:
        """The CPU of a completed step, worker + server + client, in ms."""
        return self.cpu_ms_per_step(self.worker_cpu + self.server_cpu + self.client_cpu)

    @property
    def steps_per_cpu_second(self) -> float:
        """Completed steps per CPU second of the three processes: the steps/s that one core
        given to nothing else would sustain, whatever else ran on the machine meanwhile."""
        total = self.cpu_ms_total
        return 1000 / total if total > 0 else 0.0

    @property
    def peak_kib_per_job(self) -> float:
        """The worker's peak RSS above its RSS after the warm-up, ÷ N."""
        return max(0, self.rss_peak_kib - self.rss_ready_kib) / self.jobs


def sample(items: Sequence[str], size: int) -> list[str]:
    """At most `size` of `items`, spread evenly from the first to the last."""
    if len(items) <= size:
        return list(items)
    return [items[round(n * (len(items) - 1) / (size - 1))] for n in range(size)]


def batch_order(frameworks: Sequence[str], jobs: Sequence[int]) -> list[tuple[int, str]]:
    """Every (N, framework) batch: at each N the frameworks in turn, rotated one further than
    at the N before, so that no framework always runs first (or last) on a loaded machine."""
    return [(n, f) for index, n in enumerate(jobs) for f in rotated(list(frameworks), index)]


async def _window(
    starter: _Starter, run_ids: Sequence[str], steps: int, timeout: float
) -> tuple[float, list[str], list[str]]:
    """Start every job together, then wait for each; the seconds from the first start to the
    last result, the ids that completed, and one line per failure."""
    begun = time.perf_counter()
    ended: list[float] = []

    async def one(run_id: str) -> None:
        await starter.start(run_id, steps)
        await starter.finish(run_id)
        ended.append(time.perf_counter())

    async def bounded(run_id: str) -> None:
        await asyncio.wait_for(one(run_id), timeout)

    outcomes = await asyncio.gather(*(bounded(r) for r in run_ids), return_exceptions=True)
    completed = [r for r, o in zip(run_ids, outcomes, strict=True) if o is None]
    failures = [
        f"{r}: {type(o).__name__}: {o}"[:200]
        for r, o in zip(run_ids, outcomes, strict=True)
        if isinstance(o, BaseException)
    ]
    return (max(ended) - begun if ended else 0.0), completed, failures


async def _histories(starter: _Starter, run_ids: Sequence[str]) -> tuple[float, float]:
    """The mean events and bytes of the sampled jobs' histories."""
    if not run_ids:
        return 0.0, 0.0
    events = []
    sizes = []
    for run_id in run_ids:
        handle = starter.client.get_workflow_handle(starter.workflow_id(run_id))
        history = await handle.fetch_history()
        events.append(len(history.events))
        sizes.append(history_bytes(history.events))
    return sum(events) / len(events), sum(sizes) / len(sizes)


async def run_batch(
    framework: str, jobs: int, steps: int, tuning: Tuning, *, timeout: float
) -> Batch:
    """One batch on a fresh dev server and a fresh worker subprocess."""
    with tempfile.TemporaryDirectory(prefix="skillweave-scale-") as tmp:
        root = Path(tmp)
        async with dev_server(port=0, ui_port=None) as server:
            starter = await _starter(framework, server.address, root)
            async with spawned_worker(framework, server.address, root, tuning) as worker:
                warm = f"{framework}-warmup"
                await asyncio.wait_for(starter.start(warm, steps), timeout)
                await asyncio.wait_for(starter.finish(warm), timeout)
                rss_ready = memory_kib(worker.pid, "VmRSS")
                before = (
                    tree_cpu_seconds(worker.pid),
                    tree_cpu_seconds(server.pid),
                    own_cpu_seconds(),
                )
                run_ids = [f"{framework}-{jobs}-{n}" for n in range(jobs)]
                wall, completed, failures = await _window(starter, run_ids, steps, timeout)
                after = (
                    tree_cpu_seconds(worker.pid),
                    tree_cpu_seconds(server.pid),
                    own_cpu_seconds(),
                )
                rss_peak = memory_kib(worker.pid, "VmHWM")
                metrics = await worker.metrics()
                events, size = await _histories(starter, sample(completed, SAMPLE))
    worker_cpu, server_cpu, client_cpu = (b - a for a, b in zip(before, after, strict=True))
    return Batch(
        framework=framework,
        jobs=jobs,
        steps=steps,
        completed=len(completed),
        wall_seconds=wall,
        worker_cpu=worker_cpu,
        server_cpu=server_cpu,
        client_cpu=client_cpu,
        history_events=events,
        history_bytes=size,
        rss_ready_kib=rss_ready,
        rss_peak_kib=rss_peak,
        metrics={shown: metrics[name] for shown, name in METRICS.items() if name in metrics},
        failures=tuple(failures),
    )


# --- verdicts and tables --------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """skillweave against the fastest peer at one N (by steps/s)."""

    jobs: int
    skillweave: Batch
    peer: Batch

    @property
    def ratio(self) -> float:
        """skillweave's steps/s ÷ the fastest peer's."""
        peer = self.peer.steps_per_second
        return self.skillweave.steps_per_second / peer if peer > 0 else float("inf")

    @property
    def cpu_ratio(self) -> float:
        """The fastest peer's CPU per step ÷ skillweave's: how many more steps skillweave runs
        on the same cores when the CPU, not the wall clock, is what runs out."""
        own = self.skillweave.cpu_ms_total
        return self.peer.cpu_ms_total / own if own > 0 else float("inf")

    @property
    def all_completed(self) -> bool:
        """Whether every skillweave job of the batch completed."""
        return self.skillweave.completed == self.skillweave.jobs

    @property
    def met(self) -> bool:
        """At least :data:`TARGET_RATIO`, with every skillweave job completed."""
        return self.all_completed and self.ratio >= TARGET_RATIO


def verdicts(batches: Sequence[Batch]) -> list[Verdict]:
    """One :class:`Verdict` per N that has a skillweave batch and at least one peer's."""
    found = []
    for jobs in sorted({b.jobs for b in batches}):
        own = [b for b in batches if b.jobs == jobs and b.framework == SKILLWEAVE]
        others = [b for b in batches if b.jobs == jobs and b.framework != SKILLWEAVE]
        if own and others:
            fastest = max(others, key=lambda b: b.steps_per_second)
            found.append(Verdict(jobs, own[0], fastest))
    return found


def _mib(kib: float) -> str:
    return f"{kib / 1024:,.0f}"


def _throughput_table(batches: Sequence[Batch]) -> Table:
    best = {v.jobs: v.peer.steps_per_second for v in verdicts(batches)}
    table = Table(title="1. Throughput: N jobs × R steps started together on one worker")
    columns = ("framework", "N", "R", "completed", "window s", "steps/s", "jobs/s", "÷ peer")
    for column in (*columns, "steps / CPU s"):
        table.add_column(column, justify="right")
    for b in batches:
        ratio = f"{b.steps_per_second / best[b.jobs]:.2f}×" if best.get(b.jobs) else ""
        done = f"{b.completed}/{b.jobs}"
        table.add_row(
            b.framework,
            str(b.jobs),
            str(b.steps),
            done if b.completed == b.jobs else f"[bold red]{done}[/]",
            f"{b.wall_seconds:.1f}",
            f"{b.steps_per_second:.1f}",
            f"{b.jobs_per_second:.2f}",
            ratio,
            f"{b.steps_per_cpu_second:.1f}",
        )
    table.caption = (
        "window = first start to last result; steps/s and jobs/s count completed jobs; "
        "÷ peer = steps/s ÷ the fastest peer's at that N; steps / CPU s = completed steps per "
        "CPU second of worker, server and client together (table 2's total), which the load "
        "of other processes on the machine does not move"
    )
    return table


def _cost_table(batches: Sequence[Batch]) -> Table:
    table = Table(title="2. What a step costs: CPU ms per step, history per step, memory per job")
    columns = ("framework", "N", "worker", "server", "client", "total")
    for column in (*columns, "events", "bytes", "RSS ready MiB", "peak MiB", "KiB / job"):
        table.add_column(column, justify="right")
    for b in batches:
        cpu = (b.worker_cpu, b.server_cpu, b.client_cpu)
        table.add_row(
            b.framework,
            str(b.jobs),
            *(f"{b.cpu_ms_per_step(c):.1f}" for c in cpu),
            f"{b.cpu_ms_per_step(sum(cpu)):.1f}",
            f"{b.history_events / b.steps:.1f}",
            f"{b.history_bytes / b.steps:,.0f}",
            _mib(b.rss_ready_kib),
            _mib(b.rss_peak_kib),
            f"{b.peak_kib_per_job:,.0f}",
        )
    table.caption = (
        "CPU = utime + stime from /proc over the window ÷ completed steps (the client: this "
        f"process); history = a whole run's, mean of {SAMPLE} sampled jobs, ÷ R; RSS ready = the "
        "worker after one warm-up job; KiB / job = (peak − ready) ÷ N"
    )
    return table


def _cache_table(batches: Sequence[Batch]) -> Table:
    table = Table(title="3. The worker's sticky cache (the SDK's runtime metrics, at the end)")
    for column in ("framework", "N", *METRICS):
        table.add_column(column, justify="right")
    for b in batches:
        values = (b.metrics.get(name) for name in METRICS)
        table.add_row(b.framework, str(b.jobs), *("" if v is None else f"{v:,.0f}" for v in values))
    table.caption = "counters since the worker started (the warm-up job included)"
    return table


def _targets_table(found: Sequence[Verdict]) -> Table:
    table = Table(title=f"Target: skillweave steps/s ≥ {TARGET_RATIO}× the fastest peer's")
    columns = ("N", "skillweave", "fastest peer", "peer", "ratio", "all done", "")
    for column in (*columns, "CPU / step: skillweave", "peer", "peer ÷ skillweave"):
        table.add_column(column, justify="right")
    for v in found:
        table.add_row(
            str(v.jobs),
            f"{v.skillweave.steps_per_second:.1f} steps/s",
            v.peer.framework,
            f"{v.peer.steps_per_second:.1f} steps/s",
            f"{v.ratio:.2f}×",
            "yes" if v.all_completed else "[bold red]no[/]",
            "met" if v.met else "[bold red]MISSED[/]",
            f"{v.skillweave.cpu_ms_total:.1f} ms",
            f"{v.peer.cpu_ms_total:.1f} ms",
            f"{v.cpu_ratio:.2f}×",
        )
    table.caption = (
        "the target is judged on steps/s (the window); the CPU a step costs (worker + server + "
        "client) says what the same cores would sustain on a machine shared with nothing else"
    )
    return table


# --- the command ----------------------------------------------------------------------------


def _frameworks(wanted: Sequence[str], console: Console) -> list[str]:
    if PEERS_INSTALLED:
        return list(wanted)
    skipped = [f for f in wanted if f != SKILLWEAVE]
    if skipped:
        console.print(f"[yellow]note:[/] skipping {', '.join(skipped)}: {INSTALL_HINT}")
    return [f for f in wanted if f == SKILLWEAVE]


def _summary(batch: Batch) -> str:
    """One line for a finished batch, printed at once (a run cut short keeps its figures)."""
    worker, server, client = (
        batch.cpu_ms_per_step(cpu) for cpu in (batch.worker_cpu, batch.server_cpu, batch.client_cpu)
    )
    history = f"{batch.history_events / batch.steps:.1f} events"
    history += f", {batch.history_bytes / batch.steps:,.0f} bytes"
    return " · ".join(
        [
            f"{batch.completed}/{batch.jobs} jobs in {batch.wall_seconds:.1f} s",
            f"{batch.steps_per_second:.1f} steps/s",
            f"CPU ms/step worker {worker:.1f} server {server:.1f} client {client:.1f}",
            f"{history} / step",
            f"{batch.peak_kib_per_job:,.0f} KiB / job",
            *(f"{name} {value:,.0f}" for name, value in batch.metrics.items()),
        ]
    )


async def _measure(
    frameworks: Sequence[str],
    jobs: Sequence[int],
    steps: int,
    tuning: Tuning,
    *,
    timeout: float,
    console: Console,
) -> list[Batch]:
    batches: list[Batch] = []
    order = batch_order(frameworks, jobs)
    for number, (n, framework) in enumerate(order, start=1):
        console.print(
            f"batch {number}/{len(order)}: {framework}, {n} jobs × {steps} steps · "
            f"load {load_average()}"
        )
        batch = await run_batch(framework, n, steps, tuning, timeout=timeout)
        console.print(f"  {_summary(batch)}", highlight=False)
        for failure in batch.failures[:3]:
            console.print(f"  [red]failed[/] {failure}", markup=True, highlight=False)
        batches.append(batch)
    return sorted(batches, key=lambda b: (b.jobs, frameworks.index(b.framework)))


def main(argv: Sequence[str] | None = None) -> int:
    """The driver (or, given ``worker`` first, the worker subprocess)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["worker"]:
        return worker_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=list(JOBS), help="N per batch")
    parser.add_argument("--steps", type=int, default=STEPS, help="R, steps per job")
    parser.add_argument(
        "--frameworks", nargs="+", choices=FRAMEWORKS, default=list(FRAMEWORKS), metavar="NAME"
    )
    parser.add_argument("--quick", action="store_true", help=f"N = {QUICK_JOBS}, R = {QUICK_STEPS}")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument(
        "--timeout", type=float, default=TIMEOUT_SECONDS, help="seconds a job may take"
    )
    add_tuning_options(parser)
    options = parser.parse_args(argv)
    if options.quick:
        options.jobs, options.steps = list(QUICK_JOBS), QUICK_STEPS
    console = Console()
    frameworks = _frameworks(options.frameworks, console)
    tuning = tuning_of(options)
    console.print(
        f"skillweave scale benchmark · {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC "
        f"· {os.cpu_count()} cores · {platform.python_implementation()} "
        f"{platform.python_version()} · load average {load_average()} (1, 5, 15 min)\n"
        f"worker tuning: {tuning.describe()}",
        soft_wrap=True,
    )
    batches = asyncio.run(
        _measure(
            frameworks,
            options.jobs,
            options.steps,
            tuning,
            timeout=options.timeout,
            console=console,
        )
    )
    for table in (_throughput_table(batches), _cost_table(batches), _cache_table(batches)):
        print_table(console, table, markdown=options.markdown)
    found = verdicts(batches)
    if found:
        print_table(console, _targets_table(found), markdown=options.markdown)
    console.print(f"load average at the end: {load_average()} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    # Run as a script this file is ``__main__``; the peers' workflows must come from their
    # importable module, which Temporal's sandbox imports again for every workflow run.
    from bench.scale_bench import main as imported_main

    sys.exit(imported_main())
