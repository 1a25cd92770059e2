"""The direct engine: messages to a running run, cancel, and the wire round-trip."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.errors import AgentError, ModelError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library


class _SlowProvider(RecordingProvider):
    """Waits on a gate before each answer, so a test can act while the run is running."""

    def __init__(self, inner: ScriptedProvider) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()

    async def complete(self, request):  # type: ignore[no-untyped-def]
        await self.gate.wait()
        return await super().complete(request)


def _engine(tmp_path: Path, provider) -> DirectEngine:  # type: ignore[no-untyped-def]
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=provider,
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    return DirectEngine(services)


async def test_a_message_sent_while_running_reaches_the_next_model_call(tmp_path: Path) -> None:
    provider = _SlowProvider(
        ScriptedProvider.from_yaml(
            """
            turns:
              - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
              - say: "noted"
            """
        )
    )
    engine = _engine(tmp_path, provider)
    await engine.start(RunRequest(run_id="j1", task="first"))
    await asyncio.sleep(0.05)
    await engine.send("j1", "and also this")
    provider.gate.set()
    result = await engine.result("j1")
    assert result.status == "completed"
    assert "and also this" in provider.texts(2)
    kinds = [e.kind async for e in engine.events("j1")]
    assert "message_received" in kinds


async def test_follow_up_keeps_a_run_open_for_more_messages(tmp_path: Path) -> None:
    provider = RecordingProvider(ScriptedProvider.from_yaml("turns: [{say: one}, {say: two}]"))
    engine = _engine(tmp_path, provider)
    await engine.start(RunRequest(run_id="j2", task="first", agent=AgentSpec(follow_up_seconds=1)))
    async for event in engine.events("j2"):
        if event.kind == "model_called":
            break
    await engine.send("j2", "second question")
    await asyncio.sleep(0)
    assert engine.state("j2").answer == "one"
    # After "two", no more messages come: the run completes when the follow-up window ends.
    result = await asyncio.wait_for(engine.result("j2"), timeout=15)
    assert result.status == "completed"
    assert result.answer == "two"
    assert "second question" in provider.texts(2)


async def test_cancel_stops_a_running_run(tmp_path: Path) -> None:
    provider = _SlowProvider(ScriptedProvider.from_yaml("turns: [{say: never}]"))
    engine = _engine(tmp_path, provider)
    await engine.start(RunRequest(run_id="j3", task="wait"))
    await asyncio.sleep(0.05)
    await engine.cancel("j3")
    result = await engine.result("j3")
    assert result.status == "cancelled"
    assert [e.kind async for e in engine.events("j3")][-1] == "run_finished"
    with pytest.raises(AgentError, match="has ended"):
        await engine.send("j3", "too late")


async def test_unknown_and_duplicate_runs_are_refused(tmp_path: Path) -> None:
    engine = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml("turns: [{say: x}]")))
    with pytest.raises(AgentError, match="no run 'nope'"):
        await engine.result("nope")
    await engine.start(RunRequest(run_id="j4", task="t"))
    with pytest.raises(AgentError, match="already exists"):
        await engine.start(RunRequest(run_id="j4", task="t"))
    assert (await engine.result("j4")).status == "completed"


class _FlakyProvider(RecordingProvider):
    """Fails the first calls with the given errors, then answers from the script."""

    def __init__(self, inner: ScriptedProvider, failures: list[Exception]) -> None:
        super().__init__(inner)
        self.failures = failures
        self.calls = 0

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return await super().complete(request)


async def test_retryable_model_errors_are_retried_and_others_fail_the_run(tmp_path: Path) -> None:
    flaky = _FlakyProvider(
        ScriptedProvider.from_yaml("turns: [{say: fine}]"),
        [
            ModelError("429", retryable=True, retry_after=0.01, status=429),
            ModelError("503", retryable=True, retry_after=0.01, status=503),
        ],
    )
    engine = _engine(tmp_path / "a", flaky)
    await engine.start(RunRequest(run_id="r1", task="t"))
    result = await engine.result("r1")
    assert result.status == "completed"
    assert flaky.calls == 3

    fatal = _FlakyProvider(
        ScriptedProvider.from_yaml("turns: [{say: fine}]"),
        [ModelError("401 bad key", retryable=False, status=401)],
    )
    engine = _engine(tmp_path / "b", fatal)
    await engine.start(RunRequest(run_id="r2", task="t"))
    result = await engine.result("r2")
    assert result.status == "failed"
    assert "401 bad key" in (result.reason or "")
    assert fatal.calls == 1


async def test_a_caller_waiting_on_a_result_can_time_out(tmp_path: Path) -> None:
    provider = _SlowProvider(ScriptedProvider.from_yaml("turns: [{say: late}]"))
    engine = _engine(tmp_path, provider)
    await engine.start(RunRequest(run_id="t1", task="t"))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(engine.result("t1"), timeout=0.1)
    assert engine.state("t1").status == "running"  # the run itself goes on
    provider.gate.set()
    assert (await engine.result("t1")).answer == "late"
