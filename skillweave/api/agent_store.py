"""Agents as the API stores them: the models ``/v1/agents`` takes and returns, and
:class:`AgentStore`, their records in the artifact store (``catalog/agents/{id}.json``).

An agent's id is made here (``ag-`` and 16 hex digits); its slug, made from its name when it is
made and kept through renames, is unique and may stand for the id (:func:`names_an_agent`).
The routes (:mod:`skillweave.api.agents`), the runs (:mod:`skillweave.api.run_launcher`) and the
CLI (``skillweave agents``, ``doctor``) use it.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, ValidationError, model_validator

from skillweave.agent import (
    AcquisitionOptions,
    AgentSpec,
    ApprovalOptions,
    AuthoringOptions,
    Budgets,
)
from skillweave.api.problems import ApiProblem
from skillweave.api.records import read_record
from skillweave.config import CatalogMode
from skillweave.skills import SKILL_REFERENCE_PATTERN, SkillVersionError, parse_pin
from skillweave.storage import ArtifactStore, keys

__all__ = [
    "Agent",
    "AgentCreate",
    "AgentPage",
    "AgentPatch",
    "AgentStore",
    "names_an_agent",
    "slug_of",
]

_NAME = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
"""A name for people: 1 to 100 characters, not all white space, no control characters."""


def _pin_checked(reference: str) -> str:
    """A skill reference whose pin, if it has one (``name@VERSION``), is well formed."""
    try:
        parse_pin(reference)
    except SkillVersionError as exc:
        raise ValueError(str(exc)) from None
    return reference


SkillReference = Annotated[
    str, Field(pattern=SKILL_REFERENCE_PATTERN), AfterValidator(_pin_checked)
]
"""A skill an agent names: its name, its id (``sk-…``), a namespace (``web.*``), or a name
pinned to a version (``name@VERSION``: 8 to 64 hex digits, resolved when a run starts)."""

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
    skill_ids: list[SkillReference] = Field(
        default_factory=list,
        max_length=500,
        description="Skills the agent may use: each by its name or its id (sk-…), stored as"
        " names; name@VERSION pins a version (8 to 64 hex digits of it), resolved when a run"
        " starts.",
    )
    catalog_mode: CatalogMode | None = Field(
        default=None, description="all, enabled or auto; unset: the server's setting."
    )
    limits: Budgets = Field(default_factory=Budgets)
    follow_up_seconds: float = Field(
        default=0, ge=0, le=86_400, description="After an answer, wait this long for a message."
    )
    approvals: ApprovalOptions = Field(
        default_factory=ApprovalOptions,
        description="Script runs that wait for a person's approval (as an agent spec's).",
    )
    authoring: AuthoringOptions = Field(
        default_factory=AuthoringOptions,
        description="create_skill / publish_skill (as an agent spec's); off by default.",
    )
    acquisition: AcquisitionOptions = Field(
        default_factory=AcquisitionOptions,
        description="find_skills / request_skill: registry skills a person approves (as an"
        " agent spec's); off by default. Its registries must be labels of SKILLS__REGISTRIES.",
    )


class AgentPatch(BaseModel):
    """What ``PATCH /v1/agents/{id}`` takes: only the fields given change, in an object too
    (``{"acquisition": {"max_installs": 5}}`` keeps the rest of the agent's acquisition)."""

    name: str | None = Field(default=None, pattern=_NAME, max_length=100)
    description: str | None = Field(default=None, max_length=1024)
    instruction: str | None = Field(default=None, min_length=1, max_length=32_000)
    model_id: str | None = Field(default=None, max_length=200)
    skill_ids: list[SkillReference] | None = Field(default=None, max_length=500)
    catalog_mode: CatalogMode | None = None
    limits: Budgets | None = None
    follow_up_seconds: float | None = Field(default=None, ge=0, le=86_400)
    approvals: ApprovalOptions | None = Field(
        default=None, description="The fields given change; the rest stay."
    )
    authoring: AuthoringOptions | None = Field(
        default=None, description="The fields given change; the rest stay."
    )
    acquisition: AcquisitionOptions | None = Field(
        default=None, description="The fields given change; the rest stay."
    )


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
            approvals=self.approvals,
            authoring=self.authoring,
            acquisition=self.acquisition,
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

    async def update(
        self, agent_id: str, patch: AgentPatch, *, check: Callable[[Agent], None] | None = None
    ) -> Agent:
        """The agent `agent_id` with the fields `patch` gives changed, stored; `check` (it
        raises :class:`ApiProblem`) sees the changed agent before it is stored."""
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
                    {**_merged(agent.model_dump(), changes), "updated_at": datetime.now(UTC)}
                )
            except ValidationError as exc:
                where = "; ".join(
                    f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]
                )
                raise ApiProblem(422, f"the change is not valid: {where}") from None
            if check is not None:
                check(updated)
            await self._write(updated)
            return updated

    async def delete(self, agent_id: str) -> bool:
        async with self._lock:
            agent = await self.get(agent_id)
            if agent is None:
                return False
            await self._store.delete(keys.agent_key(agent.id))
            return True


def _merged(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`current` with `changes` over it; an object's fields (limits, approvals, …) one by one,
    so that a patch changes only the fields it gives."""
    merged = dict(current)
    for key, value in changes.items():
        now = merged.get(key)
        both_objects = isinstance(value, dict) and isinstance(now, dict)
        merged[key] = {**now, **value} if both_objects else value
    return merged


def names_an_agent(agent_id: str) -> bool:
    """Whether `agent_id` is an id (``ag-`` and 16 hex digits) or a slug: anything else names
    no agent."""
    return _ID.fullmatch(agent_id) is not None or _SLUG.fullmatch(agent_id) is not None
