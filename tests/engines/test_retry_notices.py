"""How a retry is told (``skillweave.engines.retries.RetryNotice``), the same on both engines:
the one line every view shows, the rule that makes it (the retry rule's own decision and wait),
the direct engine's followers getting it between events, the Temporal follower reading it from
a pending activity (or from the description alone), and views that never fail on a kind they
do not know. Against real HTTP and a real Temporal server: tests/integration/llm/
test_visible_retries.py."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.api.failure.v1 import Failure
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.service import RPCStatusCode

from skillweave.agent import AgentSpec, effects
from skillweave.agent.effect_models import (
    CatalogInput,
    InvokeModelInput,
    LoadSkillInput,
    ReadResourceInput,
    RecordInput,
    RunScriptInput,
    SearchInput,
    TranscriptView,
)
from skillweave.agent.events import AgentEvent
from skillweave.cli.view import EventView
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.converter import data_converter
from skillweave.engines.direct import call_retrying
from skillweave.engines.notes import FollowNote
from skillweave.engines.retries import (
    CAUSE_MAX_CHARS,
    Backoff,
    RetryNotice,
    cause_line,
    retry_notice,
)
from skillweave.engines.temporal import TemporalEngine
from skillweave.engines.temporal import _pending as pending_module
from skillweave.errors import ModelError, SandboxStartError, SkillNotFoundError
from skillweave.llm.messages import ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.engines.test_temporal_engine import (
    RUN,
    FakeClient,
    FakeHandle,
    FakeServer,
    _event,
    _rpc,
)

MODEL_503 = "openai:x: HTTP 503 Service Unavailable"


def _503(**fields: Any) -> ModelError:
    return ModelError(MODEL_503, retryable=True, status=503, **fields)


# --- the notice and its line ------------------------------------------------------------------


def test_the_line_says_which_call_which_attempt_of_how_many_why_and_the_wait() -> None:
    notice = retry_notice(
        _503(), call="model openai:x", attempt=2, backoff=Backoff(initial=2.0, attempts=8)
    )
    assert notice is not None
    assert notice.line() == (
        "model openai:x: attempt 2 of 8 failed: HTTP 503 Service Unavailable; retrying in 4.0 s"
    )


def test_a_notice_follows_the_retry_rule_its_wait_and_its_limits() -> None:
    backoff = Backoff(initial=1.0, attempts=3)
    # The server's Retry-After is the wait (capped like every wait).
    hinted = retry_notice(_503(retry_after=7.5), call="model m", attempt=1, backoff=backoff)
    assert hinted is not None
    assert hinted.wait_seconds == 7.5
    capped = retry_notice(_503(retry_after=1e9), call="model m", attempt=1, backoff=backoff)
    assert capped is not None
    assert capped.wait_seconds == backoff.maximum
    # The last attempt, a model profile's lower cap, and a failure never retried: no notice.
    assert retry_notice(_503(), call="model m", attempt=3, backoff=backoff) is None
    profile = retry_notice(_503(max_attempts=2), call="model m", attempt=1, backoff=backoff)
    assert profile is not None
    assert profile.attempts == 2
    assert retry_notice(_503(max_attempts=2), call="model m", attempt=2, backoff=backoff) is None
    refused = ModelError("openai:x: HTTP 401 Unauthorized", status=401)
    assert retry_notice(refused, call="model m", attempt=1, backoff=backoff) is None
    assert (
        retry_notice(SkillNotFoundError("x"), call="activate x", attempt=1, backoff=backoff) is None
    )
    # A sandbox that did not start: retried with back-off.
    sandbox = retry_notice(
        SandboxStartError("no sandbox started"), call="script s/a.py", attempt=2, backoff=backoff
    )
    assert sandbox is not None
    assert sandbox.line() == (
        "script s/a.py: attempt 2 of 3 failed: no sandbox started; retrying in 2.0 s"
    )


def test_a_cause_is_one_short_line_without_the_name_the_call_shows() -> None:
    assert cause_line(MODEL_503, call="model openai:x") == "HTTP 503 Service Unavailable"
    assert cause_line("a\n\n  b", call="script s/a.py") == "a"
    assert cause_line("\n  spaced   out \t here\n", call="") == "spaced out here"
    assert cause_line("", call="model m") == "failed"
    long = cause_line("x" * 1000)
    assert len(long) == CAUSE_MAX_CHARS
    assert long.endswith("…")
    # Another model's name is kept: only a repeat of the call's own is dropped.
    assert cause_line(MODEL_503, call="model openai:y").startswith("openai:x: ")


def test_a_notice_whose_attempt_has_begun_says_so() -> None:
    notice = RetryNotice(call="invoke_model", attempt=1, cause="activity Heartbeat timeout")
    assert notice.line() == (
        "invoke_model: attempt 1 failed: activity Heartbeat timeout; retrying now"
    )


def test_each_call_is_named_by_its_descriptor() -> None:
    view = TranscriptView(upto=0)
    model = InvokeModelInput(run_id="r", system="", tools=(), view=view, reply_seq=0, model="fast")
    assert effects.INVOKE_MODEL.retry_name(model) == "model fast"
    script = RunScriptInput(
        run_id="r",
        seq=3,
        tool_call_id="c",
        skill="pdf",
        version="v",
        script="scripts/x.py",
        execution_id="e",
    )
    assert effects.RUN_SKILL_SCRIPT.retry_name(script) == "script pdf/scripts/x.py"
    load = LoadSkillInput(run_id="r", seq=1, skill="pdf", tool_call_id="c")
    assert effects.LOAD_SKILL.retry_name(load) == "activate pdf"
    read = ReadResourceInput(
        run_id="r", seq=1, tool_call_id="c", skill="pdf", version="v", path="a.md"
    )
    assert effects.READ_SKILL_RESOURCE.retry_name(read) == "read pdf/a.md"
    assert effects.SEARCH_SKILLS.retry_name(
        SearchInput(run_id="r", seq=1, tool_call_id="c", query="q")
    ) == ("search skills")
    assert (
        effects.PREPARE_CATALOG.retry_name(CatalogInput(run_id="r", task="t"))
        == "prepare the skill catalog"
    )
    record = RecordInput(run_id="r", writes=())
    assert effects.RECORD_TRANSCRIPT.retry_name(record) == "record the transcript"


# --- the direct engine --------------------------------------------------------------------------


async def test_call_retrying_tells_each_retry_before_its_wait() -> None:
    told: list[RetryNotice] = []
    failures = [_503(), _503()]

    async def call() -> str:
        if failures:
            raise failures.pop(0)
        assert len(told) == 2
        return "ok"

    result = await call_retrying(
        call,
        backoff=Backoff(initial=0.01, attempts=4),
        name=lambda: "model x",
        on_retry=told.append,
    )
    assert result == "ok"
    assert [(n.attempt, n.attempts, n.wait_seconds) for n in told] == [(1, 4, 0.01), (2, 4, 0.02)]


class _Unavailable:
    """A model that answers 503 `times` times, then as its script says."""

    def __init__(self, times: int) -> None:
        self.scripted = ScriptedProvider.from_yaml("turns:\n  - say: done\n")
        self.name = self.scripted.name
        self.times = times

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.times:
            self.times -= 1
            raise ModelError(f"{self.name}: HTTP 503 Service Unavailable", retryable=True)
        return await self.scripted.complete(request)


async def test_the_direct_engine_tells_its_followers_each_retry_between_the_events(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    provider = _Unavailable(2)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=provider,  # type: ignore[arg-type]
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    engine = DirectEngine(services, backoff=Backoff(initial=0.01, attempts=5))
    run = await engine.start(RunRequest(run_id="run-r", task="t", agent=AgentSpec()))
    seen = [item async for item in engine.follow(run)]
    assert [item.kind for item in seen] == [
        "run_started",
        "retrying",
        "retrying",
        "model_called",
        "answered",
        "run_finished",
    ]
    notes = [item for item in seen if isinstance(item, FollowNote)]
    assert [note.detail for note in notes] == [
        f"model {provider.name}: attempt 1 of 5 failed: HTTP 503 Service Unavailable;"
        " retrying in 0.0 s",
        f"model {provider.name}: attempt 2 of 5 failed: HTTP 503 Service Unavailable;"
        " retrying in 0.0 s",
    ]
    assert all(note.run_id == run and note.retry is not None for note in notes)
    # Events alone are what they were; a follower resuming after an event gets what followed.
    assert [e.kind for e in [e async for e in engine.events(run)]] == [
        "run_started",
        "model_called",
        "answered",
        "run_finished",
    ]
    resumed = [item.kind async for item in engine.follow(run, after=1)]
    assert resumed == ["retrying", "retrying", "model_called", "answered", "run_finished"]
    assert (await engine.result(run)).status == "completed"


# --- the Temporal follower --------------------------------------------------------------------


def _pending(
    attempt: int, *, state: int = PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
) -> PendingActivityInfo:
    pending = PendingActivityInfo(
        activity_id="2",
        attempt=attempt,
        maximum_attempts=8,
        state=state,  # type: ignore[arg-type]
        last_failure=Failure(message=f"{MODEL_503}\nmore"),
    )
    pending.activity_type.name = "invoke_model"
    pending.current_retry_interval.FromTimedelta(timedelta(seconds=2))
    return pending


async def _told(pending: PendingActivityInfo, notice: RetryNotice | None) -> PendingActivityInfo:
    if notice is not None:
        payloads = await data_converter(None).encode([notice.line(), notice.model_dump()])
        pending.heartbeat_details.payloads.extend(payloads)
    return pending


async def test_the_temporal_follower_tells_each_retry_of_a_pending_activity_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pending_module, "RETRY_POLL_SECONDS", 0.01)
    server = FakeServer(events=[_event("run_started", 0)])
    client = FakeClient(server)
    client.data_converter = data_converter(None)  # type: ignore[attr-defined]
    engine = TemporalEngine(client, task_queue="tq", poll_seconds=0.01)  # type: ignore[arg-type]
    said = RetryNotice(
        call="model openai:x", attempt=1, attempts=2, wait_seconds=1.0, cause="HTTP 503"
    )
    server.pending = [await _told(_pending(2), said)]
    seen: list[Any] = []
    async for item in engine.follow(RUN):
        seen.append(item)
        retries = [s for s in seen if s.kind == "retrying"]
        if len(retries) == 1 and item.kind == "retrying":
            # The same retry again (told once), a script's with no words of its own (from the
            # description), and one whose next attempt has begun (no wait left).
            script = _pending(3)
            script.activity_id = "script-4"
            started = _pending(2, state=PendingActivityState.PENDING_ACTIVITY_STATE_STARTED)
            started.activity_id = "5"
            server.pending = [await _told(_pending(2), said), script, started]
        elif len(retries) == 3 and item.kind == "retrying":
            server.events += [_event("model_called", 1), _event("run_finished", 2)]
    assert [item.kind for item in seen] == [
        "run_started",
        *["retrying"] * 3,
        "model_called",
        "run_finished",
    ]
    notes = [item for item in seen if isinstance(item, FollowNote)]
    assert [note.detail for note in notes] == [
        said.line(),
        "invoke_model: attempt 2 of 8 failed: openai:x: HTTP 503 Service Unavailable;"
        " retrying in 2.0 s",
        "invoke_model: attempt 1 of 8 failed: openai:x: HTTP 503 Service Unavailable; retrying now",
    ]
    assert all(note.task_queue == "tq" and note.run_id == RUN for note in notes)


async def test_a_follower_that_cannot_describe_the_run_goes_on_with_its_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = FakeServer(events=[_event("run_started", 0), _event("run_finished", 1)])
    engine = TemporalEngine(FakeClient(server), task_queue="tq")  # type: ignore[arg-type]

    async def refused(**kwargs: Any) -> Any:
        raise _rpc(RPCStatusCode.PERMISSION_DENIED, "describe is not allowed")

    monkeypatch.setattr(FakeHandle, "describe", lambda self, **kw: refused(**kw))
    kinds = [item.kind async for item in engine.follow(RUN, until_finished=False)]
    assert kinds == ["run_started", "run_finished"]


def test_views_show_a_retry_and_never_fail_on_a_kind_they_do_not_know() -> None:
    console = Console(width=200, record=True, color_system=None)
    notice = RetryNotice(
        call="model openai:x", attempt=2, attempts=8, wait_seconds=4.0, cause="HTTP 503"
    )
    view = EventView(console)
    view.note(FollowNote.retrying(RUN, notice))
    newer_note = FollowNote.model_construct(kind="paused", run_id=RUN, detail="by ops")
    view.note(newer_note)
    newer_event = AgentEvent.model_construct(
        kind="skill_forked", run_id=RUN, turn=3, at=0.0, detail="pdf → pdf2"
    )
    view(newer_event)
    view(AgentEvent(kind="skill_published", run_id=RUN, turn=4, at=0.0, detail="notes"))
    shown = console.export_text()
    assert f"retrying · {notice.line()}" in shown
    assert "paused · by ops" in shown
    assert "skill_forked" in shown
    assert "pdf → pdf2" in shown
    assert "notes" in shown


@pytest.mark.parametrize("escape", ["\x1b[2J", "\x07"])
def test_a_retry_line_escapes_what_a_server_said(escape: str) -> None:
    console = Console(width=200, record=True, color_system=None)
    notice = RetryNotice(call="model m", attempt=1, cause=f"HTTP 503: {escape}boom")
    EventView(console).note(FollowNote.retrying(RUN, notice))
    assert escape not in console.export_text()
