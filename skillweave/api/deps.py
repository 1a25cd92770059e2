"""The routes' dependencies, as typed ``Annotated`` aliases (the FastAPI template's
``deps.py``): the app's state and the services in it.

A service an app may be composed without (the skill library, the runs) is checked once, when
the app starts: ``create_api`` collects what its routes depend on (:func:`needs_of`) and
:meth:`~skillweave.api.state.ApiComposition.complete` refuses to start without it, so the
dependencies below always find it. The routers (:mod:`skillweave.api.agents`,
:mod:`skillweave.api.runs`, :mod:`skillweave.api.skills`, :mod:`skillweave.api.network`) import
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Final

from fastapi import APIRouter, Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from skillweave.api.agent_store import AgentStore
from skillweave.api.eval_batches import EvalBatches, NoEvals
from skillweave.api.run_service import NoRuns, RunService
from skillweave.api.served_skills import NoSkills, ServedSkills
from skillweave.api.skill_reads import SkillReader
from skillweave.api.skill_writes import SkillWrites
from skillweave.api.state import ApiState, Service
from skillweave.engines import skill_reviewer

__all__ = [
    "Agents",
    "Evals",
    "Runs",
    "ServedLibrary",
    "SkillChanges",
    "SkillReads",
    "Skills",
    "State",
    "needs_of",
]


async def api_state(request: Request) -> ApiState:
    """The app's state (a coroutine, so it runs on the event loop)."""
    state: ApiState = request.app.state.api
    return state


State = Annotated[ApiState, Depends(api_state)]


async def agent_store(state: State) -> AgentStore:
    """The agent store."""
    return state.agents


async def skill_library(state: State) -> ServedSkills | NoSkills:
    """The skill library, or none: what agents and runs may name."""
    return state.skills


async def served_skills(state: State) -> ServedSkills:
    """The skill library, which the skill routes need."""
    skills = state.skills
    match skills:
        case ServedSkills():
            return skills
        case NoSkills():  # pragma: no cover - the app did not start (needs_of)
            raise AssertionError("checked when the app started")


async def run_service(state: State) -> RunService:
    """The runs, which the run routes need."""
    runs = state.runs
    match runs:
        case RunService():
            return runs
        case NoRuns():  # pragma: no cover - the app did not start (needs_of)
            raise AssertionError("checked when the app started")


async def eval_batches(state: State) -> EvalBatches:
    """The eval batches, which the eval routes need."""
    evals = state.evals
    match evals:
        case EvalBatches():
            return evals
        case NoEvals():  # pragma: no cover - the app did not start (needs_of)
            raise AssertionError("checked when the app started")


Agents = Annotated[AgentStore, Depends(agent_store)]
Skills = Annotated[ServedSkills | NoSkills, Depends(skill_library)]
ServedLibrary = Annotated[ServedSkills, Depends(served_skills)]
Runs = Annotated[RunService, Depends(run_service)]
Evals = Annotated[EvalBatches, Depends(eval_batches)]


async def skill_reader(state: State, skills: ServedLibrary) -> SkillReader:
    """Reads of the skill library as it is now."""
    return SkillReader(skills, settings=state.settings.skills, store=state.store)


async def skill_writes(state: State, skills: ServedLibrary) -> SkillWrites:
    """Changes to the store's skills, over the library as it is now."""
    return SkillWrites(
        skills,
        settings=state.settings.skills,
        store=state.store,
        audit=state.audit,
        builds=state.environment_builds,
        reviewer=skill_reviewer(state.settings),
    )


SkillReads = Annotated[SkillReader, Depends(skill_reader)]
SkillChanges = Annotated[SkillWrites, Depends(skill_writes)]

_NEEDS: Final[dict[Callable[..., object], Service]] = {
    served_skills: "skills",
    run_service: "runs",
    eval_batches: "evals",
}


def needs_of(routers: Iterable[APIRouter]) -> set[Service]:
    """The services the routes of `routers` depend on (through the aliases above), which the
    app must open before it serves."""
    return {
        _NEEDS[call]
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
        for call in _calls(route.dependant)
        if call in _NEEDS
    }


def _calls(dependant: Dependant) -> Iterator[Callable[..., object]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)
