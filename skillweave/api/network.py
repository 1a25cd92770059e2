"""``/v1/skills/{name}/network``: a skill's declared network, and an operator's approval of it.

``GET`` shows what the skill declares under ``metadata.network`` (destination and reason), the
approval in force and where it comes from (the manager's settings, or this API). ``PUT`` approves
destinations the skill declares (anything else is refused, 422, naming it), pinned to the skill's
current version unless the body names one; the manager's egress proxy reads it for the next run
(``skillweave.sandbox.approvals``). ``DELETE`` withdraws it. An approval in the settings wins
over one made here, and this API cannot change it.

Both are in the audit log (``network_approval``), recorded before they are made: a record that
cannot be written refuses the change (503 ``audit_unavailable``), and the approval in force
stays what it was.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from skillweave.api.deps import ServedLibrary, State
from skillweave.api.problems import ApiProblem
from skillweave.api.served_skills import ServedSkills
from skillweave.api.state import ApiState
from skillweave.config import EgressApproval
from skillweave.errors import EgressPolicyError, SkillFormatError, SkillNotFoundError
from skillweave.sandbox import NetworkApprovals
from skillweave.skills import (
    Destination,
    Skill,
    declared_destinations,
    parse_destination,
    parse_frontmatter,
)

__all__ = ["NetworkApproval", "NetworkView", "router"]

router = APIRouter(prefix="/v1/skills", tags=["network"])


class DeclaredDestination(BaseModel):
    destination: str
    reason: str = ""


class NetworkView(BaseModel):
    """A skill's network: what it declares and what is approved."""

    skill: str
    version: str
    declared: list[DeclaredDestination]
    approval: EgressApproval | None = None
    approved_by: str | None = Field(default=None, description="settings or api")


class NetworkApproval(BaseModel):
    """What ``PUT`` takes: destinations the skill declares."""

    destinations: list[str] = Field(min_length=1, max_length=64)
    private: list[str] = Field(default_factory=list, max_length=64)
    version: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="The skill version approved; default: its current one.",
    )


def _skill(skills: ServedSkills, name: str) -> Skill:
    try:
        return skills.registry.get(name)
    except SkillNotFoundError:
        raise ApiProblem(404, f"no skill {name!r}") from None


def _declared(skill: Skill) -> tuple[Destination, ...]:
    try:
        text = skill.skill_file.read_text(encoding="utf-8")
        metadata = parse_frontmatter(text, path=str(skill.skill_file)).data.get("metadata")
        network = metadata.get("network") if isinstance(metadata, dict) else None
        return declared_destinations(network)
    except (OSError, SkillFormatError, EgressPolicyError) as exc:
        raise ApiProblem(422, f"skill {skill.name!r}: its network cannot be read: {exc}") from exc


def _approvals(state: ApiState) -> NetworkApprovals:
    return NetworkApprovals(state.store, state.settings.sandbox.egress)


async def _view(state: ApiState, skill: Skill) -> NetworkView:
    approval, source = await _approvals(state).of(skill.name)
    return NetworkView(
        skill=skill.name,
        version=skill.version,
        declared=[
            DeclaredDestination(destination=str(d), reason=d.reason) for d in _declared(skill)
        ],
        approval=approval,
        approved_by=source,
    )


@router.get("/{name}/network", response_model=NetworkView, summary="A skill's network")
async def get_network(name: str, state: State, skills: ServedLibrary) -> NetworkView:
    """What the skill declares, and the approval in force."""
    return await _view(state, _skill(skills, name))


@router.put("/{name}/network", response_model=NetworkView, summary="Approve a skill's network")
async def put_network(
    name: str, body: NetworkApproval, state: State, skills: ServedLibrary
) -> NetworkView:
    """Approve destinations the skill declares, pinned to a version (default: its current)."""
    skill = _skill(skills, name)
    approvals = _approvals(state)
    if approvals.configured(skill.name) is not None:
        raise ApiProblem(
            409,
            f"skill {skill.name!r}: its network is approved in the manager's settings "
            "(SANDBOX__EGRESS__APPROVALS); change it there",
        )
    declared = _declared(skill)
    for entry in [*body.destinations, *body.private]:
        try:
            wanted = parse_destination(entry)
        except EgressPolicyError as exc:
            raise ApiProblem(422, str(exc)) from None
        if not any(d.host == wanted.host and set(wanted.ports) <= set(d.ports) for d in declared):
            raise ApiProblem(
                422, f"{entry!r} is not among the destinations skill {skill.name!r} declares"
            )
    approval = EgressApproval(
        destinations=tuple(body.destinations),
        private=tuple(body.private),
        version=body.version or skill.version,
    )
    await state.audit.record(
        "network_approval",
        skill=skill.name,
        version=approval.version,
        decision="approved",
        destinations=list(approval.destinations),
        private=list(approval.private),
    )
    await approvals.put(skill.name, approval)
    return await _view(state, skill)


@router.delete("/{name}/network", status_code=204, response_class=Response)
async def delete_network(name: str, state: State, skills: ServedLibrary) -> Response:
    """Withdraw the approval made over the API."""
    skill = _skill(skills, name)
    approvals = _approvals(state)
    await state.audit.record("network_approval", skill=skill.name, decision="withdrawn")
    await approvals.delete(skill.name)
    return Response(status_code=204)
