"""Eval batches in the artifact store: every ``evals/`` key is read and written here.

A batch's request (``batch.json``), its graded jobs (``jobs/{job}.json``, each written once:
the first grade stored wins, so a job graded twice by a retried or replayed step keeps one
grade) and its report (``report.json``, ``report.md``, ``report.html``; ``report.json`` is
written last and is what marks a batch as reported). The keys are
``skillweave.storage.keys.eval_*``. Called by ``EvalServices`` (grades, reports), the runners
(:mod:`skillweave.evals.temporal`, :mod:`skillweave.evals.runner`: the batch) and the doors
(the CLI's ``--list``/``--show``, the API, approvals' eval summaries).

What the store holds may have been written by anyone with access to it: every file is parsed
strictly, one that does not parse or does not belong where it lies is left out of a listing,
and a batch id is checked before any key is built from it.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import ValidationError

from skillweave.errors import SkillweaveError
from skillweave.evals.batch import BATCH_ID_PATTERN, MAX_JOBS, EvalBatch
from skillweave.evals.results import EvalReport, JobGrade, ReportSummary
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = [
    "MAX_LISTED_REPORTS",
    "EvalsNotFoundError",
    "ReportForm",
    "list_reports",
    "load_batch",
    "load_grade",
    "load_grades",
    "read_report",
    "read_report_file",
    "save_batch",
    "save_grade",
    "save_report",
]

ReportForm = Literal["json", "md", "html"]
MAX_LISTED_REPORTS: Final = 200
"""Reports :func:`list_reports` reads (the newest batch ids first)."""
MAX_FILE_BYTES: Final = 64 * 1024 * 1024
"""A stored eval file larger than this is not read."""
_BATCH_ID: Final = re.compile(BATCH_ID_PATTERN)
_CONTENT_TYPES: Final[dict[str, str]] = {
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}


class EvalsNotFoundError(SkillweaveError):
    """No eval batch (or no report of it) of that id for that skill.

    Attributes:
        skill: the skill.
        batch_id: the batch id asked for.
        what: ``batch`` or ``report``.
    """

    def __init__(self, skill: str, batch_id: str, *, what: str = "batch") -> None:
        self.skill = skill
        self.batch_id = batch_id
        self.what = what
        shown = batch_id if _BATCH_ID.fullmatch(batch_id) else repr(batch_id[:80])
        super().__init__(
            f"no eval {what} {shown} of {skill}: `skillweave skills eval {skill} --list` "
            "lists its batches"
        )


def _batch_id(skill: str, batch_id: str, *, what: str = "batch") -> str:
    if not isinstance(batch_id, str) or not _BATCH_ID.fullmatch(batch_id):
        raise EvalsNotFoundError(skill, str(batch_id), what=what)
    return batch_id


async def _get(store: ArtifactStore, key: str) -> bytes | None:
    ref = await store.stat(key)
    if ref is None or ref.size > MAX_FILE_BYTES:
        return None
    return await store.get_bytes(ref)


async def save_batch(store: ArtifactStore, batch: EvalBatch) -> None:
    """Store what `batch` runs (replacing it: a resume stores its next attempt)."""
    await store.put_bytes(
        keys.eval_batch_key(batch.skill, batch.batch_id),
        batch.model_dump_json().encode(),
        content_type=_CONTENT_TYPES["json"],
    )


async def load_batch(store: ArtifactStore, skill: str, batch_id: str) -> EvalBatch:
    """The batch `batch_id` of `skill`, as stored.

    Raises:
        EvalsNotFoundError: no such batch, or what is stored is not one of `skill`'s.
    """
    data = await _get(store, keys.eval_batch_key(skill, _batch_id(skill, batch_id)))
    if data is None:
        raise EvalsNotFoundError(skill, batch_id)
    try:
        batch = EvalBatch.model_validate_json(data)
    except ValidationError:
        raise EvalsNotFoundError(skill, batch_id) from None
    if (batch.skill, batch.batch_id) != (skill, batch_id):
        raise EvalsNotFoundError(skill, batch_id)
    return batch


async def save_grade(store: ArtifactStore, skill: str, batch_id: str, grade: JobGrade) -> None:
    """Store `grade` as its job's finish mark, unless one is stored already (the first wins:
    read it back with :func:`load_grades`)."""
    await store.put_if_absent(
        keys.eval_job_key(skill, _batch_id(skill, batch_id), grade.job.key),
        grade.model_dump_json().encode(),
        content_type=_CONTENT_TYPES["json"],
    )


async def load_grade(store: ArtifactStore, skill: str, batch_id: str, job: str) -> JobGrade | None:
    """The grade stored for the job named `job` (``EvalJob.key``), or None: none is, or
    what is stored is not that job's grade."""
    key = keys.eval_job_key(skill, _batch_id(skill, batch_id), job)
    ref = await store.stat(key)
    grade = None if ref is None else await _grade(store, ref)
    return grade if grade is not None and grade.job.key == job else None


async def load_grades(store: ArtifactStore, skill: str, batch_id: str) -> tuple[JobGrade, ...]:
    """Every grade stored for the batch, by job key; a file that is not the grade of the job
    it is named for is left out."""
    prefix = f"{keys.eval_batch_prefix(skill, _batch_id(skill, batch_id))}jobs/"
    grades: list[JobGrade] = []
    for ref in (await store.list(prefix))[:MAX_JOBS]:
        grade = await _grade(store, ref)
        if grade is not None and ref.key == keys.eval_job_key(skill, batch_id, grade.job.key):
            grades.append(grade)
    return tuple(grades)


async def _grade(store: ArtifactStore, ref: ArtifactRef) -> JobGrade | None:
    if ref.size > MAX_FILE_BYTES:
        return None
    try:
        return JobGrade.model_validate_json(await store.get_bytes(ref))
    except ValidationError:
        return None


async def save_report(
    store: ArtifactStore, report: EvalReport, *, markdown: str, html: str
) -> ReportSummary:
    """Store `report` as JSON, Markdown and HTML (the JSON last: it marks the batch as
    reported) and summarise it."""
    skill, batch_id = report.skill, _batch_id(report.skill, report.batch_id)
    md_ref = await store.put_bytes(
        keys.eval_report_key(skill, batch_id, "md"),
        markdown.encode("utf-8", "replace"),
        content_type=_CONTENT_TYPES["md"],
    )
    html_ref = await store.put_bytes(
        keys.eval_report_key(skill, batch_id, "html"),
        html.encode("utf-8", "replace"),
        content_type=_CONTENT_TYPES["html"],
    )
    json_ref = await store.put_bytes(
        keys.eval_report_key(skill, batch_id, "json"),
        report.model_dump_json().encode(),
        content_type=_CONTENT_TYPES["json"],
    )
    baseline = report.variant("baseline")
    return ReportSummary(
        batch_id=batch_id,
        skill=skill,
        status=report.status,
        pass_rate=report.pass_rate,
        baseline_pass_rate=None if baseline is None else baseline.pass_rate,
        jobs=len(report.jobs),
        report=json_ref,
        markdown=md_ref,
        html=html_ref,
    )


async def read_report(store: ArtifactStore, skill: str, batch_id: str) -> EvalReport:
    """The stored report of batch `batch_id` of `skill`.

    Raises:
        EvalsNotFoundError: the batch has no report (unknown, still running, or unreadable).
    """
    data = await _get(
        store, keys.eval_report_key(skill, _batch_id(skill, batch_id, what="report"), "json")
    )
    report = _report(data)
    if report is None or (report.skill, report.batch_id) != (skill, batch_id):
        raise EvalsNotFoundError(skill, batch_id, what="report")
    return report


def _report(data: bytes | None) -> EvalReport | None:
    if data is None:
        return None
    try:
        return EvalReport.model_validate_json(data)
    except ValidationError:
        return None


async def read_report_file(
    store: ArtifactStore, skill: str, batch_id: str, form: ReportForm
) -> bytes:
    """The stored report of the batch as `form` (``json``, ``md`` or ``html``), as bytes.

    Raises:
        EvalsNotFoundError: the batch has no report in that form.
    """
    if form not in _CONTENT_TYPES:
        raise ValueError(f"form {form!r}: json, md or html")
    data = await _get(
        store, keys.eval_report_key(skill, _batch_id(skill, batch_id, what="report"), form)
    )
    if data is None:
        raise EvalsNotFoundError(skill, batch_id, what="report")
    return data


async def list_reports(store: ArtifactStore, skill: str) -> tuple[EvalReport, ...]:
    """The reports of `skill`'s batches, newest first (by when each batch was asked for);
    only batches with a readable ``report.json``, at most :data:`MAX_LISTED_REPORTS`."""
    prefix = keys.evals_prefix(skill)
    found: list[tuple[str, ArtifactRef]] = []
    for ref in await store.list(prefix):
        batch_id, _, rest = ref.key.removeprefix(prefix).partition("/")
        if rest == "report.json" and _BATCH_ID.fullmatch(batch_id):
            found.append((batch_id, ref))
    found.sort(key=lambda item: item[0], reverse=True)
    reports: list[EvalReport] = []
    for batch_id, ref in found[:MAX_LISTED_REPORTS]:
        report = _report(await store.get_bytes(ref) if ref.size <= MAX_FILE_BYTES else None)
        if report is not None and (report.skill, report.batch_id) == (skill, batch_id):
            reports.append(report)
    reports.sort(key=lambda report: (report.created_at, report.batch_id), reverse=True)
    return tuple(reports)
