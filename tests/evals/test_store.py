"""The eval store on the local directory store: a batch saved and loaded, the first grade of a
job kept when two race, reports stored in three forms and listed newest first, and what a
hostile store holds left out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillweave.evals import EvalBatch, EvalCase, EvalJob, EvalReport, JobGrade, Verdict
from skillweave.evals.store import (
    EvalsNotFoundError,
    list_reports,
    load_batch,
    load_grade,
    load_grades,
    read_report,
    read_report_file,
    save_batch,
    save_grade,
    save_report,
)
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore

VERSION = "a" * 64


def batch(batch_id: str = "eval-20261207-040000-abc123", **fields: object) -> EvalBatch:
    return EvalBatch(
        batch_id=batch_id,
        skill="unit-converter",
        version=VERSION,
        cases=(EvalCase(id="1", prompt="Convert 5 km", expectations=("3.107 miles",)),),
        created_at="2026-12-07T04:00:00Z",
        **fields,  # type: ignore[arg-type]
    )


def grade(passed: bool, *, repeat: int = 1) -> JobGrade:
    job = EvalJob(eval_id="1", variant="skill", repeat=repeat)
    return JobGrade(
        job=job,
        run_id=f"eval-x-{job.key}",
        status="completed",
        verdicts=(Verdict(text="3.107 miles", passed=passed, by="grader"),),
    )


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


async def test_a_batch_round_trips_and_an_unknown_one_is_not_found(
    store: LocalArtifactStore,
) -> None:
    saved = batch(baseline=True, repeat=2)
    await save_batch(store, saved)
    assert await load_batch(store, "unit-converter", saved.batch_id) == saved
    resumed = saved.model_copy(update={"attempt": 1})
    await save_batch(store, resumed)
    assert (await load_batch(store, "unit-converter", saved.batch_id)).attempt == 1

    with pytest.raises(EvalsNotFoundError) as missing:
        await load_batch(store, "unit-converter", "eval-20261207-000000-ffffff")
    assert str(missing.value) == (
        "no eval batch eval-20261207-000000-ffffff of unit-converter: "
        "`skillweave skills eval unit-converter --list` lists its batches"
    )
    for hostile in ("../../etc", "eval-x/../../y", "EVAL-1", ""):
        with pytest.raises(EvalsNotFoundError):
            await load_batch(store, "unit-converter", hostile)


async def test_a_batch_stored_under_another_skill_or_id_is_not_that_batch(
    store: LocalArtifactStore,
) -> None:
    other = batch("eval-20261207-040000-000001")
    key = keys.eval_batch_key("unit-converter", "eval-20261207-040000-000002")
    await store.put_bytes(key, other.model_dump_json().encode())
    with pytest.raises(EvalsNotFoundError):
        await load_batch(store, "unit-converter", "eval-20261207-040000-000002")
    await store.put_bytes(keys.eval_batch_key("unit-converter", other.batch_id), b"{garbage")
    with pytest.raises(EvalsNotFoundError):
        await load_batch(store, "unit-converter", other.batch_id)


async def test_the_first_grade_of_a_job_wins_even_when_two_race(
    store: LocalArtifactStore,
) -> None:
    batch_id = batch().batch_id
    await asyncio.gather(
        *(save_grade(store, "unit-converter", batch_id, grade(n % 2 == 0)) for n in range(8))
    )
    first = await load_grade(store, "unit-converter", batch_id, "e1-skill-r1")
    assert first is not None
    await save_grade(store, "unit-converter", batch_id, grade(not first.verdicts[0].passed))
    assert await load_grade(store, "unit-converter", batch_id, "e1-skill-r1") == first
    assert await load_grades(store, "unit-converter", batch_id) == (first,)


async def test_grades_that_are_not_where_they_claim_are_left_out(
    store: LocalArtifactStore,
) -> None:
    batch_id = batch().batch_id
    await save_grade(store, "unit-converter", batch_id, grade(True, repeat=2))
    misplaced = keys.eval_job_key("unit-converter", batch_id, "e1-skill-r3")
    await store.put_bytes(misplaced, grade(True, repeat=1).model_dump_json().encode())
    await store.put_bytes(keys.eval_job_key("unit-converter", batch_id, "e9"), b"not json")
    grades = await load_grades(store, "unit-converter", batch_id)
    assert [g.job.key for g in grades] == ["e1-skill-r2"]
    assert await load_grade(store, "unit-converter", batch_id, "e1-skill-r3") is None


def report(batch_id: str, created_at: str, **fields: object) -> EvalReport:
    return EvalReport(
        batch_id=batch_id,
        skill="unit-converter",
        version=VERSION,
        created_at=created_at,
        finished_at=created_at,
        jobs=(grade(True),),
        **fields,  # type: ignore[arg-type]
    )


async def test_a_report_is_stored_in_three_forms_and_summarised(
    store: LocalArtifactStore,
) -> None:
    stored = report("eval-20261207-040000-abc123", "2026-12-07T04:00:00Z")
    summary = await save_report(store, stored, markdown="# Report ✓", html="<p>report</p>")

    assert (summary.batch_id, summary.status, summary.jobs) == (stored.batch_id, "completed", 1)
    assert summary.pass_rate is None  # no variant summaries in this hand-made report
    assert summary.report.key == keys.eval_report_key("unit-converter", stored.batch_id, "json")
    assert summary.html.content_type == "text/html; charset=utf-8"
    assert await read_report(store, "unit-converter", stored.batch_id) == stored
    md = await read_report_file(store, "unit-converter", stored.batch_id, "md")
    assert md.decode() == "# Report ✓"
    html = await read_report_file(store, "unit-converter", stored.batch_id, "html")
    assert html == b"<p>report</p>"
    with pytest.raises(EvalsNotFoundError, match="no eval report"):
        await read_report(store, "unit-converter", "eval-20261207-000000-ffffff")


async def test_reports_are_listed_newest_first_only_when_readable(
    store: LocalArtifactStore,
) -> None:
    older = report("eval-20261206-100000-aaaaaa", "2026-12-06T10:00:00Z")
    newer = report("eval-20261207-100000-bbbbbb", "2026-12-07T10:00:00Z", status="cancelled")
    for made in (older, newer):
        await save_report(store, made, markdown="", html="")
    await save_batch(store, batch("eval-20261208-000000-cccccc"))  # still running: no report
    broken = keys.eval_report_key("unit-converter", "eval-20261208-000000-dddddd", "json")
    await store.put_bytes(broken, b"{")
    elsewhere = keys.eval_report_key("unit-converter", "eval-20261209-000000-eeeeee", "json")
    await store.put_bytes(elsewhere, older.model_dump_json().encode())

    listed = await list_reports(store, "unit-converter")

    assert [r.batch_id for r in listed] == [newer.batch_id, older.batch_id]
    assert await list_reports(store, "log-triage") == ()
