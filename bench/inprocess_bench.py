"""Benchmark: the direct engine's step against the peers' in-process runs, in ms per step.

The task of ``bench/peers_bench.py`` (an offline model asks for one small tool call per turn,
``steps`` times, then answers), run in this process without Temporal:

- **skillweave**: ``DirectEngine`` over ``peers_bench.skillweave_services``: the scripted model
  for any length, the probe skill's ``read_skill_resource`` as the tool, the transcript in a
  ``LocalArtifactStore`` in a temporary directory, fsynced, as by default. The activation turn
  before the first read is one more model call, not counted as a step.
- **pydantic-ai**: ``Agent.run`` with peers_bench's ``FunctionModel`` turn and one function
  tool, ``read_page``.
- **openai-agents**: the OpenAI Agents SDK's ``Runner.run`` with peers_bench's fake model and
  ``function_tool(read_page)``; tracing off (no export is possible offline; off is the
  cheaper setting for the peer).

A *step* is one tool call and the next model call: the time between the starts of consecutive
model calls, read on one clock (``time.perf_counter``) by a thin wrapper around each
framework's model (:class:`Clock`). The model's own work is inside the step, as it is in
peers_bench. CPU per step (this process's CPU time, threads included, over the run ÷ steps) is
shown beside it: on a shared machine it moves less than the wall clock.

The runs are interleaved so that the machine's load falls on all alike: one warm-up run per
framework and length first, then every round runs one run of each length for each framework,
the frameworks' order rotated each round. Percentiles are nearest-rank
(``bench.measures.percentile``). Target (issue 47): skillweave's p50 step ≤ 1.0× the fastest
peer's at 40 steps (shown at every length).

Run: ``.venv-bench/bin/python bench/inprocess_bench.py`` (``make bench-peers`` builds
``.venv-bench``); in ``.venv`` the peers are not installed and skillweave runs alone, with no
ratio. ``--quick`` for a smoke run, ``--markdown`` for tables to paste, ``--store DIR`` to put
the store's temporary directory elsewhere (a tmpfs shows what fsync costs). Needs no network.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from bench.measures import StepVerdict, percentile, step_verdicts
from bench.peers_bench import (
    ANSWER,
    OPENAI_AGENTS,
    PEER_AGENT,
    PEERS_INSTALLED,
    PYDANTIC_AI,
    SKILLWEAVE,
    _openai_turn,
    _pydantic_turn,
    _ScriptByLength,
    print_table,
    prompt,
    read_page,
    rotated,
    skillweave_request,
    skillweave_services,
)
from bench.temporal_bench import PAGE, SKILL
from skillweave.engines import DirectEngine
from skillweave.llm.messages import ModelRequest, ModelResponse

if PEERS_INSTALLED:  # the bench extra (.venv-bench); peers_bench has checked the imports
    from agents import Agent as OpenAIAgent
    from agents import Model as OpenAIModel
    from agents import RunConfig, Runner, function_tool
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

FRAMEWORKS: Final = (SKILLWEAVE, PYDANTIC_AI, OPENAI_AGENTS)
CALLS_BEFORE: Final = {SKILLWEAVE: 1}
"""Model calls before the first tool call (skillweave activates the probe skill first)."""
LENGTHS: Final = (10, 40, 100)
QUICK_LENGTHS: Final = (10, 40)
RUNS: Final = 20
QUICK_RUNS: Final = 2
TARGET_STEPS: Final = 40
TARGET_RATIO: Final = 1.0


# --- what is measured -----------------------------------------------------------------------


class Clock:
    """The start times of a run's model calls (``time.perf_counter``, seconds)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def tick(self) -> None:
        """A model call starts now."""
        self.calls.append(time.perf_counter())

    def reset(self) -> None:
        """A new run starts."""
        self.calls = []


def step_ms(calls: Sequence[float], *, calls_before: int = 0) -> list[float]:
    """Each step's ms: between the starts of consecutive model calls (seconds), from the
    call after the first `calls_before` on."""
    counted = calls[calls_before:]
    return [(b - a) * 1000 for a, b in itertools.pairwise(counted)]


@dataclass(frozen=True)
class RunRecord:
    """One finished run: its steps' ms, and its wall and CPU time (s) start to answer."""

    framework: str
    steps: int
    step_ms: tuple[float, ...]
    wall: float
    cpu: float


@dataclass(frozen=True)
class Figures:
    """One framework at one run length, over its measured runs."""

    framework: str
    steps: int
    runs: int
    step_p50: float
    step_p95: float
    wall_p50: float
    cpu_p50: float


def figures(framework: str, steps: int, records: Sequence[RunRecord]) -> Figures:
    """The percentiles of `records` (runs of one framework and length), in ms per step.

    Raises:
        RuntimeError: a run has not `steps` steps (the clock missed a model call).
    """
    for record in records:
        if len(record.step_ms) != steps:
            raise RuntimeError(
                f"{framework}, {steps}-step run: {len(record.step_ms)} steps measured"
            )
    durations = [ms for record in records for ms in record.step_ms]
    return Figures(
        framework=framework,
        steps=steps,
        runs=len(records),
        step_p50=percentile(durations, 0.5),
        step_p95=percentile(durations, 0.95),
        wall_p50=percentile([r.wall * 1000 / steps for r in records], 0.5),
        cpu_p50=percentile([r.cpu * 1000 / steps for r in records], 0.5),
    )


Verdict = StepVerdict


def verdicts(table: Sequence[Figures]) -> list[Verdict]:
    """One :class:`~bench.measures.StepVerdict` per run length that has skillweave and at
    least one peer, against :data:`TARGET_RATIO`."""
    return step_verdicts(table, target=TARGET_RATIO)


# --- the frameworks -------------------------------------------------------------------------

Runner_ = Callable[[str, int], Awaitable[None]]
"""Runs one run of a framework (its id, its steps) to its answer."""


class _TimedModel:
    """skillweave's scripted model, its calls told to `clock`."""

    def __init__(self, inner: _ScriptByLength, clock: Clock) -> None:
        self._inner = inner
        self._clock = clock

    @property
    def name(self) -> str:
        return self._inner.name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self._clock.tick()
        return await self._inner.complete(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def _skillweave(root: Path, clock: Clock) -> AsyncIterator[Runner_]:
    services = skillweave_services(root)
    calls = services.model_calls
    assert isinstance(calls.provider, _ScriptByLength)
    calls.provider = _TimedModel(calls.provider, clock)
    engine = DirectEngine(services)

    async def run(run_id: str, steps: int) -> None:
        await engine.start(skillweave_request(run_id, steps))
        result = await engine.result(run_id)
        if result.status != "completed":
            raise RuntimeError(f"skillweave run {run_id}: {result.status}: {result.reason}")

    try:
        yield run
    finally:
        await services.store.aclose()  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def _pydantic_ai(page: Path, clock: Clock) -> AsyncIterator[Runner_]:
    def turn(messages: Any, info: Any) -> Any:
        clock.tick()
        return _pydantic_turn(messages, info)

    agent = PydanticAgent(
        FunctionModel(turn, model_name="bench-function"), name=PEER_AGENT, tools=[read_page]
    )

    async def run(run_id: str, steps: int) -> None:
        result = await agent.run(
            prompt(str(page), steps), usage_limits=UsageLimits(request_limit=None)
        )
        if result.output != ANSWER:
            raise RuntimeError(f"pydantic-ai run {run_id} answered {result.output!r}")

    yield run


@contextlib.asynccontextmanager
async def _openai_agents(page: Path, clock: Clock) -> AsyncIterator[Runner_]:
    class _Fake(OpenAIModel):
        async def get_response(
            self, system_instructions: Any, input: Any, *_: Any, **__: Any
        ) -> Any:
            clock.tick()
            return _openai_turn(input)

        def stream_response(self, *_: Any, **__: Any) -> Any:
            raise NotImplementedError("the benchmark does not stream")

    agent = OpenAIAgent(
        name=PEER_AGENT,
        instructions="Read the page as the task asks, then answer.",
        tools=[function_tool(read_page)],
        model=_Fake(),
    )

    async def run(run_id: str, steps: int) -> None:
        result = await Runner.run(
            agent,
            prompt(str(page), steps),
            max_turns=steps + 2,
            run_config=RunConfig(tracing_disabled=True),
        )
        if result.final_output != ANSWER:
            raise RuntimeError(f"openai-agents run {run_id} answered {result.final_output!r}")

    yield run


# --- the run --------------------------------------------------------------------------------


async def _run(run: Runner_, clock: Clock, framework: str, run_id: str, steps: int) -> RunRecord:
    clock.reset()
    cpu, started = time.process_time(), time.perf_counter()
    await run(run_id, steps)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    found = step_ms(clock.calls, calls_before=CALLS_BEFORE.get(framework, 0))
    return RunRecord(framework, steps, tuple(found), wall, cpu)


async def _measure(
    frameworks: Sequence[str],
    lengths: Sequence[int],
    runs: int,
    store: Path | None,
    console: Console,
) -> dict[tuple[str, int], list[RunRecord]]:
    with tempfile.TemporaryDirectory(prefix="skillweave-inprocess-", dir=store) as tmp:
        root = Path(tmp)
        page = root / "skills" / SKILL / "references" / "page.md"
        clock = Clock()
        async with contextlib.AsyncExitStack() as stack:
            runners: dict[str, Runner_] = {
                SKILLWEAVE: await stack.enter_async_context(_skillweave(root, clock))
            }
            if page.read_text(encoding="utf-8") != PAGE:
                raise RuntimeError(f"{page}: not the probe page")
            if PYDANTIC_AI in frameworks:
                runners[PYDANTIC_AI] = await stack.enter_async_context(_pydantic_ai(page, clock))
            if OPENAI_AGENTS in frameworks:
                runners[OPENAI_AGENTS] = await stack.enter_async_context(
                    _openai_agents(page, clock)
                )
            for framework, run in runners.items():  # imports, caches, the first files
                for steps in lengths:
                    await _run(run, clock, framework, f"{framework}-warmup-{steps}", steps)
            records: dict[tuple[str, int], list[RunRecord]] = defaultdict(list)
            total = runs * len(lengths) * len(runners)
            with console.status("") as status:
                for round_number in range(runs):
                    for steps in lengths:
                        for framework in rotated(list(runners), round_number):
                            done = sum(len(r) for r in records.values())
                            status.update(f"run {done + 1}/{total}: {framework}, {steps} steps")
                            run_id = f"{framework}-{steps}-{round_number}"
                            record = await _run(runners[framework], clock, framework, run_id, steps)
                            records[framework, steps].append(record)
            return records


def _steps_table(rows: Sequence[Figures]) -> Table:
    fastest = {v.steps: v for v in verdicts(rows)}
    table = Table(title="1. Time per step in process (ms): one tool call and the next model call")
    for column in (
        "framework",
        "steps / run",
        "runs",
        "step p50",
        "step p95",
        "wall / step p50",
        "CPU / step p50",
        "p50 ÷ fastest peer",
    ):
        table.add_column(column, justify="right")
    for row in rows:
        verdict = fastest.get(row.steps)
        ratio = f"{row.step_p50 / verdict.peer_p50:.2f}×" if verdict else ""
        table.add_row(
            row.framework,
            str(row.steps),
            str(row.runs),
            f"{row.step_p50:.2f}",
            f"{row.step_p95:.2f}",
            f"{row.wall_p50:.2f}",
            f"{row.cpu_p50:.2f}",
            ratio,
        )
    table.caption = (
        "step = between the starts of consecutive model calls (perf_counter); wall / step = "
        "start to answer ÷ steps; CPU / step = this process's CPU time (threads too) ÷ steps; "
        "nearest-rank percentiles"
    )
    return table


def _targets_table(found: Sequence[Verdict]) -> Table:
    table = Table(
        title=f"Target: skillweave p50 step ≤ {TARGET_RATIO}× the fastest peer's "
        f"at {TARGET_STEPS} steps"
    )
    for column in ("steps / run", "skillweave p50", "fastest peer", "peer p50", "ratio", ""):
        table.add_column(column, justify="right")
    for verdict in found:
        mark = (
            ("met" if verdict.met else "[bold red]MISSED[/]")
            if verdict.steps == TARGET_STEPS
            else ""
        )
        table.add_row(
            str(verdict.steps),
            f"{verdict.skillweave_p50:.2f} ms",
            verdict.peer,
            f"{verdict.peer_p50:.2f} ms",
            f"{verdict.ratio:.2f}×",
            mark,
        )
    table.caption = f"judged at {TARGET_STEPS} steps; the other lengths show the trend"
    return table


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _report(
    records: Mapping[tuple[str, int], list[RunRecord]],
    frameworks: Sequence[str],
    lengths: Sequence[int],
    console: Console,
    *,
    markdown: bool,
) -> None:
    rows = [
        figures(framework, steps, records[framework, steps])
        for steps in lengths
        for framework in frameworks
    ]
    print_table(console, _steps_table(rows), markdown=markdown)
    found = verdicts(rows)
    if found:
        print_table(console, _targets_table(found), markdown=markdown)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two lengths, two runs each")
    parser.add_argument(
        "--runs", type=int, default=RUNS, help="measured runs per framework and length"
    )
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=list(LENGTHS), help="steps per run"
    )
    parser.add_argument(
        "--frameworks", nargs="+", choices=FRAMEWORKS, default=list(FRAMEWORKS), help="what to run"
    )
    parser.add_argument("--store", type=Path, help="where the store's temporary directory goes")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)
    if options.quick:
        options.lengths, options.runs = list(QUICK_LENGTHS), QUICK_RUNS
    console = Console()
    frameworks = [SKILLWEAVE, *(f for f in options.frameworks if f != SKILLWEAVE)]
    if not PEERS_INSTALLED:
        frameworks = [SKILLWEAVE]
        console.print(
            "the peers are not installed here: skillweave runs alone, with no ratio "
            "(`make bench-peers` builds .venv-bench, which has them)"
        )
    console.print(
        f"skillweave in-process benchmark · {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} "
        f"UTC · {os.cpu_count()} cores · {platform.python_implementation()} "
        f"{platform.python_version()} · load average {_load()} (1, 5, 15 min)"
    )
    records = asyncio.run(
        _measure(frameworks, options.lengths, options.runs, options.store, console)
    )
    _report(records, frameworks, options.lengths, console, markdown=options.markdown)
    console.print(f"load average at the end: {_load()} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
