"""``/v1/skills/{name}/versions`` and ``/v1/skills/{name}/rollback``: a skill's stored versions,
and an earlier one made current again.

``GET …/versions`` answers every stored version of an uploaded skill, newest first, the current
one marked: its origin, when it was first stored, who brought it (its audit record's actor), its
scan and its signature under today's policies (``skills.stored.uploaded_versions``); for a
directory skill, its one version and its folder (directory skills are versioned by their folder,
never rolled back here). ``POST …/rollback`` (``{"version": …}``, optional: default the version
current before the current one; a unique prefix of at least 8 hex digits) makes that version
current again, judged under today's policies (refused when the scan policy blocks it, 422, or
the trust policy refuses it, 403; held off until an operator enables it when its scan needs
approval), recorded in the audit log with the API's actor before it is made (503
``audit_unavailable`` and nothing changed when the record cannot be written). Rolling back to
the current version changes nothing and says so (``changed: false``). Runs already started keep
the versions they pinned; the library the API serves, and every process polling the store, see
the rollback within ``SKILLS__RELOAD_SECONDS``.

With ``"gate": true`` (and ``model``, ``grader``, ``repeat``, ``gate_tolerance``,
``gate_allow_missing``) the version is made current only when its evals, run against the
current version on the API's engine, keep its pass rate (``evals.gate``; the answer waits for
the batch): refused, 409 with both pass rates and the report's place in its detail, the version
stays stored, not current; the decision is in the audit log (``eval_gate``).

Errors are problem+json (``skillweave.api.problems``): no such skill 404, no such version 404
(its detail lists the versions), an ambiguous prefix 409, a malformed one 422.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from pydantic import BaseModel, ConfigDict, Field

from skillweave.api.deps import ServedLibrary, State
from skillweave.api.eval_batches import EvalBatches
from skillweave.api.problems import ApiProblem, problem_response
from skillweave.api.served_skills import ServedSkills
from skillweave.api.state import ApiState
from skillweave.errors import ConfigError
from skillweave.evals import EvalBatch, EvalReport
from skillweave.evals import batch as batches
from skillweave.evals import gate as gates
from skillweave.evals import store as eval_store
from skillweave.llm import resolve_model
from skillweave.skills import SkillVersionError
from skillweave.skills.stored import (
    SkillVersions,
    StoredSkills,
    directory_versions,
    rollback_check,
    uploaded_versions,
)

__all__ = ["RollbackRequest", "RollbackResult", "router"]

router = APIRouter(prefix="/v1/skills", tags=["skills"])

_VERSION_STATUS = {"unknown": 404, "no_earlier": 409, "ambiguous": 409, "malformed": 422}
_RESPONSES = {
    404: problem_response("No such skill, or no such version (the versions are listed)"),
    409: problem_response("A directory skill, an ambiguous prefix, or no earlier version"),
}


class RollbackRequest(BaseModel):
    """What ``POST /v1/skills/{name}/rollback`` takes."""

    model_config = ConfigDict(extra="forbid")

    version: str | None = Field(
        default=None,
        min_length=8,
        max_length=64,
        description="The version to make current: its 64 hex digits or a unique prefix of at"
        " least 8; unset: the version current before the current one.",
    )
    gate: bool = Field(
        default=False,
        description="Make it current only if its evals, run against the current version on"
        " the API's engine, keep its pass rate (the answer waits for the batch); refused: 409,"
        " the version stays stored, not current.",
    )
    model: str | None = Field(
        default=None, min_length=1, max_length=200, description="gate: the agent's model."
    )
    grader: str | None = Field(
        default=None, min_length=1, max_length=200, description="gate: the grader's model."
    )
    repeat: int = Field(
        default=1, ge=1, le=batches.MAX_REPEAT, description="gate: runs of each eval."
    )
    gate_tolerance: float = Field(
        default=0.0, ge=0.0, le=1.0, description="gate: how much lower the pass rate may be."
    )
    gate_allow_missing: bool = Field(
        default=False, description="gate: let a version with no evals through."
    )


class RollbackResult(BaseModel):
    """What a rollback did."""

    name: str
    previous: str = Field(description="the version current before")
    version: str = Field(description="the version current now")
    changed: bool = Field(description="false: it was the current version already")
    enabled: bool
    held: bool = Field(description="off until an operator enables it (its scan says approve)")


@router.get(
    "/{name}/versions",
    response_model=SkillVersions,
    responses=_RESPONSES,
    summary="A skill's versions",
)
async def list_versions(name: str, skills: ServedLibrary, state: State) -> SkillVersions:
    """Every stored version of the skill, newest first, the current one marked: origin, when,
    who, scan and signature under today's policies. A directory skill: its one version."""
    settings = state.settings.skills
    if name in skills.directory:
        return await directory_versions(settings, skills.directory.get(name))
    record = await skills.stored.get(name)
    if record is None:
        raise ApiProblem(404, f"no skill named {name!r}")
    return await uploaded_versions(state.store, settings, record, state.audit)


@router.post(
    "/{name}/rollback",
    response_model=RollbackResult,
    responses={
        **_RESPONSES,
        403: problem_response("skills.trust refuses that version"),
        409: problem_response(
            "A directory skill, an ambiguous prefix, no earlier version, or (gate) its evals"
            " lose pass rate"
        ),
        422: problem_response("skills.scan.policy blocks that version, or a malformed one"),
        503: problem_response("The audit log cannot record it: nothing was changed"),
    },
    summary="Make an earlier version current",
)
async def rollback(
    name: str,
    skills: ServedLibrary,
    state: State,
    body: Annotated[RollbackRequest | None, Body()] = None,
) -> RollbackResult:
    """Make an earlier stored version of an uploaded skill current again, judged under
    today's scan and trust policies, audited before it is made."""
    if name in skills.directory:
        raise ApiProblem(
            409,
            f"{name!r} is a directory skill: it is versioned by its folder (git, say); roll it"
            " back there",
        )
    version = body.version if body is not None else None
    stored: StoredSkills = skills.stored
    check = rollback_check(state.store, state.settings.skills, state.audit)
    reserved = skills.reserved(skills.directory)
    try:
        if body is not None and body.gate:
            done = await gates.gated_rollback(
                stored,
                name,
                version,
                reserved=reserved,
                judged=check,
                gate=_gate(body, skills, state),
                settings=state.settings.skills,
            )
        else:
            done = await stored.rollback(name, version, reserved=reserved, check=check)
    except SkillVersionError as exc:
        raise ApiProblem(_VERSION_STATUS[exc.problem], str(exc)) from None
    except gates.EvalGateError as exc:
        raise ApiProblem(409, str(exc), title="Refused by its evals") from None
    if done.changed:
        await skills.changed()
    return RollbackResult(
        name=done.record.name,
        previous=done.previous,
        version=done.version,
        changed=done.changed,
        enabled=done.record.enabled,
        held=done.held,
    )


def _gate(body: RollbackRequest, skills: ServedSkills, state: ApiState) -> gates.Gate:
    """The gate of a rollback (``evals.gate``), its batch run on the API's engine.

    Raises:
        ApiProblem: 409, this API runs no eval batches; 422, a model that does not resolve.
    """
    evals = state.evals
    if not isinstance(evals, EvalBatches):
        raise ApiProblem(409, "this API runs no eval batches (no engine): roll back without gate")
    for given, named in (("model", body.model), ("grader", body.grader)):
        if named is not None:
            try:
                resolve_model(state.settings.model, named)
            except ConfigError as exc:
                raise ApiProblem(422, f"{given}: {exc}", title="Unknown model") from None
    options = gates.GateOptions(
        model=body.model,
        grader=body.grader,
        repeat=body.repeat,
        tolerance=body.gate_tolerance,
        allow_missing=body.gate_allow_missing,
    )

    async def run(batch: EvalBatch) -> EvalReport:
        summary = await evals.run(batch)
        return await eval_store.read_report(state.store, summary.skill, summary.batch_id)

    async def gate(name: str, version: str, current: str | None) -> gates.GateVerdict:
        return await gates.gate_version(
            registry=skills.registry,
            store=state.store,
            skill=name,
            version=version,
            current=current,
            options=options,
            run=run,
            audit=state.audit,
        )

    return gate
