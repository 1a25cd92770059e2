"""``/v1/runs`` over real HTTP on the direct engine: start a run of a stored agent with a file,
follow its Server-Sent Events to the answer, resume them with Last-Event-ID, download the
artifact its scripts wrote; talk to a waiting run, then cancel it. Real manager, real
sandboxes, real store; the model is scripted."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills, serve_uploaded_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import Settings, bundled_skills_dir
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.skills.package import build_package
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.agent.test_direct_run import CSV, SCRIPT
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(180)

TOKEN = "runs-test-token"

CONVERSATION = """
turns:
  - say: "Hello there."
  - say: "You said: more please."
"""


@asynccontextmanager
async def api_on_direct_engine(
    tmp_path: Path, script: str, *, dirs: tuple[Path, ...] = ()
) -> AsyncIterator[httpx.AsyncClient]:
    manager_token = secrets.token_urlsafe(16)
    roots = [bundled_skills_dir(), *dirs]
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        sandbox={"manager_token": SecretStr(manager_token), "pool_target": 1, "pool_max": 4},
        skills={"dirs": [str(d) for d in roots], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store = LocalArtifactStore(tmp_path / "store")
    registry = SkillRegistry.from_scan(SkillScanner(roots).scan())
    async with AsyncExitStack() as stack:
        manager = await stack.enter_async_context(
            Manager.serving(settings, store=store, registry=registry, publish=True)
        )
        services = AgentServices(
            settings=settings,
            registry=registry,
            store=store,
            provider=ScriptedProvider.from_yaml(script),
            model="scripted",
            sandbox=manager.client,
        )

        app = create_api(
            settings,
            store=store,
            routers=[skills_router, agents_router, runs_router],
            on_startup=[
                open_skills,
                serve_uploaded_skills(services),
                open_agents,
                open_runs(DirectEngine(services)),
            ],
        )
        server = await stack.enter_async_context(LoopbackServer(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            )
        )
        yield client


async def sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    last_event_id: str | None = None,
    until: Callable[[dict[str, Any]], bool] = lambda e: e["event"] == "run_finished",
) -> list[dict[str, Any]]:
    """Read Server-Sent Events until `until` holds for one."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    events: list[dict[str, Any]] = []
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        current: dict[str, Any] = {}
        async for line in response.aiter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if current:
                    events.append(current)
                    if until(current):
                        return events
                current = {}
                continue
            field, _, value = line.partition(": ")
            current[field] = json.loads(value) if field == "data" else value
    return events


async def make_agent(client: httpx.AsyncClient, **fields: Any) -> str:
    body = {"name": "analyst", "instruction": "Work with the user's data.", **fields}
    response = await client.post("/v1/agents/", json=body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_a_run_streams_its_events_to_the_answer_and_serves_its_artifact(
    tmp_path: Path,
) -> None:
    async with api_on_direct_engine(tmp_path, SCRIPT) as client:
        agent_id = await make_agent(client, skill_ids=["data-toolkit"])
        started = await client.post(
            "/v1/runs/",
            data={"agent_id": agent_id, "input": "Profile the attached sales.csv."},
            files={"files": ("sales.csv", CSV, "text/csv")},
        )
        assert started.status_code == 201, started.text
        run = started.json()
        assert run["agent"]["id"] == agent_id
        assert [ref["key"].rsplit("/", 1)[-1] for ref in run["inputs"]] == ["sales.csv"]

        events = await sse(client, f"/v1/runs/{run['id']}/events")
        kinds = [e["event"] for e in events]
        assert kinds[0] == "run_started"
        assert kinds[-1] == "run_finished"
        assert kinds.count("script_ran") == 2
        assert "answered" in kinds
        assert [e["id"] for e in events] == [str(n) for n in range(1, len(events) + 1)]
        assert all(e["data"]["run_id"] == run["id"] for e in events)

        # Resumed: only what came after the third event.
        again = await sse(client, f"/v1/runs/{run['id']}/events", last_event_id="3")
        assert [e["id"] for e in again] == [e["id"] for e in events[3:]]

        finished = (await client.get(f"/v1/runs/{run['id']}")).json()
        assert finished["status"] == "completed"
        assert "report.md" in finished["result"]["answer"]
        listed = (await client.get(f"/v1/runs/{run['id']}/artifacts")).json()
        paths = {a["path"] for a in listed}
        assert "inputs/sales.csv" in paths
        [report_path] = [p for p in paths if p.endswith("/outputs/report.md")]
        report = await client.get(f"/v1/runs/{run['id']}/artifacts/{report_path}")
        assert report.status_code == 200
        assert report.text.startswith("# Sales check")
        assert (await client.get(f"/v1/runs/{run['id']}/artifacts/inputs/sales.csv")).content == CSV
        missing = await client.get(f"/v1/runs/{run['id']}/artifacts/../../etc/passwd")
        assert missing.status_code == 404
        page = (await client.get("/v1/runs/")).json()
        assert [r["id"] for r in page["items"]] == [run["id"]]
        assert page["items"][0]["status"] == "completed"
        assert page["items"][0]["agent"] == "analyst"


async def test_a_waiting_run_takes_a_message_and_is_cancelled(tmp_path: Path) -> None:
    async with api_on_direct_engine(tmp_path, CONVERSATION) as client:
        agent_id = await make_agent(client, follow_up_seconds=60)
        run = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        url = f"/v1/runs/{run['id']}/events"
        first = await sse(client, url, until=lambda e: e["event"] == "answered")
        assert first[-1]["data"]["detail"].startswith("Hello there")
        sent = await client.post(f"/v1/runs/{run['id']}/messages", json={"text": "more please"})
        assert sent.status_code == 202, sent.text
        answers = await sse(
            client,
            url,
            last_event_id=first[-1]["id"],
            until=lambda e: e["event"] == "answered",
        )
        received = [e for e in answers if e["event"] == "message_received"]
        assert len(received) == 1
        assert "more please" in received[0]["data"]["detail"]
        assert answers[-1]["data"]["detail"].startswith("You said")
        cancelled = await client.post(f"/v1/runs/{run['id']}/cancel")
        assert cancelled.status_code == 202
        end = await sse(client, url, last_event_id=answers[-1]["id"])
        assert end[-1]["event"] == "run_finished"
        assert end[-1]["data"]["status"] == "cancelled"
        refused = await client.post(f"/v1/runs/{run['id']}/messages", json={"text": "still?"})
        assert refused.status_code == 409
        assert refused.headers["content-type"] == "application/problem+json"


async def test_unknown_agents_and_runs_are_problems(tmp_path: Path) -> None:
    async with api_on_direct_engine(tmp_path, CONVERSATION) as client:
        refused = await client.post("/v1/runs/", data={"agent_id": "ag-nope", "input": "x"})
        assert refused.status_code == 422
        assert "ag-nope" in refused.json()["detail"]
        for url in ("/v1/runs/run-none", "/v1/runs/run-none/events", "/v1/runs/../x"):
            response = await client.get(url)
            assert response.status_code == 404, url


UPLOADED_RUN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: greeter, script: scripts/hello.py}}
    expect: {tool_results: [{not_error: true, contains: "Greeter"}]}
  - say: "It said hello."
    expect: {tool_results: [{not_error: true, contains: "hello from the uploaded greeter"}]}
"""


async def test_an_uploaded_skill_is_activated_and_its_script_runs(tmp_path: Path) -> None:
    """Uploaded over the API, the skill joins the engine's library at once, and its package
    (stored under the version the scanner computes) is what the manager runs."""
    skill = tmp_path / "src" / "greeter"
    write_skill(
        skill,
        description="Greets the user from an uploaded package.",
        body="# Greeter\nRun scripts/hello.py.\n",
        files={"scripts/hello.py": "print('hello from the uploaded greeter')\n"},
    )
    async with api_on_direct_engine(tmp_path, UPLOADED_RUN) as client:
        uploaded = await client.post(
            "/v1/skills/upload",
            files={"file": ("greeter.zip", build_package(skill), "application/zip")},
        )
        assert uploaded.status_code == 201, uploaded.text
        agent_id = await make_agent(client, skill_ids=["greeter"])
        run = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        events = await sse(client, f"/v1/runs/{run['id']}/events")
        [ran] = [e for e in events if e["event"] == "script_ran"]
        assert ran["data"]["status"] == "succeeded"
        [activated] = [e for e in events if e["event"] == "skill_activated"]
        assert activated["data"]["version"] == uploaded.json()["latest"]
        assert events[-1]["data"]["status"] == "completed"
        # Disabled, it leaves the engine's library: a new run cannot activate it.
        assert (await client.patch("/v1/skills/greeter", json={"enabled": False})).is_success
        assert not (tmp_path / "uploaded" / "greeter").exists()


PINNED_RUN = """
turns:
  - delay_seconds: 1.5
    tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: greeter, script: scripts/hello.py}}
      - {name: read_skill_resource, arguments: {skill: greeter, path: references/said.md}}
  - say: "{{last_result}}"
    expect: {tool_results: [{not_error: true}, {not_error: true}]}
"""


def greeter_package(tmp_path: Path, edition: str, name: str = "greeter") -> bytes:
    """The greeter skill (called `name`), every file of it marked with `edition`."""
    skill = tmp_path / "src" / edition / name
    write_skill(
        skill,
        description="Greets the user from an uploaded package.",
        body=f"# Greeter {edition}\nRun scripts/hello.py.\n",
        files={
            "references/said.md": f"reference of {edition}\n",
            "scripts/hello.py": (
                "import pathlib\n"
                "pathlib.Path('outputs').mkdir(exist_ok=True)\n"
                f"pathlib.Path('outputs/said.txt').write_text('{edition}')\n"
                f"print('hello from {edition}')\n"
            ),
        },
    )
    return build_package(skill)


async def upload_greeter(client: httpx.AsyncClient, package: bytes) -> str:
    uploaded = await client.post(
        "/v1/skills/upload", files={"file": ("skill.zip", package, "application/zip")}
    )
    assert uploaded.status_code == 201, uploaded.text
    return uploaded.json()["latest"]


async def what_the_run_used(client: httpx.AsyncClient, run_id: str) -> tuple[str, str, str]:
    """(activated version, the script's output file, the answer: the reference file it read)
    of a finished run."""
    events = await sse(client, f"/v1/runs/{run_id}/events")
    assert events[-1]["data"]["status"] == "completed", events
    [activated] = [e for e in events if e["event"] == "skill_activated"]
    listed = (await client.get(f"/v1/runs/{run_id}/artifacts")).json()
    [said] = [a["path"] for a in listed if a["path"].endswith("/outputs/said.txt")]
    output = (await client.get(f"/v1/runs/{run_id}/artifacts/{said}")).text
    answer = (await client.get(f"/v1/runs/{run_id}")).json()["result"]["answer"]
    return activated["data"]["version"], output, answer.strip()


async def test_a_run_keeps_the_skill_versions_it_started_with(tmp_path: Path) -> None:
    """A run pins its agent's skills when it starts: a new version uploaded, or the skill
    deleted, while it waits for the model changes nothing it activates, reads or runs; a run
    started after the upload gets the new version."""
    async with api_on_direct_engine(tmp_path, PINNED_RUN) as client:
        first = await upload_greeter(client, greeter_package(tmp_path, "v1"))
        agent_id = await make_agent(client, skill_ids=["greeter"])
        early = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        assert early["skills"] == [{"name": "greeter", "version": first, "parent": None}]

        second = await upload_greeter(client, greeter_package(tmp_path, "v2"))
        assert second != first
        late = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        assert late["skills"][0]["version"] == second

        assert await what_the_run_used(client, early["id"]) == (first, "v1", "reference of v1")
        assert await what_the_run_used(client, late["id"]) == (second, "v2", "reference of v2")

        # Deleted while a run waits: the run still has its version; a new run is refused.
        doomed = (
            await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})
        ).json()
        assert (await client.delete("/v1/skills/greeter")).status_code == 204
        assert await what_the_run_used(client, doomed["id"]) == (second, "v2", "reference of v2")
        refused = await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})
        assert refused.status_code == 409
        assert "greeter" in refused.json()["detail"]


async def test_a_run_names_its_agent_by_slug(tmp_path: Path) -> None:
    """An agent made with a display name is run by its slug, as by its id."""
    async with api_on_direct_engine(tmp_path, CONVERSATION) as client:
        made = await client.post(
            "/v1/agents/", json={"name": "Data Agent", "instruction": "Work with the data."}
        )
        assert made.status_code == 201, made.text
        run = await client.post("/v1/runs/", data={"agent_id": "data-agent", "input": "Hi."})
        assert run.status_code == 201, run.text
        assert run.json()["agent"]["id"] == made.json()["id"]
        assert run.json()["agent"]["name"] == "Data Agent"
        assert run.json()["agent"]["slug"] == "data-agent"
        events = await sse(client, f"/v1/runs/{run.json()['id']}/events")
        assert events[-1]["data"]["status"] == "completed"
        assert any(e["event"] == "answered" for e in events)


async def test_an_agent_s_skill_ids_take_the_ids_the_api_shows(tmp_path: Path) -> None:
    """Skills have a stable id (`sk-…`) in the listing; an agent takes it for the name."""
    async with api_on_direct_engine(tmp_path, CONVERSATION) as client:
        listed = (await client.get("/v1/skills/", params={"q": "data-toolkit"})).json()["items"]
        [toolkit] = [item for item in listed if item["name"] == "data-toolkit"]
        assert toolkit["id"].startswith("sk-")
        detail = (await client.get("/v1/skills/data-toolkit")).json()
        assert detail["id"] == toolkit["id"]

        made = await client.post(
            "/v1/agents/",
            json={"name": "by-id", "instruction": "Work.", "skill_ids": [toolkit["id"]]},
        )
        assert made.status_code == 201, made.text
        assert made.json()["skill_ids"] == ["data-toolkit"]  # stored as the name

        unknown = await client.post(
            "/v1/agents/",
            json={"name": "lost", "instruction": "Work.", "skill_ids": ["sk-0000000000000000"]},
        )
        assert unknown.status_code == 422
        assert "sk-0000000000000000" in unknown.json()["detail"]


NAMESPACES = Path(__file__).parents[1] / "data" / "compat" / "namespaces"

NAMESPACED_RUN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: web.fetcher}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: formats.pdf.parser, script: scripts/parse.py, args: [a.pdf]}
    expect: {tool_results: [{not_error: true, contains: "robots.txt"}]}
  - tool_calls: [{name: activate_skill, arguments: {name: formats.pdf.parser}}]
    expect: {tool_results: [{is_error: true, contains: "is not active"}]}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: formats.pdf.parser, script: scripts/parse.py, args: [a.pdf]}
  - say: "{{last_result}}"
"""


async def test_an_agent_s_skill_ids_take_namespaces_and_qualified_names(tmp_path: Path) -> None:
    """`web.*` is every skill of the namespace when the run starts; `formats.pdf.parser` is
    one of two skills called parser."""
    async with api_on_direct_engine(tmp_path, NAMESPACED_RUN, dirs=(NAMESPACES,)) as client:
        agent_id = await make_agent(client, skill_ids=["web.*", "formats.pdf.parser"])
        agent = (await client.get(f"/v1/agents/{agent_id}")).json()
        assert agent["skill_ids"] == ["web.*", "formats.pdf.parser"]  # a scope stays a scope
        run = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Go."})).json()
        assert sorted(pin["name"] for pin in run["skills"]) == [
            "fetcher",
            "formats.pdf.parser",
            "scraper",
        ]
        events = await sse(client, f"/v1/runs/{run['id']}/events")
        result = (await client.get(f"/v1/runs/{run['id']}")).json()["result"]
        assert events[-1]["data"]["status"] == "completed", result
        assert list(result["active_skills"]) == ["fetcher", "formats.pdf.parser"]
        assert '"parser": "pdf"' in result["answer"]

        for wrong in (["nowhere.*"], ["parser"]):
            refused = await client.post(
                "/v1/agents/", json={"name": "x", "instruction": "Work.", "skill_ids": wrong}
            )
            assert refused.status_code == 422, refused.text
            assert wrong[0] in refused.json()["detail"]
