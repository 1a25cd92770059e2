"""The control-plane REST API (FastAPI): skills, agents and runs over HTTP, served by
``skillweave api``. :func:`create_api` builds the app."""

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from fastapi import APIRouter

    from skillweave.api.agent_store import AgentCreate, AgentStore
    from skillweave.api.agents import open_agents
    from skillweave.api.request_metrics import include_worker_metrics
    from skillweave.api.runs import open_runs
    from skillweave.api.skill_evals import open_evals
    from skillweave.api.skills import open_skills, serve_uploaded_skills

    # Each resource's module names its router `router`; the front names them apart.
    agents_router: APIRouter
    network_router: APIRouter
    registry_router: APIRouter
    runs_router: APIRouter
    skill_evals_router: APIRouter
    skill_versions_router: APIRouter
    skills_router: APIRouter

from skillweave.api.app import create_api
from skillweave.api.state import ApiComposition, ApiState

__all__ = [
    "AgentCreate",
    "AgentStore",
    "ApiComposition",
    "ApiState",
    "agents_router",
    "create_api",
    "include_worker_metrics",
    "network_router",
    "open_agents",
    "open_evals",
    "open_runs",
    "open_skills",
    "registry_router",
    "runs_router",
    "serve_uploaded_skills",
    "skill_evals_router",
    "skill_versions_router",
    "skills_router",
]


# Imported on first use (skillweave.lazy): the front stays cheap to import.
_EXPORTS: dict[str, str] = {
    "AgentCreate": "agent_store",
    "AgentStore": "agent_store",
    "include_worker_metrics": "request_metrics",
    "open_agents": "agents",
    "open_evals": "skill_evals",
    "open_runs": "runs",
    "open_skills": "skills",
    "agents_router": "agents:router",
    "network_router": "network:router",
    "registry_router": "registry:router",
    "runs_router": "runs:router",
    "skills_router": "skills:router",
    "skill_evals_router": "skill_evals:router",
    "skill_versions_router": "skill_versions:router",
    "serve_uploaded_skills": "skills",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
