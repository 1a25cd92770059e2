"""The direct runner: a batch's steps through the batch effects, in the workflow's order, on a
real direct engine over the scripted model (the batch's services are a fake that records
them): concurrency, resume, cancel, unattended approvals, a step that fails for good."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.agent.spec import ApprovalOptions
from skillweave.config import Settings
from skillweave.engines import AgentServices, Backoff, DirectEngine
from skillweave.errors import AgentSpecError, ConfigError, StorageError
from skillweave.evals import (
    BATCH_EFFECTS,
    BatchProgress,
    EvalBatch,
    EvalCase,
    JobGrade,
    ReportSummary,
    Verdict,
    job_run_id,
    plan_jobs,
)
from skillweave.evals.results import (
    FinishedJobs,
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    PreparedJob,
    PrepareJobInput,
    ReportInput,
)
from skillweave.evals.runner import UNATTENDED, DirectEvals
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage import ArtifactRef, keys
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library

ANSWER = "turns: [{say: 'the answer is 42'}]"
COUNTING = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: profiler, script: scripts/count.py, args: [inputs/a.txt],
                    inputs: ["{{artifact:a.txt}}"]}
  - say: "done: {{last_result}}"
"""


def _ref(key: str, data: bytes = b"x") -> ArtifactRef:
    return ArtifactRef(key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest())


class FakeEvalServices:
    """The four batch effects, in memory: each call recorded (name, request)."""

    def __init__(self, store: LocalArtifactStore, *, graded: tuple[JobGrade, ...] = ()) -> None:
        self.store = store
        self.grades: dict[str, JobGrade] = {grade.job.key: grade for grade in graded}
        self.calls: list[tuple[str, object]] = []
        self.grade_failures: list[Exception] = []
        self.grade_gate: asyncio.Event | None = None

    async def finished_eval_jobs(self, request: FinishedJobsInput) -> FinishedJobs:
        self.calls.append(("finished_eval_jobs", request))
        return FinishedJobs(grades=tuple(GradedJob.of(grade) for grade in self.grades.values()))

    async def prepare_eval_job(self, request: PrepareJobInput) -> PreparedJob:
        self.calls.append(("prepare_eval_job", request))
        refs = []
        for path in request.files:
            name = path.rsplit("/", 1)[-1]
            refs.append(
                await self.store.put_bytes(keys.run_input_key(request.run_id, name), b"a b c")
            )
        return PreparedJob(inputs=tuple(refs))

    async def grade_eval_job(self, request: GradeJobInput) -> GradedJob:
        self.calls.append(("grade_eval_job", request))
        if self.grade_gate is not None:
            await self.grade_gate.wait()
        if self.grade_failures:
            raise self.grade_failures.pop(0)
        answer = request.result.answer or ""
        grade = JobGrade(
            job=request.job,
            run_id=request.result.run_id,
            status=request.result.status,
            answer=answer,
            verdicts=(Verdict(text="says 42", passed="42" in answer, evidence=answer, by="check"),),
            wall_seconds=request.wall_seconds,
        )
        self.grades.setdefault(grade.job.key, grade)
        return GradedJob.of(self.grades[grade.job.key])

    async def write_eval_report(self, request: ReportInput) -> ReportSummary:
        self.calls.append(("write_eval_report", request))
        prefix = keys.eval_batch_prefix(request.skill, request.batch_id)
        return ReportSummary(
            batch_id=request.batch_id,
            skill=request.skill,
            status=request.status,
            jobs=len(self.grades),
            report=_ref(prefix + "report.json"),
            markdown=_ref(prefix + "report.md"),
            html=_ref(prefix + "report.html"),
        )

    def named(self, name: str) -> list[object]:
        return [request for called, request in self.calls if called == name]


class GatedProvider(RecordingProvider):
    """Answers once its gate opens; counts the calls waiting on it."""

    def __init__(self, inner: ScriptedProvider) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()
        self.waiting = 0
        self.most_waiting = 0

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().complete(request)


def _engine(tmp_path: Path, provider: RecordingProvider) -> tuple[DirectEngine, FakeSandbox]:
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = FakeSandbox(store)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=provider,
        model="scripted",
        sandbox=sandbox,  # type: ignore[arg-type]
    )
    return DirectEngine(services), sandbox


def _batch(engine: DirectEngine, **changes: object) -> EvalBatch:
    version = engine.services.registry.get("notes").version
    cases = (
        EvalCase(id="1", prompt="what is six times seven?", expectations=("says 42",)),
        EvalCase(id="2", prompt="and seven times six?", expectations=("says 42",)),
    )
    fields: dict[str, object] = {
        "batch_id": "eval-20261207-040000-abc123",
        "skill": "notes",
        "version": version,
        "baseline": True,
        "repeat": 2,
        "concurrency": 2,
        "cases": cases,
        "created_at": "2026-12-07T04:00:00+00:00",
        **changes,
    }
    return EvalBatch.model_validate(fields)


def _runner(engine: DirectEngine, services: FakeEvalServices) -> DirectEvals:
    return DirectEvals(engine, services, backoff=Backoff(initial=0.0, attempts=3))


async def test_a_batch_runs_every_job_grades_it_and_writes_the_report(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    services = FakeEvalServices(engine.services.store)
    batch = _batch(engine)
    told: list[BatchProgress] = []

    summary = await _runner(engine, services).run(batch, on_progress=told.append)

    assert summary.status == "completed"
    # The workflow's order: finished jobs first, the report last; every step by its effect.
    names = [name for name, _ in services.calls]
    assert names[0] == "finished_eval_jobs"
    assert names[-1] == "write_eval_report"
    assert set(names) <= {effect.name for effect in BATCH_EFFECTS}
    graded = services.named("grade_eval_job")
    assert sorted(r.job.key for r in graded) == sorted(j.key for j in plan_jobs(batch))  # type: ignore[attr-defined]
    for request in graded:
        assert request.result.status == "completed"  # type: ignore[attr-defined]
        assert request.wall_seconds >= 0  # type: ignore[attr-defined]
        assert request.result.run_id == job_run_id(batch.batch_id, request.job)  # type: ignore[attr-defined]
    # Each job's run is an agent run on the engine, with the skill pinned or left out.
    skill_run = engine.state(job_run_id(batch.batch_id, plan_jobs(batch)[0]))
    assert skill_run.status == "completed"
    assert told[-1].phase == "completed"
    assert told[-1].finished == told[-1].jobs == 8
    assert told[-1].passed_verdicts == told[-1].verdicts == 8
    assert told[-1].running == ()
    # The batch is stored: a resume reads it.
    stored = engine.services.store.root / keys.eval_batch_key(batch.skill, batch.batch_id)
    assert EvalBatch.model_validate_json(stored.read_text()) == batch


async def test_no_more_than_concurrency_jobs_run_at_once(tmp_path: Path) -> None:
    provider = GatedProvider(ScriptedProvider.from_yaml(ANSWER))
    engine, _ = _engine(tmp_path, provider)
    services = FakeEvalServices(engine.services.store)
    batch = _batch(engine, concurrency=3)
    most_running = 0

    def seen(progress: BatchProgress) -> None:
        nonlocal most_running
        most_running = max(most_running, len(progress.running))

    running = asyncio.create_task(_runner(engine, services).run(batch, on_progress=seen))
    for _ in range(200):
        if provider.waiting == 3:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert provider.waiting == 3  # three runs wait on the model, the other five on a slot
    provider.gate.set()
    summary = await running
    assert summary.status == "completed"
    assert provider.most_waiting == 3
    assert most_running == 3


async def test_a_resumed_batch_skips_the_graded_jobs_and_runs_the_rest_afresh(
    tmp_path: Path,
) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    batch = _batch(engine, attempt=1)
    jobs = plan_jobs(batch)
    before = tuple(
        JobGrade(
            job=job,
            run_id=job_run_id(batch.batch_id, job),
            status="completed",
            verdicts=(Verdict(text="says 42", passed=True, by="check"),),
        )
        for job in jobs[:3]
    )
    services = FakeEvalServices(engine.services.store, graded=before)
    told: list[BatchProgress] = []

    await _runner(engine, services).run(batch, on_progress=told.append)

    graded = [r.job.key for r in services.named("grade_eval_job")]  # type: ignore[attr-defined]
    assert sorted(graded) == sorted(job.key for job in jobs[3:])
    for job in jobs[:3]:  # not run again: no run of either attempt
        with pytest.raises(Exception, match="no run"):
            engine.state(job_run_id(batch.batch_id, job))
        with pytest.raises(Exception, match="no run"):
            engine.state(job_run_id(batch.batch_id, job, attempt=1))
    for job in jobs[3:]:  # a fresh run id: the attempt's
        assert engine.state(job_run_id(batch.batch_id, job, attempt=1)).status == "completed"
    assert told[-1].skipped == 3
    assert told[-1].finished == len(jobs)


async def test_eval_files_are_prepared_as_the_runs_inputs(tmp_path: Path) -> None:
    engine, sandbox = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(COUNTING)))
    case = EvalCase(
        id="count", prompt="count the words", files=("evals/files/a.txt",), expectations=("3",)
    )
    version = engine.services.registry.get("profiler").version
    batch = _batch(engine, skill="profiler", version=version, cases=(case,), repeat=1)
    batch = batch.model_copy(update={"baseline": False, "agent": AgentSpec(skills=("toolkit",))})
    services = FakeEvalServices(engine.services.store)

    await _runner(engine, services).run(batch)

    (prepared,) = services.named("prepare_eval_job")
    assert prepared.files == ("evals/files/a.txt",)  # type: ignore[attr-defined]
    assert prepared.version == version  # type: ignore[attr-defined]
    (graded,) = services.named("grade_eval_job")
    assert graded.result.script_runs == 1  # type: ignore[attr-defined]
    assert len(sandbox.requests) == 1


async def test_an_approval_an_eval_job_asks_for_is_denied_at_once(tmp_path: Path) -> None:
    engine, sandbox = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(COUNTING)))
    case = EvalCase(id="count", prompt="count", files=("evals/files/a.txt",), checks=())
    case = case.model_copy(update={"expectations": ("3",)})
    version = engine.services.registry.get("profiler").version
    agent = AgentSpec(skills=("toolkit",), approvals=ApprovalOptions(skills=("*",)))
    batch = _batch(engine, skill="profiler", version=version, cases=(case,), repeat=1)
    batch = batch.model_copy(update={"baseline": False, "agent": agent})
    services = FakeEvalServices(engine.services.store)

    await asyncio.wait_for(_runner(engine, services).run(batch), timeout=20)

    (graded,) = services.named("grade_eval_job")
    result = graded.result  # type: ignore[attr-defined]
    assert result.status == "completed"
    assert result.script_runs == 0
    assert sandbox.requests == []
    assert "not approved" in (result.answer or "")
    decided = [e async for e in engine.events(result.run_id) if e.kind == "approval_decided"]
    assert decided[0].status == "denied"
    assert UNATTENDED in (decided[0].detail or "")


async def test_a_cancelled_batch_cancels_its_runs_and_reports_what_was_graded(
    tmp_path: Path,
) -> None:
    provider = GatedProvider(ScriptedProvider.from_yaml(ANSWER))
    engine, _ = _engine(tmp_path, provider)
    services = FakeEvalServices(engine.services.store)
    batch = _batch(engine)
    runner = _runner(engine, services)
    running = asyncio.create_task(runner.run(batch))
    for _ in range(200):
        if provider.waiting == 2:
            break
        await asyncio.sleep(0.01)
    assert runner.progress(batch.batch_id) is not None

    await runner.cancel(batch.skill, batch.batch_id)

    with pytest.raises(asyncio.CancelledError):
        await running
    (report,) = services.named("write_eval_report")
    assert report.status == "cancelled"  # type: ignore[attr-defined]
    first, second = plan_jobs(batch)[:2]
    for job in (first, second):
        assert engine.state(job_run_id(batch.batch_id, job)).status == "cancelled"
    assert services.named("grade_eval_job") == []
    assert runner.progress(batch.batch_id) is None
    with pytest.raises(Exception, match="no eval batch"):
        await runner.cancel(batch.skill, batch.batch_id)


async def test_the_callers_own_cancellation_writes_the_report_too(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    services = FakeEvalServices(engine.services.store)
    services.grade_gate = asyncio.Event()  # every job waits on its grade
    batch = _batch(engine, repeat=1)
    running = asyncio.create_task(_runner(engine, services).run(batch))
    for _ in range(200):
        if len(services.named("grade_eval_job")) == 2:
            break
        await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert [r.status for r in services.named("write_eval_report")] == ["cancelled"]  # type: ignore[attr-defined]


async def test_a_step_is_retried_by_the_shared_rule(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    services = FakeEvalServices(engine.services.store)
    services.grade_failures = [StorageError("the store blinked")]
    batch = _batch(engine, repeat=1, baseline=False, cases=_batch(engine).cases[:1])

    summary = await _runner(engine, services).run(batch)

    assert summary.status == "completed"
    assert len(services.named("grade_eval_job")) == 2  # the failed attempt, then the retry


async def test_a_job_whose_step_fails_for_good_is_left_ungraded_and_the_batch_partial(
    tmp_path: Path,
) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    services = FakeEvalServices(engine.services.store)
    services.grade_failures = [AgentSpecError("grader", "no such model profile")]
    batch = _batch(engine, concurrency=1)
    told: list[BatchProgress] = []

    summary = await _runner(engine, services).run(batch, on_progress=told.append)

    assert summary.status == "partial"
    (report,) = services.named("write_eval_report")
    assert report.status == "partial"  # type: ignore[attr-defined]
    first = plan_jobs(batch)[0]
    assert sorted(services.grades) == sorted(job.key for job in plan_jobs(batch)[1:])
    assert first.key not in services.grades  # a resume runs it again
    assert told[-1].finished == len(plan_jobs(batch)) - 1


async def test_a_job_whose_run_cannot_start_is_left_ungraded(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))
    batch = _batch(engine, repeat=1, baseline=False)
    await _runner(engine, FakeEvalServices(engine.services.store)).run(batch)
    forgetful = FakeEvalServices(engine.services.store)  # knows no grade: reruns every job

    summary = await _runner(engine, forgetful).run(batch)  # same attempt: the run ids taken

    assert summary.status == "partial"
    assert forgetful.named("grade_eval_job") == []


async def test_a_batch_runs_once_at_a_time(tmp_path: Path) -> None:
    provider = GatedProvider(ScriptedProvider.from_yaml(ANSWER))
    engine, _ = _engine(tmp_path, provider)
    runner = _runner(engine, FakeEvalServices(engine.services.store))
    batch = _batch(engine)
    first = asyncio.create_task(runner.run(batch))
    await asyncio.sleep(0.05)
    with pytest.raises(Exception, match="runs in this process already"):
        await runner.run(batch)
    provider.gate.set()
    assert (await first).status == "completed"


def test_services_without_a_batch_effect_are_refused(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, RecordingProvider(ScriptedProvider.from_yaml(ANSWER)))

    class Half:
        async def finished_eval_jobs(self, request: object) -> None: ...

    with pytest.raises(ConfigError, match="prepare_eval_job, grade_eval_job, write_eval_report"):
        DirectEvals(engine, Half())
