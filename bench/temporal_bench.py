"""Benchmark: what running a run on Temporal costs over the direct engine, and history growth.

Two tables, both from scripted runs whose turns each make one cheap tool call
(``read_skill_resource`` of a short reference file of a generated skill), so that what is
measured is the engine, not the model or a sandbox:

1. **Per-step overhead.** The same run (``--turns`` read turns, default 20) on the direct engine
   and on the Temporal engine: a real dev server (``.venv/bin/temporal``, started here on free
   ports, in memory) and a worker in this process (``workflows.worker.build_worker``), driven
   through ``TemporalEngine``. Twice on Temporal: with the dev server's defaults, and *tuned*
   (``history.transferProcessorMaxPollRPS=1000``; the default, 20, is what limits a sequential
   run on the dev server's single history shard to ~50 ms a task round trip). A *step* is one
   turn: the tool call, then the next model call. It is measured from the run's own events, as
   the time between consecutive ``model_called`` events of two read turns (the first turn, an
   activation, and the answer are left out); the events carry the engine's clock
   (``time.time()`` in the direct engine; workflow time, the start of the workflow task, on
   Temporal). Wall time per turn over the whole run is shown beside it as a cross-check. One
   warm-up run per engine first, then ``--runs`` runs (default 5). Target: Temporal − direct
   ≤ 40 ms at p50.
2. **History bytes per turn.** One long run (``--long-turns``, default 600) on Temporal; its
   history is fetched (every run: the server suggests continue-as-new past 4,096 events, at
   about turn 510 at 8 events a turn) and each event's serialized size (protobuf bytes, as the
   server stores it) is attributed to the turn in progress: a turn starts at the
   ``ActivityTaskScheduled`` event of its ``invoke_model``. Bytes and events per turn are
   averaged over turns 8–12, 198–202 and the first five turns of the last run, and broken down
   by event type; the size of the state a new run starts from is reported too. Target: flat
   (turn 200 ÷ turn 10 ≤ 1.2).

Run: ``.venv/bin/python bench/temporal_bench.py`` (``--quick`` for a smaller smoke run). Needs no
network.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bench.measures import percentile
from skillweave.agent import AgentEvent, AgentSpec, Budgets
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, Engine, RunRequest, RunResult
from skillweave.engines.contract import SEARCH_ATTRIBUTES, workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import LocalArtifactStore, store_identity
from workflows.worker import build_worker

REPO: Final = Path(__file__).resolve().parents[1]
TEMPORAL_CLI: Final = REPO / ".venv" / "bin" / "temporal"
TASK_QUEUE: Final = "skillweave-bench"
SKILL: Final = "probe"
PAGE: Final = "A short reference page the benchmark reads on every turn.\n" * 4
EARLY_TURN: Final = 10
LATE_TURN: Final = 200
OVERHEAD_TARGET_MS: Final = 40.0
SERVERS: Final[dict[str, dict[str, object]]] = {
    "temporal": {},
    # The dev server's single history shard moves at most 20 transfer-queue batches a second
    # (history.transferProcessorMaxPollRPS, default 20): past a short burst every workflow or
    # activity task of a sequential run waits for that limiter, ~50 ms a round trip.
    "temporal, tuned": {"history.transferProcessorMaxPollRPS": 1000},
}
GROWTH_TARGET: Final = 1.2


def _library(root: Path) -> SkillRegistry:
    folder = root / SKILL
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {SKILL}\ndescription: Benchmark pages. Use when benchmarking.\n---\n"
        "# Probe\nRead references/page.md when asked.\n"
    )
    (folder / "references" / "page.md").write_text(PAGE)
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def _script(reads: int) -> str:
    """A scripted model: activate the probe skill, read its page `reads` times, answer."""
    read = (
        "  - tool_calls: [{name: read_skill_resource, "
        f"arguments: {{skill: {SKILL}, path: references/page.md}}}}]\n"
    )
    return (
        "model: scripted-bench\nturns:\n"
        f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {SKILL}}}}}]\n"
        + read * reads
        + "  - say: done\n"
    )


class _NoSandbox:
    """The probe skill runs no script; a sandbox call would be a bug in the benchmark."""

    async def execute(self, request: object) -> object:
        raise AssertionError("the benchmark run ran a script")

    async def cancel(self, execution_id: str) -> bool:
        return False


def _services(registry: SkillRegistry, store: LocalArtifactStore, reads: int) -> AgentServices:
    return AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=store,
        provider=ScriptedProvider.from_yaml(_script(reads)),
        model="scripted",
        sandbox=_NoSandbox(),  # type: ignore[arg-type]
    )


def _request(run_id: str, reads: int) -> RunRequest:
    limits = Budgets(max_turns=reads + 2, max_tokens=10**9)
    return RunRequest(
        run_id=run_id,
        task="Read the probe page on every turn.",
        agent=AgentSpec(name="bench", skills=(SKILL,), limits=limits),
    )


@dataclass
class _Run:
    result: RunResult
    events: list[AgentEvent]
    wall: float


async def _run(engine: Engine, request: RunRequest) -> _Run:
    started = time.perf_counter()
    await engine.start(request)
    result = await engine.result(request.run_id)
    wall = time.perf_counter() - started
    if isinstance(engine, TemporalEngine):
        events = list((await engine.event_page(request.run_id)).events)
    else:
        events = [event async for event in engine.events(request.run_id)]
    if result.status != "completed":
        raise RuntimeError(f"bench run {request.run_id}: {result.status}: {result.reason}")
    return _Run(result, events, wall)


def _steps(run: _Run) -> list[float]:
    """Seconds between the ``model_called`` events of consecutive read turns."""
    called = [e.at for e in run.events if e.kind == "model_called"]
    # called[0] is the activation turn, called[-1] the answer: steps 2→3 … (n-2)→(n-1).
    reads = called[1:-1]
    return [b - a for a, b in itertools.pairwise(reads)]


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """The dev server prints a banner on the stdout it inherits: give it /dev/null instead."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.asynccontextmanager
async def _temporal(
    store: LocalArtifactStore, dynamic_config: dict[str, object] | None = None
) -> AsyncIterator[Client]:
    extra = [
        arg
        for name, value in (dynamic_config or {}).items()
        for arg in ("--dynamic-config-value", f"{name}={value}")
    ]
    with _quiet_stdout():
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(TEMPORAL_CLI),
            data_converter=data_converter(store),
            search_attributes=list(SEARCH_ATTRIBUTES),
            dev_server_log_level="error",
            dev_server_extra_args=extra,
        )
    async with env:
        yield env.client


# --- 1. per-step overhead -------------------------------------------------------------------


async def _overhead(
    root: Path, *, reads: int, runs: int, console: Console
) -> list[tuple[str, str, bool]]:
    registry = _library(root / "skills")
    store = LocalArtifactStore(root / "store")
    services = _services(registry, store, reads)
    direct = DirectEngine(services)
    by_engine: dict[str, list[_Run]] = {"direct": []}
    for n in range(runs + 1):
        run = await _run(direct, _request(f"direct-{n}", reads))
        if n:  # run 0 warms up
            by_engine["direct"].append(run)
    for label, dynamic_config in SERVERS.items():
        by_engine[label] = []
        store_id = await store_identity(store)
        async with (
            _temporal(store, dynamic_config) as client,
            build_worker(client, services, task_queue=TASK_QUEUE, store_id=store_id),
        ):
            engine = TemporalEngine(client, task_queue=TASK_QUEUE, store=store, store_id=store_id)
            for n in range(runs + 1):
                run = await _run(engine, _request(f"temporal-{n}", reads))
                if n:
                    by_engine[label].append(run)

    table = Table(
        title=f"1. Per-step overhead ({reads} read turns a run, {runs} runs an engine; ms)"
    )
    for column in ("engine", "steps", "step p50", "step p95", "wall / turn p50", "− direct p50"):
        table.add_column(column, justify="right")
    p50: dict[str, float] = {}
    for name, measured in by_engine.items():
        steps = [s * 1000 for run in measured for s in _steps(run)]
        per_turn = [run.wall * 1000 / run.result.turns for run in measured]
        p50[name] = statistics.median(steps)
        table.add_row(
            name,
            str(len(steps)),
            f"{p50[name]:.1f}",
            f"{percentile(steps, 0.95):.1f}",
            f"{statistics.median(per_turn):.1f}",
            f"{p50[name] - p50['direct']:.1f}" if name != "direct" else "",
        )
    table.caption = (
        "step = one read_skill_resource call and the next model call, from consecutive "
        "model_called events; wall / turn = start to result over the run, ÷ turns; tuned = "
        "dev server with history.transferProcessorMaxPollRPS=1000"
    )
    console.print(table)
    return [
        (
            f"{name} − direct step p50 ≤ {OVERHEAD_TARGET_MS:.0f} ms",
            f"{p50[name] - p50['direct']:.1f} ms",
            p50[name] - p50["direct"] <= OVERHEAD_TARGET_MS,
        )
        for name in SERVERS
    ]


# --- 2. history bytes per turn --------------------------------------------------------------


def _kind(event: HistoryEvent) -> str:
    return EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()


def _is_model_call(event: HistoryEvent) -> bool:
    return (
        event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == "invoke_model"
    )


@dataclass
class _Turn:
    bytes: int = 0
    events: int = 0
    run: int = 1
    by_kind: Counter[str] = field(default_factory=Counter)


def _per_turn(runs: Sequence[Sequence[HistoryEvent]]) -> dict[int, _Turn]:
    """Turn number → the events (and their bytes) from its model call to the next one; turn 0
    is what comes before the first model call of the run. A turn's ``run`` is the run its
    model call was in."""
    turns: dict[int, _Turn] = defaultdict(_Turn)
    turn = 0
    for number, events in enumerate(runs, start=1):
        for event in events:
            if _is_model_call(event):
                turn += 1
                turns[turn].run = number
            size = event.ByteSize()
            turns[turn].bytes += size
            turns[turn].events += 1
            turns[turn].by_kind[_kind(event)] += size
    return turns


async def _histories(client: Client, run_id: str) -> list[list[HistoryEvent]]:
    """The events of every execution of the run's workflow (one per continue-as-new), first
    first."""
    runs: list[list[HistoryEvent]] = []
    execution_run_id: str | None = None
    while True:
        handle = client.get_workflow_handle(workflow_id(run_id), run_id=execution_run_id)
        history = await handle.fetch_history()
        runs.insert(0, list(history.events))
        started = history.events[0].workflow_execution_started_event_attributes
        execution_run_id = started.continued_execution_run_id or None
        if execution_run_id is None:
            return runs


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


async def _growth(root: Path, *, turns_total: int, console: Console) -> tuple[str, str, bool]:
    registry = _library(root / "skills")
    store = LocalArtifactStore(root / "store")
    services = _services(registry, store, turns_total - 2)
    run_id = "history-growth"
    # The history is the same whatever the server's poll rate: take the faster server.
    store_id = await store_identity(store)
    async with (
        _temporal(store, SERVERS["temporal, tuned"]) as client,
        build_worker(client, services, task_queue=TASK_QUEUE, store_id=store_id),
    ):
        engine = TemporalEngine(client, task_queue=TASK_QUEUE, store=store, store_id=store_id)
        run = await _run(engine, _request(run_id, turns_total - 2))
        runs = await _histories(client, run_id)
    turns = _per_turn(runs)
    late_end = min(LATE_TURN + 2, run.result.turns - 1)
    windows = {
        "early": range(EARLY_TURN - 2, EARLY_TURN + 3),
        "late": range(late_end - 4, late_end + 1),
    }
    if len(runs) > 1:
        first = min(n for n, t in turns.items() if t.run == len(runs))
        windows["after continue-as-new"] = range(first + 1, first + 6)

    table = Table(title=f"2. Workflow history per turn ({run.result.turns}-turn run)")
    for column in ("turns", "run", "bytes / turn", "events / turn", "× early"):
        table.add_column(column, justify="right")
    means = {name: _mean([turns[n].bytes for n in numbers]) for name, numbers in windows.items()}
    for name, numbers in windows.items():
        table.add_row(
            f"{numbers.start}–{numbers.stop - 1} ({name})",
            ", ".join(sorted({str(turns[n].run) for n in numbers})),
            f"{means[name]:,.0f}",
            f"{_mean([turns[n].events for n in numbers]):.1f}",
            f"{means[name] / means['early']:.2f}×",
        )
    total = sum(event.ByteSize() for events in runs for event in events)
    count = sum(len(events) for events in runs)
    caption = f"{count:,} events, {total:,} bytes in all (serialized HistoryEvent protobufs)"
    if len(runs) > 1:
        sizes = ", ".join(
            f"{len(events):,} events in run {n}" for n, events in enumerate(runs, start=1)
        )
        carried = ", ".join(f"{events[0].ByteSize():,}" for events in runs[1:])
        caption += (
            f"; continued as new: {sizes}; a new run's start event (the carried state) "
            f"is {carried} bytes"
        )
    table.caption = caption
    console.print(table)

    breakdown = Table(title="2b. Where a turn's history bytes go (mean bytes by event type)")
    breakdown.add_column("event type")
    for numbers in windows.values():
        breakdown.add_column(f"turns {numbers.start}–{numbers.stop - 1}", justify="right")
    kinds: Counter[str] = Counter()
    for numbers in windows.values():
        for n in numbers:
            kinds.update(turns[n].by_kind)
    for kind, _ in kinds.most_common():
        breakdown.add_row(
            kind,
            *(
                f"{_mean([turns[n].by_kind[kind] for n in numbers]):,.0f}"
                for numbers in windows.values()
            ),
        )
    console.print(breakdown)
    ratio = means["late"] / means["early"]
    return (
        f"history bytes per turn, turn {late_end - 2} ÷ turn {EARLY_TURN} ≤ {GROWTH_TARGET}",
        f"{ratio:.2f}×" + (f" ({len(runs)} runs)" if len(runs) > 1 else ""),
        ratio <= GROWTH_TARGET,
    )


async def _main(options: Any, console: Console) -> None:
    verdicts: list[tuple[str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="skillweave-bench-") as tmp:
        root = Path(tmp)
        verdicts += await _overhead(
            root / "overhead", reads=options.turns, runs=options.runs, console=console
        )
        verdicts.append(
            await _growth(root / "growth", turns_total=options.long_turns, console=console)
        )
    summary = Table(title="Targets")
    for column in ("target", "measured", ""):
        summary.add_column(column)
    for target, measured, ok in verdicts:
        summary.add_row(target, measured, "met" if ok else "[bold red]MISSED[/]")
    console.print(summary)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter runs")
    parser.add_argument("--turns", type=int, default=20, help="read turns of an overhead run")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per engine")
    parser.add_argument("--long-turns", type=int, default=600, help="turns of the long run")
    options = parser.parse_args(argv)
    if options.quick:
        options.turns, options.runs, options.long_turns = 10, 1, 40
    console = Console()
    console.print(
        f"skillweave Temporal benchmark · {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} "
        f"UTC · {os.cpu_count()} cores · {platform.python_implementation()} "
        f"{platform.python_version()} · load {os.getloadavg()[0]:.2f}"
    )
    asyncio.run(_main(options, console))
    return 0


if __name__ == "__main__":
    sys.exit(main())
