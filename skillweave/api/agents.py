"""``/v1/agents``: agents made over the API (name, instruction, model, skills, catalog, limits).

An agent is a record in the artifact store (``catalog/agents/{id}.json``); its id is made here
(``ag-`` and 16 hex digits). Its name is for people ("Data Agent"); its slug (``data-agent``),
made from the name when the agent is made and kept through renames, is unique and may stand for
the id wherever the API takes one (``/v1/agents/{id}``, a run's ``agent_id``), and names the
agent in its runs. Every skill id must name a skill the API
knows (a directory skill of the configured library or an uploaded one) when the agent is made or
changed; unknown ids are refused with all of them named, and nothing is stored. Its model
(``model_id``: a profile or ``provider:name``) must resolve with the credentials it needs, or the
agent is refused (422, naming it). A run turns the agent into an
:class:`~skillweave.agent.spec.AgentSpec` (:meth:`Agent.to_spec`).
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response, status
from pydantic import BaseModel, Field, ValidationError, model_validator

from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import Budgets
from skillweave.api.app import ApiState, provided, state_of
from skillweave.api.problems import ApiProblem
from skillweave.api.records import read_record
from skillweave.config import CatalogMode
from skillweave.errors import ConfigError
from skillweave.llm.factory import resolve_model
from skillweave.skills.names import SKILL_ID_PATTERN, SKILL_REFERENCE_PATTERN, skill_id
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore

__all__ = ["Agent", "AgentCreate", "AgentPatch", "AgentStore", "open_agents", "router"]

_NAME = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
"""A name for people: 1 to 100 characters, not all white space, no control characters."""
_ID = re.compile(r"ag-[0-9a-f]{16}")
_SLUG = re.compile(r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?")
_SLUG_MAX = 64


class AgentCreate(BaseModel):
    """What ``POST /v1/agents/`` takes."""

    name: str = Field(
        pattern=_NAME,
        max_length=100,
        description="For people, e.g. 'Data Agent'; its slug (data-agent) is unique among agents.",
    )
    description: str = Field(default="", max_length=1024)
    instruction: str = Field(min_length=1, max_length=32_000)
    model_id: str | None = Field(
        default=None,
        max_length=200,
        description=(
            "A model profile's name (MODEL__PROFILES__<NAME>__*) or provider:name (e.g."
            " openai:gpt-4o-mini), checked when the agent is made; unset: the default model."
        ),
    )
    skill_ids: list[Annotated[str, Field(pattern=SKILL_REFERENCE_PATTERN)]] = Field(
        default_factory=list,
        max_length=500,
        description="Skills the agent may use: each by its name or its id (sk-…); stored as names.",
    )
    catalog_mode: CatalogMode | None = Field(
        default=None, description="all, enabled or auto; unset: the server's setting."
    )
    limits: Budgets = Field(default_factory=Budgets)
    follow_up_seconds: float = Field(
        default=0, ge=0, le=86_400, description="After an answer, wait this long for a message."
    )


class AgentPatch(BaseModel):
    """What ``PATCH /v1/agents/{id}`` takes: only the fields given change."""

    name: str | None = Field(default=None, pattern=_NAME, max_length=100)
    description: str | None = Field(default=None, max_length=1024)
    instruction: str | None = Field(default=None, min_length=1, max_length=32_000)
    model_id: str | None = Field(default=None, max_length=200)
    skill_ids: list[Annotated[str, Field(pattern=SKILL_REFERENCE_PATTERN)]] | None = Field(
        default=None, max_length=500
    )
    catalog_mode: CatalogMode | None = None
    limits: Budgets | None = None
    follow_up_seconds: float | None = Field(default=None, ge=0, le=86_400)


def slug_of(name: str) -> str:
    """`name` as a slug: lower-case letters and digits, runs of anything else as one ``-``."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:_SLUG_MAX].strip("-")
    return slug or "agent"


class Agent(AgentCreate):
    """An agent as stored and returned."""

    id: str
    slug: str = Field(
        default="", description="Unique; stands for the id. Made from the name, kept after."
    )
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="after")
    def _slugged(self) -> Agent:
        # Records made before slugs existed: their names were slugs already, or close.
        if not self.slug:
            self.slug = slug_of(self.name)
        return self

    def to_spec(self) -> AgentSpec:
        """The agent as the loop's spec (skills as given; pinned to versions by the run)."""
        return AgentSpec(
            name=self.slug,
            description=self.description,
            instruction=self.instruction,
            model=self.model_id,
            skills=tuple(self.skill_ids),
            catalog={"mode": self.catalog_mode},
            limits=self.limits,
            follow_up_seconds=self.follow_up_seconds,
        )


class AgentPage(BaseModel):
    items: list[Agent]
    total: int
    limit: int
    offset: int


class AgentStore:
    """Agents in the artifact store; writes of one process are serialized (names unique)."""

    def __init__(self, store: ArtifactStore) -> None:
        self._store = store
        self._lock = asyncio.Lock()

    async def get(self, agent_id: str) -> Agent | None:
        """The agent whose id, or slug, is `agent_id`; None when there is none."""
        if _ID.fullmatch(agent_id) is None:
            return next((a for a in await self.list() if a.slug == agent_id), None)
        data = await read_record(self._store, keys.agent_key(agent_id))
        return None if data is None else Agent.model_validate_json(data)

    async def list(self) -> list[Agent]:
        agents = []
        for ref in await self._store.list(keys.AGENTS_PREFIX):
            data = await read_record(self._store, ref.key)
            if data is not None:  # not deleted meanwhile
                agents.append(Agent.model_validate_json(data))
        return sorted(agents, key=lambda a: (a.created_at, a.id))

    async def _taken(self, name: str, *, other_than: str | None = None) -> Agent | None:
        """An agent (but `other_than`) whose slug is `name`'s, or whose name's is."""
        slug = slug_of(name)
        return next(
            (
                a
                for a in await self.list()
                if a.id != other_than and slug in (a.slug, slug_of(a.name))
            ),
            None,
        )

    async def _write(self, agent: Agent) -> None:
        await self._store.put_bytes(
            keys.agent_key(agent.id),
            agent.model_dump_json().encode(),
            content_type="application/json",
        )

    async def create(self, data: AgentCreate) -> Agent:
        async with self._lock:
            taken = await self._taken(data.name)
            if taken is not None:
                raise ApiProblem(409, f"an agent named {taken.name!r} exists (slug {taken.slug!r})")
            now = datetime.now(UTC)
            agent = Agent(
                **data.model_dump(),
                id=f"ag-{secrets.token_hex(8)}",
                slug=slug_of(data.name),
                created_at=now,
                updated_at=now,
            )
            await self._write(agent)
            return agent

    async def update(self, agent_id: str, patch: AgentPatch) -> Agent:
        async with self._lock:
            agent = await self.get(agent_id)
            if agent is None:
                raise ApiProblem(404, f"no agent {agent_id!r}")
            changes = patch.model_dump(exclude_unset=True)
            renamed = changes.get("name") not in (None, agent.name)
            taken = await self._taken(changes["name"], other_than=agent.id) if renamed else None
            if taken is not None:
                raise ApiProblem(409, f"an agent named {taken.name!r} exists (slug {taken.slug!r})")
            try:
                updated = Agent.model_validate(
                    {**agent.model_dump(), **changes, "updated_at": datetime.now(UTC)}
                )
            except ValidationError as exc:
                where = "; ".join(
                    f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]
                )
                raise ApiProblem(422, f"the change is not valid: {where}") from None
            await self._write(updated)
            return updated

    async def delete(self, agent_id: str) -> bool:
        async with self._lock:
            agent = await self.get(agent_id)
            if agent is None:
                return False
            await self._store.delete(keys.agent_key(agent.id))
            return True


async def open_agents(state: ApiState) -> None:
    """Startup hook: the agent store."""
    state.agents = AgentStore(state.store)


async def _agents(state: Annotated[ApiState, Depends(state_of)]) -> AgentStore:
    return provided(state.agents, "open_agents")


async def _known_skills(state: Annotated[ApiState, Depends(state_of)]) -> Callable[..., Any]:
    """A check that every skill id names a skill the API knows (directory or uploaded): each
    given as its name, as the id the API shows (``sk-…``), as a directory skill's qualified
    name (``web.scraper``) or as a namespace (``web.*``); the names, and the unknown."""

    async def resolve(given: list[str]) -> tuple[list[str], list[str]]:
        library = state.directory_skills
        stored = state.stored_skills
        names = [s.name for s in library] if library is not None else []
        by_id: dict[str, str] | None = None
        resolved: list[str] = []
        missing: list[str] = []
        for item in dict.fromkeys(given):
            if SKILL_ID_PATTERN.fullmatch(item) is not None:
                if by_id is None:
                    uploaded = [r.name for r in await stored.list()] if stored is not None else []
                    by_id = {skill_id(name): name for name in [*uploaded, *names]}
                found = by_id.get(item)
            elif item in names or (stored is not None and await stored.get(item) is not None):
                found = item
            elif library is not None and library.resolve(item):
                found = item  # ns.name or ns.* (a namespace): resolved when a run starts
            else:
                found = None
            if found is None:
                missing.append(item)
            else:
                resolved.append(found)
        return list(dict.fromkeys(resolved)), missing

    return resolve


Agents = Annotated[AgentStore, Depends(_agents)]
KnownSkills = Annotated[Callable[..., Any], Depends(_known_skills)]
State = Annotated[ApiState, Depends(state_of)]

router = APIRouter(prefix="/v1/agents", tags=["agents"])


async def _check_skills(resolve: Callable[..., Any], given: list[str] | None) -> list[str] | None:
    """The skills' names (each given as its name or its id); 422 naming the unknown."""
    if not given:
        return given
    names, missing = await resolve(given)
    if missing:
        raise ApiProblem(422, f"unknown skill ids: {', '.join(missing)}", title="Unknown skills")
    return list(names)


def _check_model(state: ApiState, model_id: str | None) -> None:
    """The agent's model resolves here: a configured profile or ``provider:name``, with the
    credentials it needs (nothing is contacted)."""
    if not model_id:
        return
    try:
        resolve_model(state.settings.model, model_id)
    except ConfigError as exc:
        raise ApiProblem(422, f"model_id: {exc}", title="Unknown model") from None


@router.post("/", status_code=status.HTTP_201_CREATED)
async def create_agent(
    body: AgentCreate, agents: Agents, unknown: KnownSkills, state: State
) -> Agent:
    """Make an agent; every skill id must name a known skill, and its model must resolve."""
    _check_model(state, body.model_id)
    names = await _check_skills(unknown, body.skill_ids)
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
    agent = await agents.get(agent_id) if _valid_id(agent_id) else None
    if agent is None:
        raise ApiProblem(404, f"no agent {agent_id!r}")
    return agent


@router.patch("/{agent_id}")
async def update_agent(
    agent_id: str, body: AgentPatch, agents: Agents, unknown: KnownSkills, state: State
) -> Agent:
    """Change some fields of an agent; skill ids and the model are checked as on create."""
    if not _valid_id(agent_id):
        raise ApiProblem(404, f"no agent {agent_id!r}")
    _check_model(state, body.model_id)
    names = await _check_skills(unknown, body.skill_ids)
    if body.skill_ids is not None:
        body = body.model_copy(update={"skill_ids": names})
    return await agents.update(agent_id, body)


@router.delete("/{agent_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_agent(agent_id: str, agents: Agents) -> Response:
    """Delete an agent (runs it started keep their own copy of it)."""
    if not _valid_id(agent_id) or not await agents.delete(agent_id):
        raise ApiProblem(404, f"no agent {agent_id!r}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _valid_id(agent_id: str) -> bool:
    """An id (``ag-`` and 16 hex digits) or a slug: anything else names no agent."""
    return _ID.fullmatch(agent_id) is not None or _SLUG.fullmatch(agent_id) is not None
