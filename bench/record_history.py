"""Record the golden workflow histories the replay test checks: real runs on Temporal.

Each scenario runs as an ``AgentWorkflow`` on a real Temporal dev server (``.venv/bin/temporal``,
started here on free ports, in memory, stopped at the end) with a worker in this process, the
real activities, the real MCP manager on loopback with a local warm pool, and a local artifact
store in a temporary folder. Only the model is scripted. Each run's history is written as JSON
under ``tests/data/histories/``, which ``tests/workflows/test_replay.py`` replays offline: the
test fails when the workflow code no longer issues the commands a history recorded.

- ``demo`` (``demo.json``): ``examples/demo`` as ``skillweave demo`` runs it (the agent spec,
  the scripted model, ``sales.csv``): activations of a parent and its children, a reference
  read, two script runs, the answer.
- ``conversation`` (``conversation-1.json``, ``conversation-2.json``): what the demo does not
  reach: ``search_skills``, an executable skill's tool run after an ``approve`` signal (and the
  approval timer), the answer, a follow-up message sent as a ``send_message`` update while the
  run waits for one (a timer), a refused tool call and a resource read in the last turn, the
  turn budget running out (the read, deferred to a model call that never comes, done as the
  run ends by the ``read_skill_resource`` local activity, the refusal stored by
  ``record_transcript``, the workflow failed with ``BudgetExhausted``), and a
  continue-as-new in the middle: the server is started with a low
  ``limit.historyCount.suggestContinueAsNew``, so its second execution starts from a carried
  state.

What is fixed, so that two recordings differ only where time and the machine show (event
timestamps, Temporal's run ids and request ids, the sticky queue's name, build ids, script
durations): the run ids, the store's id (written into the fresh store before anything reads
it, so the task queue a run is routed to, ``TASK_QUEUE@GOLDEN_STORE_ID``, is fixed too), the
worker identity, the tasks, the inputs. The worker gives each run its settings' limits (the
``run_limits`` local activity at the run's start). Re-record after an *intended* change to
the workflow's command sequence:

    .venv/bin/python bench/record_history.py --check

(``--scenario NAME`` records one; ``--check`` replays what it recorded before reporting).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pydantic import SecretStr
from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from mcp_manager import create_app
from mcp_manager.server import LoopbackServer
from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalDecision
from skillweave.cli.agent_run import load_agent
from skillweave.cli.demo import DEMO_TASK
from skillweave.config import Settings, bundled_skills_dir
from skillweave.engines import AgentServices, RunRequest, RunResult
from skillweave.engines.contract import SEARCH_ATTRIBUTES, RunView, workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from workflows.agent import AgentWorkflow
from workflows.worker import build_worker, sandbox_runner

REPO: Final = Path(__file__).resolve().parents[1]
DEMO: Final = REPO / "examples" / "demo"
TEMPORAL_CLI: Final = REPO / ".venv" / "bin" / "temporal"
HISTORIES: Final = REPO / "tests" / "data" / "histories"
TASK_QUEUE: Final = "skillweave-golden-history"
IDENTITY: Final = "skillweave-history-recorder"
GOLDEN_STORE_ID: Final = "901de0901de0901d"
"""The id of every recording's store: runs run on the queue routed to it, so a fixed id keeps
the recorded queue name (and the ``store_id`` in the run's input) the same across recordings."""
_POLL_SECONDS: Final = 0.1
_WAIT_SECONDS: Final = 60.0

CONVERSATION_TASK: Final = "How many KiB are 3 MB?"
CONVERSATION_FOLLOW_UP: Final = "Thanks. Is that more than 3,000 KiB?"
CONVERSATION_SCRIPT: Final = """
model: scripted-conversation
turns:
  - tool_calls: [{name: search_skills, arguments: {query: convert megabytes to kibibytes}}]
  - tool_calls: [{name: activate_skill, arguments: {name: unit-converter}}]
    expect: {tool_results: [{contains: unit-converter}]}
  - tool_calls:
      - name: convert_units
        arguments: {value: 3, from_unit: MB, to_unit: KiB}
    expect: {tools_include: [convert_units]}
  - say: "3 MB is {{last_result}}"
    expect: {tool_results: [{not_error: true, contains: "2929.6875"}]}
  - tool_calls:
      - {name: compare_numbers, arguments: {a: 2929.6875, b: 3000}}
      - {name: read_skill_resource, arguments: {skill: unit-converter, path: scripts/convert.py}}
"""
CONVERSATION_AGENT: Final = AgentSpec.model_validate(
    {
        "name": "conversation",
        "skills": ["unit-converter"],
        "catalog": {"mode": "auto", "top_k": 1},
        "limits": {"max_turns": 5},
        "follow_up_seconds": 600,
        "approvals": {"skills": ["unit-converter"], "timeout_seconds": 600},
    }
)
# Low enough that the server suggests continue-as-new during the conversation's first turns,
# high enough that the second run finishes without another.
CONVERSATION_CAN_EVENTS: Final = 40


@dataclass
class _Run:
    """One scenario's run on a running stack."""

    engine: TemporalEngine
    store: ArtifactStore
    run_id: str


@dataclass(frozen=True)
class Scenario:
    """A run to record: its id, model, request, how a client drives it, how it must end."""

    name: str
    run_id: str
    script: Callable[[], ScriptedProvider]
    request: Callable[[_Run], Awaitable[RunRequest]]
    drive: Callable[[_Run], Awaitable[None]]
    status: str
    dynamic_config: dict[str, object] = field(default_factory=dict)


async def _demo_request(run: _Run) -> RunRequest:
    registry = SkillRegistry.from_scan(SkillScanner([bundled_skills_dir()]).scan())
    sales = await run.store.put_file(
        keys.run_input_key(run.run_id, "sales.csv"), str(DEMO / "sales.csv")
    )
    spec = load_agent(DEMO / "agent.yaml", registry)
    return RunRequest(run_id=run.run_id, task=DEMO_TASK, agent=spec, inputs=(sales,))


async def _golden_store(root: Path) -> tuple[ArtifactStore, str]:
    """A fresh local store under `root` whose id is :data:`GOLDEN_STORE_ID`, and that id as
    every process reads it (``storage.identity``)."""
    store = LocalArtifactStore(root)
    record = json.dumps({"id": GOLDEN_STORE_ID, "created_at": "2026-01-01T00:00:00+00:00"})
    await store.put_if_absent(
        keys.STORE_IDENTITY_KEY, record.encode(), content_type="application/json"
    )
    store_id = await store_identity(store)
    if store_id != GOLDEN_STORE_ID:
        raise SystemExit(f"the recording's store has id {store_id!r}, not {GOLDEN_STORE_ID!r}")
    return store, store_id


async def _nothing(run: _Run) -> None:
    return None


async def _conversation_request(run: _Run) -> RunRequest:
    return RunRequest(run_id=run.run_id, task=CONVERSATION_TASK, agent=CONVERSATION_AGENT)


async def _until(run: _Run, ready: Callable[[RunView], bool], what: str) -> RunView:
    deadline = time.monotonic() + _WAIT_SECONDS
    while True:
        view = await run.engine.status(run.run_id)
        if ready(view):
            return view
        if view.status != "running" or time.monotonic() > deadline:
            raise SystemExit(f"{run.run_id}: gave up waiting for {what} ({view.phase})")
        await asyncio.sleep(_POLL_SECONDS)


async def _converse(run: _Run) -> None:
    """Approve the script run, then answer the answer with a follow-up message."""
    await _until(run, lambda v: v.awaiting_approval is not None, "the approval request")
    await run.engine.approve(run.run_id, ApprovalDecision(approved=True, by="recorder"))
    view = await _until(run, lambda v: v.phase == "waiting_input", "the follow-up wait")
    reply = await run.engine.ask(run.run_id, CONVERSATION_FOLLOW_UP, reply_to_turn=view.answer_turn)
    if reply.status != "budget_exhausted":
        raise SystemExit(f"{run.run_id}: unexpected reply to the follow-up: {reply}")


SCENARIOS: Final = {
    "demo": Scenario(
        name="demo",
        run_id="golden-demo",
        script=lambda: ScriptedProvider.from_file(DEMO / "script.yaml"),
        request=_demo_request,
        drive=_nothing,
        status="completed",
    ),
    "conversation": Scenario(
        name="conversation",
        run_id="golden-conversation",
        script=lambda: ScriptedProvider.from_yaml(CONVERSATION_SCRIPT),
        request=_conversation_request,
        drive=_converse,
        status="budget_exhausted",
        dynamic_config={"limit.historyCount.suggestContinueAsNew": CONVERSATION_CAN_EVENTS},
    ),
}


@contextlib.asynccontextmanager
async def dev_server(
    store: ArtifactStore | None = None, dynamic_config: dict[str, object] | None = None
) -> AsyncIterator[Client]:
    """A Temporal dev server from the pinned CLI (free ports, in memory, stopped on exit)
    with skillweave's search attributes, and a client with skillweave's data converter."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL_CLI),
        data_converter=data_converter(store),
        search_attributes=list(SEARCH_ATTRIBUTES),
        dev_server_log_level="error",
        dev_server_extra_args=[
            arg
            for name, value in (dynamic_config or {}).items()
            for arg in ("--dynamic-config-value", f"{name}={json.dumps(value)}")
        ],
        identity=IDENTITY,
    )
    async with env:
        yield env.client


async def _runs(client: Client, run_id: str) -> list[WorkflowHistory]:
    """The history of every execution of the run's workflow, first first."""
    histories: list[WorkflowHistory] = []
    execution_run_id: str | None = None
    while True:
        history = await client.get_workflow_handle(
            workflow_id(run_id), run_id=execution_run_id
        ).fetch_history()
        histories.insert(0, history)
        started = history.events[0].workflow_execution_started_event_attributes
        execution_run_id = started.continued_execution_run_id or None
        if execution_run_id is None:
            return histories


def history_files(name: str, runs: int) -> list[Path]:
    """Where a scenario's runs are kept: ``NAME.json``, or ``NAME-1.json``… for several."""
    if runs == 1:
        return [HISTORIES / f"{name}.json"]
    return [HISTORIES / f"{name}-{n}.json" for n in range(1, runs + 1)]


async def record(scenario: Scenario) -> list[tuple[Path, WorkflowHistory]]:
    """Run `scenario` on Temporal and write the history of each of its runs."""
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(token), "pool_target": 2, "pool_max": 4},
    )
    registry = SkillRegistry.from_scan(SkillScanner([bundled_skills_dir()]).scan())
    with tempfile.TemporaryDirectory(prefix="skillweave-golden-") as tmp:
        store, store_id = await _golden_store(Path(tmp) / "store")
        async with (
            LoopbackServer(create_app(settings, store=store, publish=False)) as manager,
            SandboxClient(manager.url, token=token) as sandbox,
            dev_server(store, scenario.dynamic_config) as client,
        ):
            services = AgentServices(
                settings=settings,
                registry=registry,
                store=store,
                provider=scenario.script(),
                model="scripted",
                sandbox=sandbox,
            )
            engine = TemporalEngine(client, task_queue=TASK_QUEUE, store=store, store_id=store_id)
            run = _Run(engine, store, scenario.run_id)
            request = await scenario.request(run)
            async with build_worker(
                client, services, task_queue=TASK_QUEUE, store_id=store_id, identity=IDENTITY
            ):
                await run.engine.start(request)
                await scenario.drive(run)
                result: RunResult = await run.engine.result(run.run_id)
            if result.status != scenario.status:
                raise SystemExit(
                    f"{scenario.name}: the run ended {result.status} ({result.reason}), "
                    f"not {scenario.status}"
                )
            histories = await _runs(client, scenario.run_id)
    for stale in HISTORIES.glob(f"{scenario.name}*.json"):
        stale.unlink()
    written = []
    for path, history in zip(history_files(scenario.name, len(histories)), histories, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        # Indented with sorted keys (the server orders map entries at random), so that a
        # re-recording reads as a diff in review.
        text = json.dumps(json.loads(history.to_json()), indent=1, sort_keys=True) + "\n"
        path.write_text(text, encoding="utf-8")
        written.append((path, history))
    return written


async def replay(history: WorkflowHistory) -> None:
    """Replay `history` against the workflow code as the replay test does (no server)."""
    replayer = Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )
    await replayer.replay_workflow(history)


async def _main(names: Sequence[str], *, check: bool) -> None:
    for name in names:
        started = time.perf_counter()
        written = await record(SCENARIOS[name])
        if check:
            for _, history in written:
                await replay(history)
        for path, history in written:
            print(
                f"{name}: {len(history.events)} events ({path.stat().st_size:,} bytes) "
                f"→ {path.relative_to(REPO)}",
                flush=True,
            )
        print(
            f"{name}: recorded in {time.perf_counter() - started:.1f} s"
            + (", replays cleanly" if check else ""),
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario", choices=sorted(SCENARIOS), action="append", help="record only this one"
    )
    parser.add_argument("--check", action="store_true", help="replay what was recorded")
    options = parser.parse_args(argv)
    asyncio.run(_main(options.scenario or list(SCENARIOS), check=options.check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
