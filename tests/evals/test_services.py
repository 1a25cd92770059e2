"""EvalServices over real AgentServices (local store, scripted models, the harness's fake
sandbox): an eval's input files copied to a run, a real run graded (checks, then a scripted
grader named by a profile), priced by the agent's profile and stored once, and the report
written with the trigger evals."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.config import ModelProfile, Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest, RunResult
from skillweave.errors import ConfigError
from skillweave.evals import BATCH_EFFECTS, EvalBatch, EvalJob, job_run_id
from skillweave.evals.results import (
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    PrepareJobInput,
    ReportInput,
)
from skillweave.evals.services import EvalServices
from skillweave.evals.store import (
    EvalsNotFoundError,
    load_grade,
    read_report,
    read_report_file,
    save_batch,
)
from skillweave.evals.suite import EvalSuiteError, parse_suite
from skillweave.llm import ModelProviders
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, write_skill

COUNT = (
    "import sys, pathlib\n"
    "data = pathlib.Path(sys.argv[1]).read_text()\n"
    "pathlib.Path('outputs/count.txt').write_text(str(len(data.split())))\n"
    "print('words:', len(data.split()))\n"
)
SUITE = {
    "skill_name": "counter",
    "evals": [
        {
            "id": 1,
            "prompt": "Count the words in words.txt",
            "files": ["evals/files/words.txt"],
            "expectations": ["The answer says the file has 3 words"],
            "checks": [
                {"type": "file_exists", "path": "count.txt"},
                {"type": "script_ran", "script": "scripts/count.py"},
                {"type": "answer_contains", "text": "3 words"},
            ],
        }
    ],
}
AGENT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: counter}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: counter, script: scripts/count.py, args: [inputs/words.txt],
                    inputs: ["{{artifact:words.txt}}"]}
    usage: {input_tokens: 1000, output_tokens: 100}
  - say: "The file has 3 words."
    usage: {input_tokens: 2000, output_tokens: 50}
"""
GRADER = """
turns:
  - say: '{"expectations": [{"text": "The answer says the file has 3 words",
           "passed": true, "evidence": "The file has 3 words."}]}'
    usage: {input_tokens: 500, output_tokens: 20}
"""
BATCH_ID = "eval-20261207-040000-abcdef"


def library(root: Path) -> SkillRegistry:
    write_skill(
        root,
        "counter",
        "# Counter\nRun scripts/count.py FILE.",
        files={
            "scripts/count.py": COUNT,
            "evals/evals.json": json.dumps(SUITE),
            "evals/files/words.txt": "one two three",
            "evals/triggers.json": json.dumps(
                [{"query": "bake sourdough bread", "should_trigger": False}]
            ),
        },
    )
    write_skill(root, "baker", "# Baker\nBake bread.")
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def services_for(tmp_path: Path) -> AgentServices:
    (tmp_path / "agent.yaml").write_text(textwrap.dedent(AGENT))
    (tmp_path / "grader.yaml").write_text(textwrap.dedent(GRADER))
    settings = Settings(
        _env_file=None,
        model={
            "profiles": {
                "agent": {
                    "provider": "scripted",
                    "name": str(tmp_path / "agent.yaml"),
                    "input_usd_per_mtok": 3.0,
                    "output_usd_per_mtok": 15.0,
                },
                "grader": {"provider": "scripted", "name": str(tmp_path / "grader.yaml")},
            }
        },
    )
    store = LocalArtifactStore(tmp_path / "store")
    return AgentServices(
        settings=settings,
        registry=library(tmp_path / "skills"),
        store=store,
        provider=None,
        model=None,
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
        models=ModelProviders(settings.model),
    )


def the_batch(services: AgentServices) -> EvalBatch:
    suite = parse_suite(json.dumps(SUITE), source="evals.json")
    return EvalBatch(
        batch_id=BATCH_ID,
        skill="counter",
        version=services.registry.get("counter").version,
        cases=suite.evals,
        model="agent",
        grader="grader",
        created_at="2026-12-07T04:00:00Z",
    )


def test_every_batch_effect_has_its_method() -> None:
    for effect in BATCH_EFFECTS:
        assert callable(getattr(EvalServices, effect.name))

    class Missing(EvalServices):
        grade_eval_job = None  # type: ignore[assignment]

    with pytest.raises(ConfigError, match="grade_eval_job"):
        Missing(object())  # type: ignore[arg-type]


def test_a_model_is_priced_only_with_both_prices() -> None:
    priced = ModelProfile(provider="openai", name="m", input_usd_per_mtok=3, output_usd_per_mtok=15)
    assert priced.cost_of(input_tokens=1_000_000, output_tokens=100_000) == pytest.approx(4.5)
    half = ModelProfile(provider="openai", name="m", input_usd_per_mtok=3)
    assert half.cost_of(input_tokens=10, output_tokens=10) is None


def test_prices_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL__INPUT_USD_PER_MTOK", "2.5")
    monkeypatch.setenv("MODEL__PROFILES__BIG__PROVIDER", "openai")
    monkeypatch.setenv("MODEL__PROFILES__BIG__NAME", "big")
    monkeypatch.setenv("MODEL__PROFILES__BIG__OUTPUT_USD_PER_MTOK", "10")
    settings = Settings(_env_file=None)
    assert settings.model.input_usd_per_mtok == 2.5
    assert settings.model.profiles["big"].output_usd_per_mtok == 10
    monkeypatch.setenv("MODEL__OUTPUT_USD_PER_MTOK", "-1")
    with pytest.raises(ValueError, match="output_usd_per_mtok"):
        Settings(_env_file=None)


async def test_an_evals_files_are_copied_to_the_runs_inputs(tmp_path: Path) -> None:
    services = services_for(tmp_path)
    evals = EvalServices(services)
    version = services.registry.get("counter").version
    request = PrepareJobInput(
        skill="counter", version=version, run_id="r1", files=("evals/files/words.txt",)
    )

    prepared = await evals.prepare_eval_job(request)
    again = await evals.prepare_eval_job(request)

    [ref] = prepared.inputs
    assert ref.key == keys.run_input_key("r1", "words.txt")
    assert await services.store.get_bytes(ref) == b"one two three"
    assert again == prepared
    clash = request.model_copy(update={"files": ("evals/files/words.txt", "evals/words.txt")})
    with pytest.raises(EvalSuiteError, match="have one name"):
        await evals.prepare_eval_job(clash)


async def run_job(services: AgentServices, evals: EvalServices, batch: EvalBatch) -> RunResult:
    job = EvalJob(eval_id="1", variant="skill", repeat=1)
    run_id = job_run_id(batch.batch_id, job)
    prepared = await evals.prepare_eval_job(
        PrepareJobInput(
            skill="counter", version=batch.version, run_id=run_id, files=batch.cases[0].files
        )
    )
    engine = DirectEngine(services)
    await engine.start(
        RunRequest(
            run_id=run_id,
            task=batch.cases[0].prompt,
            agent=AgentSpec(model="agent", skills=("counter",)),
            inputs=prepared.inputs,
        )
    )
    return await engine.result(run_id)


async def test_a_real_run_is_graded_priced_stored_once_and_reported(tmp_path: Path) -> None:
    services = services_for(tmp_path)
    evals = EvalServices(services)
    batch = the_batch(services)
    result = await run_job(services, evals, batch)
    assert result.status == "completed", result.reason
    request = GradeJobInput(
        batch_id=BATCH_ID,
        skill="counter",
        job=EvalJob(eval_id="1", variant="skill", repeat=1),
        result=result,
        wall_seconds=1.5,
        model="agent",
        grader="grader",
    )
    with pytest.raises(EvalsNotFoundError, match="no eval batch"):
        await evals.grade_eval_job(request)  # the eval is read from the stored batch
    await save_batch(services.store, batch)

    graded = await evals.grade_eval_job(request)

    grade = await load_grade(services.store, "counter", BATCH_ID, request.job.key)
    assert grade is not None
    # The step answers the stored grade counted: its verdicts stay in the store.
    assert graded == GradedJob(
        job=request.job, run_id=result.run_id, status="completed", passed=4, verdicts=4
    )
    assert [(v.text, v.passed, v.by) for v in grade.verdicts] == [
        ("outputs/count.txt exists", True, "check"),
        ("scripts/count.py was run", True, "check"),
        ('the answer contains "3 words"', True, "check"),
        ("The answer says the file has 3 words", True, "grader"),
    ]
    assert grade.grade_error is None
    assert (grade.turns, grade.script_runs, grade.wall_seconds) == (3, 1, 1.5)
    assert grade.grader_usage.total_tokens == 520
    expected = (result.usage.input_tokens * 3 + result.usage.output_tokens * 15) / 1e6
    assert grade.cost == pytest.approx(expected)
    # a retried step grades again: the first grade stored is the answer
    failing = result.model_copy(update={"status": "failed", "answer": None})
    regraded = await evals.grade_eval_job(
        request.model_copy(update={"wall_seconds": 9.0, "result": failing})
    )
    assert regraded == graded
    assert await load_grade(services.store, "counter", BATCH_ID, request.job.key) == grade
    finished = await evals.finished_eval_jobs(FinishedJobsInput(skill="counter", batch_id=BATCH_ID))
    assert finished.grades == (graded,)

    summary = await evals.write_eval_report(
        ReportInput(
            skill="counter", batch_id=BATCH_ID, finished_at="2026-12-07T04:01:00Z", wall_seconds=60
        )
    )

    assert (summary.status, summary.jobs, summary.pass_rate) == ("completed", 1, 1.0)
    report = await read_report(services.store, "counter", BATCH_ID)
    assert report.jobs == (grade,)
    assert report.triggers is not None
    assert (report.triggers.positives, report.triggers.negatives) == (1, 1)
    html = await read_report_file(services.store, "counter", BATCH_ID, "html")
    assert b"counter" in html
    assert (await read_report_file(services.store, "counter", BATCH_ID, "md")).strip()


async def test_a_grader_that_does_not_resolve_is_a_config_error(tmp_path: Path) -> None:
    services = services_for(tmp_path)
    evals = EvalServices(services)
    batch = the_batch(services)
    await save_batch(services.store, batch)
    request = GradeJobInput(
        batch_id=BATCH_ID,
        skill="counter",
        job=EvalJob(eval_id="1", variant="skill", repeat=1),
        result=RunResult(run_id="r9", status="failed", reason="boom"),
        wall_seconds=0,
        model="agent",
        grader="nope",
    )
    with pytest.raises(ConfigError, match="unknown model profile 'nope'"):
        await evals.grade_eval_job(request)
    # Stored again (a resume's, say) with the eval checks only: the batch kept has no eval
    # "2", so it is read again.
    checks_only = batch.cases[0].model_copy(update={"id": "2", "expectations": ()})
    await save_batch(services.store, batch.model_copy(update={"cases": (checks_only,)}))
    job = EvalJob(eval_id="2", variant="skill", repeat=1)
    graded = await evals.grade_eval_job(request.model_copy(update={"job": job}))
    assert (graded.passed, graded.verdicts, graded.status) == (0, 3, "failed")
    grade = await load_grade(services.store, "counter", BATCH_ID, job.key)
    assert grade is not None
    assert [v.passed for v in grade.verdicts] == [False, False, False]
    assert grade.reason == "boom"
    assert grade.grader_usage.total_tokens == 0
    with pytest.raises(EvalSuiteError, match="no eval '3' in batch"):
        await evals.grade_eval_job(
            request.model_copy(update={"job": job.model_copy(update={"eval_id": "3"})})
        )
