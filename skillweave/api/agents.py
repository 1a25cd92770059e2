"""``/v1/agents``: agents made over the API (name, instruction, model, skills, catalog, limits,
approvals, authoring, acquisition).

An agent is a record in the artifact store (``catalog/agents/{id}.json``); its id is made here
(``ag-`` and 16 hex digits). Its name is for people ("Data Agent"); its slug (``data-agent``),
made from the name when the agent is made and kept through renames, is unique and may stand for
the id wherever the API takes one (``/v1/agents/{id}``, a run's ``agent_id``), and names the
agent in its runs. Every skill id must name a skill the API
knows (a directory skill of the configured library or an uploaded one) when the agent is made or
changed; unknown ids are refused with all of them named, and nothing is stored. Its model
(``model_id``: a profile or ``provider:name``) must resolve with the credentials it needs, or the
agent is refused (422, naming it). Its ``approvals``, ``authoring`` and ``acquisition`` are an
agent spec's; an acquisition that is on must find a registry in ``SKILLS__REGISTRIES``, and
every registry it names must be a label there, or the agent is refused (422, naming the labels
there are). A run turns the agent into an
:class:`~skillweave.agent.spec.AgentSpec` (:meth:`Agent.to_spec`).

The routes and the start-up hook are here; the models and the store are in
:mod:`skillweave.api.agent_store`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from skillweave.api.agent_store import (
    Agent,
    AgentCreate,
    AgentPage,
    AgentPatch,
    AgentStore,
    names_an_agent,
)
from skillweave.api.deps import Agents, Skills, State
from skillweave.api.problems import ApiProblem
from skillweave.api.served_skills import NoSkills, ServedSkills
from skillweave.api.state import ApiComposition
from skillweave.config import Settings, SkillsSettings
from skillweave.errors import ConfigError
from skillweave.llm import resolve_model

__all__ = ["open_agents", "router"]


async def open_agents(parts: ApiComposition) -> None:
    """Startup hook: the agent store (before ``open_runs``, which needs it)."""
    parts.agents = AgentStore(parts.store)


router = APIRouter(prefix="/v1/agents", tags=["agents"])


async def _check_skills(
    skills: ServedSkills | NoSkills, given: list[str] | None
) -> list[str] | None:
    """The skills' names (each given as its name or its id); 422 naming the unknown."""
    if not given:
        return given
    names, missing = await skills.references(given)
    if missing:
        raise ApiProblem(422, f"unknown skill ids: {', '.join(missing)}", title="Unknown skills")
    return list(names)


def _check_model(settings: Settings, model_id: str | None) -> None:
    """The agent's model resolves here: a configured profile or ``provider:name``, with the
    credentials it needs (nothing is contacted)."""
    if not model_id:
        return
    try:
        resolve_model(settings.model, model_id)
    except ConfigError as exc:
        raise ApiProblem(422, f"model_id: {exc}", title="Unknown model") from None


def _check_registries(skills: SkillsSettings, agent: Agent | AgentCreate) -> None:
    """The registries the agent's acquisition (when it is on) may search are there
    (``AcquisitionOptions.registries_problem``: the rule every door applies)."""
    problem = agent.acquisition.registries_problem([r.label for r in skills.registries])
    if problem is not None:
        raise ApiProblem(422, problem, title="Unknown registries")


@router.post("/", status_code=status.HTTP_201_CREATED)
async def create_agent(body: AgentCreate, agents: Agents, skills: Skills, state: State) -> Agent:
    """Make an agent; every skill id must name a known skill, its model must resolve, and its
    acquisition's registries must be configured."""
    _check_model(state.settings, body.model_id)
    _check_registries(state.settings.skills, body)
    names = await _check_skills(skills, body.skill_ids)
    return await agents.create(body.model_copy(update={"skill_ids": names or []}))


@router.get("/")
async def list_agents(
    agents: Agents,
    q: Annotated[
        str | None, Query(max_length=200, description="Substring of the name or the slug.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> AgentPage:
    """Agents, oldest first."""
    found = [
        a for a in await agents.list() if q is None or q.lower() in f"{a.name}\n{a.slug}".lower()
    ]
    return AgentPage(
        items=found[offset : offset + limit], total=len(found), limit=limit, offset=offset
    )


@router.get("/{agent_id}")
async def get_agent(agent_id: str, agents: Agents) -> Agent:
    """One agent."""
    agent = await agents.get(agent_id) if names_an_agent(agent_id) else None
    if agent is None:
        raise ApiProblem(404, f"no agent {agent_id!r}")
    return agent


@router.patch("/{agent_id}")
async def update_agent(
    agent_id: str, body: AgentPatch, agents: Agents, skills: Skills, state: State
) -> Agent:
    """Change some fields of an agent; skill ids, the model and the acquisition's registries
    are checked as on create (a changed acquisition as it will be stored)."""
    if not names_an_agent(agent_id):
        raise ApiProblem(404, f"no agent {agent_id!r}")
    _check_model(state.settings, body.model_id)
    names = await _check_skills(skills, body.skill_ids)
    if body.skill_ids is not None:
        body = body.model_copy(update={"skill_ids": names})
    if body.acquisition is None:
        return await agents.update(agent_id, body)
    return await agents.update(
        agent_id, body, check=lambda changed: _check_registries(state.settings.skills, changed)
    )


@router.delete("/{agent_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_agent(agent_id: str, agents: Agents) -> Response:
    """Delete an agent (runs it started keep their own copy of it)."""
    if not names_an_agent(agent_id) or not await agents.delete(agent_id):
        raise ApiProblem(404, f"no agent {agent_id!r}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
