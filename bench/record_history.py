"""Record the golden workflow history the replay test checks: the demo job on Temporal.

Runs ``examples/demo`` (the agent spec, the scripted model, ``sales.csv``) as an
``AgentWorkflow`` on a real Temporal dev server (``.venv/bin/temporal``, started here on free
ports and stopped at the end) with a worker in this process, the real activities, the real MCP
manager on loopback with a local warm pool, and a local artifact store in a temporary folder.
Only the model is scripted. The finished workflow's history is written as JSON to
``tests/data/histories/demo.json``, which ``tests/workflows/test_replay.py`` replays offline:
the test fails when the workflow code no longer issues the commands this history recorded.

What is fixed, so that two recordings differ only where time and the machine show (event
timestamps, run and request ids, the sticky queue's name, build ids, script durations): the job
id, the task queue, the worker identity, the task, the inputs. Re-record after an *intended*
change to the workflow's command sequence:

    .venv/bin/python bench/record_history.py

(``--out PATH`` writes elsewhere; ``--check`` replays the new history before writing it).
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
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Final

from pydantic import SecretStr
from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from mcp_manager import create_app
from mcp_manager.server import LoopbackServer
from skillweave.cli import DEMO_TASK
from skillweave.cli.run import load_agent
from skillweave.config import Settings, bundled_skills_dir
from skillweave.engines import AgentServices, JobRequest
from skillweave.engines.contract import SEARCH_ATTRIBUTES, workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore
from skillweave.storage.local import LocalArtifactStore
from workflows.agent import AgentWorkflow
from workflows.worker import build_worker, sandbox_runner

REPO: Final = Path(__file__).resolve().parents[1]
DEMO: Final = REPO / "examples" / "demo"
TEMPORAL_CLI: Final = REPO / ".venv" / "bin" / "temporal"
HISTORY: Final = REPO / "tests" / "data" / "histories" / "demo.json"
JOB_ID: Final = "golden-demo"
TASK_QUEUE: Final = "skillweave-golden-history"
IDENTITY: Final = "skillweave-history-recorder"


@contextlib.asynccontextmanager
async def dev_server(store: ArtifactStore | None = None) -> AsyncIterator[Client]:
    """A Temporal dev server from the pinned CLI (free ports, in memory, stopped on exit)
    with skillweave's search attributes, and a client with skillweave's data converter."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL_CLI),
        data_converter=data_converter(store),
        search_attributes=list(SEARCH_ATTRIBUTES),
        dev_server_log_level="error",
        identity=IDENTITY,
    )
    async with env:
        yield env.client


async def record(out: Path) -> WorkflowHistory:
    """Run the demo job on Temporal and write its history to `out`; returns the history."""
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(token), "pool_target": 2, "pool_max": 4},
    )
    registry = SkillRegistry.from_scan(SkillScanner([bundled_skills_dir()]).scan())
    spec = load_agent(DEMO / "agent.yaml", registry)
    with tempfile.TemporaryDirectory(prefix="skillweave-golden-") as tmp:
        store = LocalArtifactStore(Path(tmp) / "store")
        async with (
            LoopbackServer(create_app(settings, store=store, publish=False)) as manager,
            SandboxClient(manager.url, token=token) as sandbox,
            dev_server(store) as client,
        ):
            services = AgentServices(
                settings=settings,
                registry=registry,
                store=store,
                provider=ScriptedProvider.from_file(DEMO / "script.yaml"),
                model="scripted",
                sandbox=sandbox,
            )
            engine = TemporalEngine(client, task_queue=TASK_QUEUE)
            sales = await store.put_file(
                keys.run_input_key(JOB_ID, "sales.csv"), str(DEMO / "sales.csv")
            )
            async with build_worker(client, services, task_queue=TASK_QUEUE, identity=IDENTITY):
                await engine.start(
                    JobRequest(job_id=JOB_ID, task=DEMO_TASK, agent=spec, inputs=(sales,))
                )
                result = await engine.result(JOB_ID)
            if result.status != "completed":
                raise SystemExit(f"the demo job did not complete: {result.status}: {result.reason}")
            history = await client.get_workflow_handle(workflow_id(JOB_ID)).fetch_history()
    out.parent.mkdir(parents=True, exist_ok=True)
    # Indented, so that a re-recording reads as a diff in review.
    out.write_text(json.dumps(json.loads(history.to_json()), indent=1) + "\n", encoding="utf-8")
    return history


async def replay(history: WorkflowHistory) -> None:
    """Replay `history` against the workflow code as the replay test does (no server)."""
    replayer = Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )
    await replayer.replay_workflow(history)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HISTORY, help="where to write the history")
    parser.add_argument("--check", action="store_true", help="replay it once recorded")
    options = parser.parse_args(argv)
    started = time.perf_counter()
    history = asyncio.run(record(options.out))
    if options.check:
        asyncio.run(replay(history))
    size = options.out.stat().st_size
    print(
        f"recorded {len(history.events)} events ({size:,} bytes) of workflow "
        f"{history.workflow_id} → {options.out} in {time.perf_counter() - started:.1f} s"
        + (" · replays cleanly" if options.check else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
