"""``/v1/skills/{name}/evals``: run a skill's evals on the API's engine, and read their reports.

``POST …/evals`` (:class:`EvalRequest`: the version, baseline, against, repeat, model, grader,
concurrency; each optional) reads the skill's ``evals/evals.json`` as that version holds it
and starts an eval batch on the API's engine (temporal: the ``EvalBatchWorkflow``; direct: in
this process, in the background, like the API's direct runs; :mod:`skillweave.api.eval_batches`):
202 with the batch's id and where to read it. Evals are unattended: a job's run that asks for
a person's approval is denied (direct) or waits out its timeout (temporal).

``GET …/evals`` lists the skill's batches that have a report, newest first (one
:class:`EvalBatchRow` each). ``GET …/evals/{batch_id}`` answers the batch's report
(:class:`~skillweave.evals.results.EvalReport` JSON; ``?format=markdown`` as
``text/markdown``; ``?format=html`` as one self-contained ``text/html`` page under a strict
``Content-Security-Policy``), rendered from its ``report.json`` so that whatever the store
holds went through the renderers' escaping; a batch without a report yet answers how far it
is (:class:`EvalRunning`: ``running`` with its progress, or ``stopped``: resume it).

The skill's name and the batch id are checked before any store read. Errors are problem+json:
no such skill, version or batch 404; a skill with no evals, a model that does not resolve or
a batch over the limits 422; an ambiguous version prefix 409; a batch the engine cannot start
(temporal: no worker serves the store) 503.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from fastapi import APIRouter, Body, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.api.deps import Evals, ServedLibrary, State
from skillweave.api.eval_batches import EvalBatches
from skillweave.api.problems import ApiProblem, problem_response
from skillweave.api.served_skills import ServedSkills
from skillweave.api.state import ApiComposition, StartupHook
from skillweave.engines import Engine
from skillweave.errors import AgentError, ConfigError, SkillNotFoundError
from skillweave.evals import BatchProgress, EvalBatch, EvalReport, EvalSuiteError
from skillweave.evals import batch as batches
from skillweave.evals import html as report_html
from skillweave.evals import markdown as report_markdown
from skillweave.evals import sources as eval_sources
from skillweave.evals import store as eval_store
from skillweave.llm import resolve_model
from skillweave.skills import SKILL_REFERENCE_PATTERN, SkillVersionError
from skillweave.storage import store_identity

__all__ = [
    "CSP",
    "EvalBatchRow",
    "EvalRequest",
    "EvalRunning",
    "EvalStarted",
    "open_evals",
    "router",
]

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The HTML report's Content-Security-Policy: its inline styles and data: images, nothing else."""

_HEX_PREFIX: Final = r"^[0-9a-f]{8,64}$"
_MODEL_CHARS: Final = 200
_VERSION_STATUS: Final = {"unknown": 404, "no_earlier": 409, "ambiguous": 409, "malformed": 422}


def open_evals(engine: Engine) -> StartupHook:
    """A start-up hook that runs eval batches on `engine` (the API's; after ``open_skills``);
    the batches running in this process are cancelled, their reports written, when it stops."""

    async def hook(parts: ApiComposition) -> None:
        evals = EvalBatches(engine)
        parts.resources.push_async_callback(evals.close)
        parts.evals = evals

    return hook


class EvalRequest(BaseModel):
    """What ``POST /v1/skills/{name}/evals`` takes (every field optional)."""

    model_config = ConfigDict(extra="forbid")

    version: str | None = Field(
        default=None,
        pattern=_HEX_PREFIX,
        description="The version to evaluate (64 hex digits or a unique prefix of 8+); "
        "unset: the current one.",
    )
    baseline: bool = Field(default=False, description="Also run each eval without the skill.")
    against: str | None = Field(
        default=None,
        pattern=_HEX_PREFIX,
        description="Also run each eval with this other version (8+ hex digits).",
    )
    repeat: int = Field(default=1, ge=1, le=batches.MAX_REPEAT)
    concurrency: int = Field(default=4, ge=1, le=batches.MAX_CONCURRENCY)
    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=_MODEL_CHARS,
        description="The agent's model: a profile or PROVIDER:NAME; unset: the default.",
    )
    grader: str | None = Field(
        default=None,
        min_length=1,
        max_length=_MODEL_CHARS,
        description="The grader's model; unset: the agent's.",
    )


class EvalStarted(BaseModel):
    """A batch started."""

    batch_id: str
    skill: str
    version: str
    jobs: int
    status: Literal["running"] = "running"
    status_url: str = Field(description="Where its progress, then its report, is read.")


class EvalBatchRow(BaseModel):
    """One batch of a skill, as its report sums it up."""

    batch_id: str
    created_at: str
    finished_at: str
    version: str
    against: str | None = None
    model: str | None = None
    variants: list[str]
    pass_rates: dict[str, float] = Field(description="variant → mean pass rate")
    jobs: int
    status: str


class EvalRunning(BaseModel):
    """A batch without a report yet: how far it is (``running``), or ``stopped`` (it ended
    without writing one: resume it)."""

    batch_id: str
    skill: str
    status: Literal["running", "stopped"]
    progress: BatchProgress | None = None
    detail: str


router = APIRouter(prefix="/v1/skills", tags=["skill evals"])

_RESPONSES = {
    404: problem_response("No such skill, version or batch"),
    409: problem_response("An ambiguous version prefix"),
    422: problem_response("No evals/evals.json, a model that does not resolve, a bad request"),
}


def _skill(name: str, skills: ServedSkills) -> str:
    """`name`, checked before any store read: a skill of the library."""
    if not re.fullmatch(SKILL_REFERENCE_PATTERN, name) or name not in skills.registry:
        raise ApiProblem(404, f"no skill named {name[:80]!r}")
    return name


def _batch_id(name: str, batch_id: str) -> str:
    if not re.fullmatch(batches.BATCH_ID_PATTERN, batch_id):
        raise ApiProblem(404, f"no eval batch {batch_id[:80]!r} of {name}")
    return batch_id


async def _version(skills: ServedSkills, name: str, prefix: str | None, *, what: str) -> str:
    """The full version of `name` that `prefix` names (None: the current one): the library's
    when it begins so, else the one stored version it begins."""
    current = skills.registry.get(name).version
    if prefix is None or current.startswith(prefix):
        return current
    try:
        return await skills.stored.resolve(name, prefix)
    except SkillNotFoundError:
        raise ApiProblem(404, f"{what}: {name} has no version {prefix}") from None
    except SkillVersionError as exc:
        raise ApiProblem(_VERSION_STATUS[exc.problem], f"{what}: {exc}") from None


@router.post(
    "/{name}/evals",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=EvalStarted,
    responses={**_RESPONSES, 503: problem_response("The engine cannot start the batch now")},
    summary="Run a skill's evals",
)
async def start_evals(
    name: str,
    skills: ServedLibrary,
    state: State,
    evals: Evals,
    body: Annotated[EvalRequest | None, Body()] = None,
) -> EvalStarted:
    """Start an eval batch of the skill on the API's engine: each eval of its
    evals/evals.json run with the skill (and without it, or with another version), repeated,
    graded; its report stored. 202: read it at status_url."""
    asked = body or EvalRequest()
    skill = _skill(name, skills)
    version = await _version(skills, skill, asked.version, what="version")
    against = None
    if asked.against is not None:
        against = await _version(skills, skill, asked.against, what="against")
    for given, named in (("model", asked.model), ("grader", asked.grader)):
        if named is not None:
            try:
                resolve_model(state.settings.model, named)
            except ConfigError as exc:
                raise ApiProblem(422, f"{given}: {exc}", title="Unknown model") from None
    try:
        suite, _ = await eval_sources.read_suite(skills.registry, state.store, skill, version)
        batch = EvalBatch(
            skill=skill,
            version=version,
            against=against,
            baseline=asked.baseline,
            repeat=asked.repeat,
            concurrency=asked.concurrency,
            model=asked.model,
            grader=asked.grader,
            cases=suite.evals,
            store_id=await store_identity(state.store),
        )
    except EvalSuiteError as exc:
        raise ApiProblem(422, str(exc), title="No usable evals") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ApiProblem(422, f"the eval batch: {first['msg']}") from None
    try:
        await evals.start(batch)
    except (AgentError, ConfigError) as exc:  # temporal: no worker of its store, or no server
        raise ApiProblem(503, f"eval batch not started: {exc}", title="Unavailable") from None
    jobs = len(batch.cases) * len(batch.variants) * batch.repeat
    return EvalStarted(
        batch_id=batch.batch_id,
        skill=skill,
        version=version,
        jobs=jobs,
        status_url=f"/v1/skills/{skill}/evals/{batch.batch_id}",
    )


@router.get(
    "/{name}/evals",
    response_model=list[EvalBatchRow],
    responses={404: problem_response("No such skill")},
    summary="A skill's eval batches",
)
async def list_evals(name: str, skills: ServedLibrary, state: State) -> list[EvalBatchRow]:
    """The skill's eval batches that have a report, newest first."""
    skill = _skill(name, skills)
    return [
        EvalBatchRow(
            batch_id=report.batch_id,
            created_at=report.created_at,
            finished_at=report.finished_at,
            version=report.version,
            against=report.against,
            model=report.model,
            variants=[v.variant for v in report.variants],
            pass_rates={v.variant: v.pass_rate for v in report.variants},
            jobs=len(report.jobs),
            status=report.status,
        )
        for report in await eval_store.list_reports(state.store, skill)
    ]


@router.get(
    "/{name}/evals/{batch_id}",
    response_model=EvalReport | EvalRunning,
    responses={
        200: {
            "description": "The report (JSON, or text/markdown, or text/html with "
            "?format=); a batch without one yet: how far it is (EvalRunning)",
            "content": {"text/markdown": {}, "text/html": {}},
        },
        404: problem_response("No such skill or batch"),
    },
    summary="An eval batch's report",
)
async def get_eval(
    name: str,
    batch_id: str,
    *,
    skills: ServedLibrary,
    state: State,
    evals: Evals,
    form: Annotated[Literal["json", "markdown", "html"], Query(alias="format")] = "json",
) -> EvalReport | EvalRunning | Response:
    """The batch's report, as JSON, Markdown or a self-contained HTML page; or, while it has
    none, how far it is."""
    skill = _skill(name, skills)
    batch_id = _batch_id(skill, batch_id)
    try:
        report = await eval_store.read_report(state.store, skill, batch_id)
    except eval_store.EvalsNotFoundError:
        return await _without_report(skill, batch_id, state, evals, form)
    match form:
        case "json":
            return report
        case "markdown":
            text = report_markdown.report_markdown(report)
            return Response(text, media_type="text/markdown; charset=utf-8")
        case "html":
            page = report_html.report_html(report)
            return Response(
                page,
                media_type="text/html; charset=utf-8",
                headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"},
            )


async def _without_report(
    skill: str, batch_id: str, state: State, evals: EvalBatches, form: str
) -> EvalRunning:
    try:
        await eval_store.load_batch(state.store, skill, batch_id)
    except eval_store.EvalsNotFoundError:
        raise ApiProblem(404, f"no eval batch {batch_id} of {skill}") from None
    if form != "json":
        raise ApiProblem(404, f"eval batch {batch_id} has no report yet: read it as JSON")
    progress = await evals.progress(batch_id)
    if progress is not None:
        return EvalRunning(
            batch_id=batch_id,
            skill=skill,
            status="running",
            progress=progress,
            detail=f"{progress.finished} of {progress.jobs} jobs graded",
        )
    if await evals.runs(batch_id):
        return EvalRunning(
            batch_id=batch_id,
            skill=skill,
            status="running",
            detail="it runs, but no worker answered for its progress: see its workflow in "
            "the Temporal UI",
        )
    return EvalRunning(
        batch_id=batch_id,
        skill=skill,
        status="stopped",
        detail="the batch has no report and does not run: it stopped before writing one "
        f"(`skillweave skills eval {skill} --resume {batch_id}` runs what is left)",
    )
