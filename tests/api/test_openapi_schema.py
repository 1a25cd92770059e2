"""Schemathesis against the served OpenAPI document: every operation of the full API (skills,
agents, runs on the direct engine) is called with examples generated from its schema, over
real HTTP; no answer may be a 5xx, and every answer must be documented and match its schema.

The examples, valid and invalid ones, are bounded (``MAX_EXAMPLES`` per operation,
derandomized, no shrinking) so the test stays fast. Paths are seeded: a directory skill, an
uploaded skill, an agent and a finished run exist, and every operation with path parameters
also gets examples that name them, so the fuzzing reaches past the 404s.

Schemathesis calls the API with ``requests`` (blocking), so it runs in a worker thread while
this test's event loop serves the API.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from pydantic import SecretStr
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api, skills
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.problems import PROBLEM_JSON
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillLibrary
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(180)

TOKEN: Final = "schema-test-token"
MAX_EXAMPLES: Final = 25
# Every run's first model call plays turn 1 (the scripted model is stateless), so each run the
# fuzzing starts answers at once; a run that asks again (a follow-up) runs out and fails.
SCRIPT: Final = 'turns:\n  - say: "done"\n'
# Not run: positive_data_acceptance (a valid request for a skill or agent that is not there is
# rightly a 404 or 409) and negative_data_rejection (pydantic's lax mode takes `false` for a
# number; a 2xx, never a 5xx); the Allow header of a 405 names only one route's methods
# (Starlette), which no check here looks at.
CHECKS: Final = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
UNAUTHENTICATED: Final = {"/healthz"}
"""Paths in the OpenAPI document that need no token (it lists neither itself nor ``/docs``,
which need it unless ``API__DOCS_OPEN``: ``tests/integration/security/test_docs_routes.py``)."""


@dataclass(frozen=True)
class Seeded:
    """The served API and what exists in it."""

    url: str
    path_parameters: list[dict[str, str]]
    """Sets of path parameters that name what exists (a skill with its version and a file)."""
    bodies: dict[str, dict[str, str]]
    """Valid bodies by operation label, for operations random ones seldom get past."""


@asynccontextmanager
async def served_api(tmp_path: Path) -> AsyncIterator[Seeded]:
    """The full API on the direct engine, seeded with a skill of each kind, an agent and a run."""
    library = tmp_path / "library"
    write_skill(
        library / "dir-skill",
        description="A directory skill. Use when testing.",
        files={"references/notes.md": "notes\n"},
    )
    manager_token = secrets.token_urlsafe(16)
    config = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        sandbox={"manager_token": SecretStr(manager_token), "pool_target": 0, "pool_max": 1},
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store = LocalArtifactStore(tmp_path / "store")
    async with AsyncExitStack() as stack:
        manager = await stack.enter_async_context(
            Manager.serving(config, store=store, publish=True)
        )
        services = AgentServices(
            settings=config,
            registry=await asyncio.to_thread(SkillLibrary(config.skills).refresh),
            store=store,
            provider=ScriptedProvider.from_yaml(SCRIPT),
            model="scripted",
            sandbox=manager.client,
        )
        app = create_api(
            config,
            store=store,
            routers=[skills.router, agents_router, runs_router],
            on_startup=[skills.open_skills, open_agents, open_runs(DirectEngine(services))],
        )
        server = await stack.enter_async_context(LoopbackServer(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"})
        )
        uploaded = await client.post(
            "/v1/skills/",
            json={
                "name": "up-skill",
                "description": "An uploaded skill. Use when testing.",
                "content": "---\nname: up-skill\ndescription: An uploaded skill. Use when"
                " testing.\n---\n# Up\n",
            },
        )
        assert uploaded.status_code == 201, uploaded.text
        agent = await client.post(
            "/v1/agents/",
            json={"name": "seed", "instruction": "Answer.", "skill_ids": ["dir-skill"]},
        )
        assert agent.status_code == 201, agent.text
        run_body = {"agent_id": agent.json()["id"], "input": "hello"}
        run = await client.post(
            "/v1/runs/", data=run_body, files={"files": ("notes.txt", b"notes\n", "text/plain")}
        )
        assert run.status_code == 201, run.text
        library_version = (await client.get("/v1/skills/dir-skill")).json()["version"]
        ids = {"agent_id": agent.json()["id"], "run_id": run.json()["id"]}
        yield Seeded(
            url=server.url,
            path_parameters=[
                {**ids, "name": "dir-skill", "version": library_version, "path": "SKILL.md"},
                {
                    **ids,
                    "name": "up-skill",
                    "version": uploaded.json()["latest"],
                    "path": "SKILL.md",
                },
                {**ids, "path": "inputs/notes.txt"},
            ],
            bodies={"POST /v1/runs/": run_body},
        )


def _fuzz(seeded: Seeded) -> list[str]:
    """Run every operation's examples; what failed, one report per operation."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    schema = schemathesis.openapi.from_url(f"{seeded.url}/openapi.json", headers=headers)
    failures: list[str] = []
    with requests.Session() as session:
        operations = [result.ok() for result in schema.get_all_operations()]
        # Deletions last, so the seeded skill and agent are there for every other operation.
        operations.sort(key=lambda operation: operation.method.upper() == "DELETE")
        for operation in operations:
            strategy = operation.as_strategy() | operation.as_strategy(
                generation_mode=GenerationMode.NEGATIVE
            )
            names = {p.name for p in operation.path_parameters}
            for parameters in seeded.path_parameters if names else ():
                known = {k: v for k, v in parameters.items() if k in names}
                strategy |= operation.as_strategy(path_parameters=known)
            if operation.label in seeded.bodies:
                strategy |= operation.as_strategy(
                    body=seeded.bodies[operation.label], media_type="multipart/form-data"
                )

            @settings(
                max_examples=MAX_EXAMPLES,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
            )
            @given(case=strategy)
            def check(case: schemathesis.Case) -> None:
                case.call_and_validate(session=session, headers=headers, checks=CHECKS, timeout=10)

            try:
                check()
            except (AssertionError, FailureGroup) as exc:
                failures.append(f"{operation.label}: {exc}")
    return failures


async def test_every_operation_answers_within_its_schema_and_never_5xx(tmp_path: Path) -> None:
    async with served_api(tmp_path) as seeded:
        failures = await asyncio.to_thread(_fuzz, seeded)
    assert not failures, "\n\n".join(failures)


async def test_every_operation_without_a_token_answers_401_problem_json(tmp_path: Path) -> None:
    async with served_api(tmp_path) as seeded, httpx.AsyncClient(base_url=seeded.url) as client:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        document = (await client.get("/openapi.json", headers=auth)).json()
        operations = [
            (method.upper(), path)
            for path, item in document["paths"].items()
            for method in item
            if path not in UNAUTHENTICATED
        ]
        assert len(operations) > 15  # skills, agents and runs are all there
        for method, path in operations:
            # Names of what exists, so no route could answer 404 before it asks for the token.
            url = path.format(**seeded.path_parameters[0])
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                response = await client.request(method, url, headers=headers)
                assert response.status_code == 401, (method, path, response.text)
                assert response.headers["content-type"] == PROBLEM_JSON, (method, path)
                assert response.headers["www-authenticate"] == "Bearer"
                assert response.json()["status"] == 401
        assert (await client.get("/healthz")).status_code == 200
