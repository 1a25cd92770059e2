"""The loop reads what came back (issue 24, part 3), on both engines, over real HTTP against the
strict OpenAI-compatible server of ``tests.llm_server``: an empty reply is asked again; answers
cut off at ``max_tokens`` end the run ``failed`` (truncated), never ``completed``; unreadable
JSON arguments, arguments against a tool's schema and a script the skill does not have are
refused with what was wrong, before any sandbox or script run is spent.

Scripts run in the fake sandbox of ``tests.agent.harness`` (a subprocess each), which records
every request that reaches it. On Temporal each run's history is then replayed against the
workflow code, so the new commands are deterministic.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from skillweave.config import Settings
from skillweave.engines import AgentServices, RunRequest, RunResult
from skillweave.engines.contract import workflow_id
from skillweave.engines.converter import data_converter
from skillweave.llm import OpenAIProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.integration.llm.engines import run_on
from tests.integration.temporal.harness import start_dev_server, unique
from tests.llm_server import (
    Reply,
    StrictLLMServer,
    empty_reply,
    strict_llm_server,
    text_reply,
    tool_call_reply,
    truncated_reply,
)
from workflows.agent import AgentWorkflow
from workflows.worker import sandbox_runner

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = "strict-test-model"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path_factory.mktemp("store"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(store: LocalArtifactStore) -> AsyncIterator[WorkflowEnvironment]:
    running = await start_dev_server(store)
    try:
        yield running
    finally:
        await running.shutdown()


@pytest.fixture(params=["direct", "temporal"])
def engine_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Run:
    """One run on one engine against the strict server: its result, what reached the sandbox,
    what the model was sent, and (Temporal) how the workflow closed."""

    def __init__(
        self,
        result: RunResult,
        sandbox: FakeSandbox,
        server: StrictLLMServer,
        closed: WorkflowExecutionStatus | None = None,
    ) -> None:
        self.result = result
        self.sandbox = sandbox
        self.server = server
        self.closed = closed

    def messages(self, request: int) -> list[dict[str, Any]]:
        """The messages of model request `request` (1-based)."""
        body = self.server.requests[request - 1].body
        assert isinstance(body, dict)
        return list(body["messages"])

    def tool_results(self) -> dict[str, str]:
        """Every tool result the model was sent, by call id."""
        last = self.messages(len(self.server.requests))
        return {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}


async def run_agent(
    kind: str,
    *replies: Reply,
    env: WorkflowEnvironment,
    store: LocalArtifactStore,
    tmp_path: Path,
) -> Run:
    async with (
        strict_llm_server(*replies) as server,
        OpenAIProvider(model=MODEL, base_url=server.base_url, timeout=10) as provider,
    ):
        sandbox = FakeSandbox(store)
        services = AgentServices(
            settings=Settings(_env_file=None),
            registry=sample_library(tmp_path / "skills"),
            store=store,
            provider=provider,
            model=MODEL,
            sandbox=sandbox,  # type: ignore[arg-type]
        )
        request = RunRequest(run_id=unique(kind), task="Shout a word.")
        result = await run_on(kind, services, request, attempts=2, env=env)
        if kind == "direct":
            return Run(result, sandbox, server)
        handle = env.client.get_workflow_handle(workflow_id(request.run_id))
        closed = (await handle.describe()).status
        await _replays(env, store, request.run_id)
        return Run(result, sandbox, server, closed)


async def _replays(env: WorkflowEnvironment, store: LocalArtifactStore, run_id: str) -> None:
    """The run's history, recorded with the rule, replays against the workflow code."""
    history = await env.client.get_workflow_handle(workflow_id(run_id)).fetch_history()
    patches = [
        json.loads(base64.b64decode(payload["data"]))["id"]
        for event in json.loads(history.to_json())["events"]
        if event["eventType"] == "EVENT_TYPE_MARKER_RECORDED"
        and event["markerRecordedEventAttributes"]["markerName"] == "core_patch"
        for payload in event["markerRecordedEventAttributes"]["details"]["patch-data"]["payloads"]
    ]
    assert patches == []  # the baseline: the rule is no patch of its own
    replayed = await Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(store),
        workflow_runner=sandbox_runner(),
    ).replay_workflow(history)
    assert replayed.replay_failure is None


async def test_an_empty_reply_is_asked_again(
    engine_kind: str, env: WorkflowEnvironment, store: LocalArtifactStore, tmp_path: Path
) -> None:
    run = await run_agent(
        engine_kind, empty_reply(), text_reply("Done."), env=env, store=store, tmp_path=tmp_path
    )

    assert (run.result.status, run.result.answer) == ("completed", "Done.")
    assert len(run.server.requests) == 2
    note = run.messages(2)[-1]
    assert note["role"] == "user"
    assert note["content"].startswith("Your last reply was empty")
    if engine_kind == "temporal":
        assert run.closed == WorkflowExecutionStatus.COMPLETED


async def test_answers_cut_off_at_max_tokens_fail_the_run_as_truncated(
    engine_kind: str, env: WorkflowEnvironment, store: LocalArtifactStore, tmp_path: Path
) -> None:
    run = await run_agent(
        engine_kind, truncated_reply("The answer is"), env=env, store=store, tmp_path=tmp_path
    )

    assert run.result.status == "failed"
    assert (run.result.reason or "").startswith("truncated: the model's reply was cut off")
    assert run.result.answer is None
    assert len(run.server.requests) == 3  # asked again twice
    assert "cut off at the output limit" in run.messages(2)[-1]["content"]
    # Temporal: the workflow failed (RunFailed, the result in its details), as ops see it.
    if engine_kind == "temporal":
        assert run.closed == WorkflowExecutionStatus.FAILED


async def test_bad_tool_calls_are_refused_before_any_sandbox_or_script_run(
    engine_kind: str, env: WorkflowEnvironment, store: LocalArtifactStore, tmp_path: Path
) -> None:
    run = await run_agent(
        engine_kind,
        tool_call_reply("activate_skill", {"name": "shouter"}, call_id="c1"),
        tool_call_reply("shout", '{"word": "hel', call_id="c2"),
        tool_call_reply("run_skill_script", '{"skill": "shouter", "scr', call_id="c3"),
        tool_call_reply("shout", {"word": 5}, call_id="c4"),
        tool_call_reply(
            "run_skill_script", {"skill": "shouter", "script": "scripts/nope.py"}, call_id="c5"
        ),
        tool_call_reply("no_such_tool", {}, call_id="c6"),
        text_reply("Gave up."),
        env=env,
        store=store,
        tmp_path=tmp_path,
    )

    assert (run.result.status, run.result.answer) == ("completed", "Gave up."), run.result
    results = run.tool_results()
    for call in ("c2", "c3"):
        assert results[call].startswith(
            "Your arguments were not valid JSON: Unterminated string starting at: line 1"
        ), results[call]
    assert "needs 'skill'" not in results["c3"]  # though skill was sent
    assert "'word': 5 is not of type 'string'" in results["c4"]
    assert "script 'scripts/nope.py' is not in skill 'shouter'" in results["c5"]
    assert results["c6"].startswith("There is no tool named 'no_such_tool'.")
    # No call with bad arguments reached the sandbox client: only the activation's --help-json
    # and the missing script, which it refused to run (as the manager does, before claiming a
    # sandbox); and no script run was spent.
    reached = [(request.script, request.args) for request in run.sandbox.requests]
    assert reached == [("scripts/shout.py", ["--help-json"]), ("scripts/nope.py", [])]
    assert run.result.script_runs == 0
