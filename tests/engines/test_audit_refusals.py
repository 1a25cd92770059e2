"""A worker's side effects that the audit log records (an activation, a skill the agent wrote
and published) are recorded before they take effect: while the log cannot be written, each
raises ``AuditLogError``, an infrastructure error the engines retry, never a tool result and
never a failed run; once it can, the step goes through, recorded once (issue 42, item 2).
Real services and a real local store whose ``audit/`` writes fail on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.agent.effect_models import CreateSkillInput, LoadSkillInput, PublishSkillInput
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest, read_transcript_record
from skillweave.engines.notes import FollowNote
from skillweave.engines.retries import Backoff, classify
from skillweave.errors import AuditLogError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills.stored import StoredSkills
from skillweave.storage.audit import AuditLog
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library
from tests.skills.failing_audit import AuditWritesFail, everything_but_the_log


def services_on(
    store: AuditWritesFail, tmp_path: Path, script: str = "turns: [{say: unused}]"
) -> AgentServices:
    return AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=RecordingProvider(ScriptedProvider.from_yaml(script)),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )


async def test_an_activation_that_cannot_be_recorded_raises_and_keeps_nothing(
    tmp_path: Path,
) -> None:
    store = AuditWritesFail(tmp_path / "store")
    services = services_on(store, tmp_path)
    activate = LoadSkillInput(run_id="run-a", skill="notes", seq=3, tool_call_id="call-1")

    store.failing = True
    with pytest.raises(AuditLogError) as raised:
        await services.load_skill(activate)
    assert classify(raised.value).again  # retried at the activity boundary, like a store down
    assert await read_transcript_record(store, "run-a", 3) is None  # the run sees nothing
    counted = services.metrics.registry.get_sample_value(
        "skillweave_skill_activations_total", {"skill": "notes"}
    )
    assert not counted  # nor counted

    store.failing = False
    loaded = await services.load_skill(activate)  # the retry
    assert loaded.refused is None
    await services.aclose()
    records = [r async for r in AuditLog(store).read(event="activation")]
    assert [(r.skill, r.run, r.details) for r in records] == [("notes", "run-a", {"step": 3})]


async def test_a_run_waits_out_an_audit_log_it_cannot_write_and_completes(
    tmp_path: Path,
) -> None:
    store = AuditWritesFail(tmp_path / "store")
    script = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
  - say: "done"
    expect: {tool_results: [{not_error: true, contains: '<skill_content name="notes">'}]}
"""
    engine = DirectEngine(
        services_on(store, tmp_path, script), backoff=Backoff(initial=0.05, attempts=8)
    )
    store.failing = True
    await engine.start(RunRequest(run_id="run-w", task="Take a note."))
    retries: list[FollowNote] = []
    async for item in engine.follow("run-w"):
        if isinstance(item, FollowNote) and item.kind == "retrying":
            retries.append(item)
            store.failing = False  # the store takes writes again

    result = await engine.result("run-w")
    assert result.status == "completed", result.reason
    [retry] = retries
    assert "audit record" in retry.detail, retry.detail
    records = [r async for r in AuditLog(store).read(event="activation")]
    assert [(r.skill, r.run) for r in records] == [("notes", "run-w")]


async def test_a_publication_that_cannot_be_recorded_raises_and_stores_nothing(
    tmp_path: Path,
) -> None:
    store = AuditWritesFail(tmp_path / "store")
    services = services_on(store, tmp_path)
    draft = await services.authoring.create(
        CreateSkillInput(
            run_id="run-p",
            seq=2,
            tool_call_id="call-1",
            execution_id="exec-1",
            name="echo-words",
            description="Echoes words. Use when words must be echoed.",
            instructions="Say the words back.",
        )
    )
    assert draft.version is not None, draft.summary
    publish = PublishSkillInput(
        run_id="run-p",
        seq=4,
        tool_call_id="call-2",
        name="echo-words",
        version=draft.version,
        approved_by="ops",
    )

    store.failing = True
    before = await everything_but_the_log(store)
    with pytest.raises(AuditLogError) as raised:
        await services.authoring.publish(publish)
    assert classify(raised.value).again
    assert await everything_but_the_log(store) == before  # not stored, no tool result

    store.failing = False
    published = await services.authoring.publish(publish)  # the retry
    assert published.published, published.summary
    assert await StoredSkills(store).get("echo-words") is not None
    events = [(r.event, r.run) async for r in AuditLog(store).read(skill="echo-words")]
    assert events == [
        ("scan", "run-p"),  # the draft's
        ("scan", "run-p"),  # the publication's
        ("signature", "run-p"),
        ("approval", "run-p"),
        ("upload", "run-p"),
    ]
