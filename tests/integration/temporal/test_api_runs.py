"""``/v1/runs`` on both engines over real HTTP: an agent made over the API runs the artifact
chain (real sandboxes), its Server-Sent Events are followed to the answer and resumed, its
artifact is downloaded, it is listed (from Temporal visibility on the temporal engine); a
conversation run takes a follow-up message and is cancelled."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

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
from skillweave.config import ModelSettings, Settings
from skillweave.llm.factory import ModelProviders
from skillweave.skills.package import build_package
from tests.api.test_runs import (
    CONVERSATION,
    PINNED_RUN,
    greeter_package,
    make_agent,
    sse,
    upload_greeter,
    what_the_run_used,
)
from tests.conftest import write_skill
from tests.integration.agent.test_direct_run import CSV, SCRIPT
from tests.integration.harness import eventually
from tests.integration.temporal.harness import EngineKind, Stack, open_engine, unique

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

TOKEN = "api-on-engines-token"


@contextlib.asynccontextmanager
async def api_client(
    kind: EngineKind,
    stack: Stack,
    script: str,
    skill_dirs: list[Path],
    tmp_path: Path,
    *,
    feed_engine: bool = True,
    model: ModelSettings | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """The API over an engine of `kind`; with `feed_engine` the engine's library follows the
    uploads at once, else it never sees them (a worker that has not refreshed yet). `model`:
    the models the API checks agents against and the engine's runs may name."""
    models = ModelProviders(model) if model is not None else None
    async with contextlib.AsyncExitStack() as closing:
        if models is not None:
            closing.push_async_callback(models.aclose)
        harness = await closing.enter_async_context(open_engine(kind, stack, script, models=models))
        assert harness.services is not None
        skills = harness.services.settings.skills
        settings = Settings(
            _env_file=None,
            api={"token": SecretStr(TOKEN)},
            # Runs of agents that name no model name the API's default (the harness's
            # engine replays `script` for it).
            model=model or ModelSettings(provider="scripted", name="harness.yaml"),
            skills={
                "dirs": [str(d) for d in skill_dirs],
                "uploaded_dir": str(tmp_path / "uploaded"),
                "catalog_mode": skills.catalog_mode,
            },
        )
        app = create_api(
            settings,
            store=stack.store,
            routers=[skills_router, agents_router, runs_router],
            on_startup=[
                open_skills,
                *([serve_uploaded_skills(harness.services)] if feed_engine else []),
                open_agents,
                open_runs(harness.engine),
            ],
        )
        async with (
            LoopbackServer(app) as server,
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            ) as client,
        ):
            yield client


async def test_a_run_made_over_the_api_streams_to_its_answer_and_artifact(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with api_client(engine_kind, stack, SCRIPT, skill_dirs, tmp_path) as client:
        agent_id = await make_agent(client, name=unique("analyst"), skill_ids=["data-toolkit"])
        run = (
            await client.post(
                "/v1/runs/",
                data={"agent_id": agent_id, "input": "Profile the attached sales.csv."},
                files={"files": ("sales.csv", CSV, "text/csv")},
            )
        ).json()
        events = await sse(client, f"/v1/runs/{run['id']}/events")
        kinds = [e["event"] for e in events]
        assert kinds[0] == "run_started"
        assert kinds[-1] == "run_finished"
        assert kinds.count("script_ran") == 2
        assert [e["id"] for e in events] == [str(n) for n in range(1, len(events) + 1)]
        resumed = await sse(client, f"/v1/runs/{run['id']}/events", last_event_id="4")
        assert [e["id"] for e in resumed] == [e["id"] for e in events[4:]]
        assert [e["data"] for e in resumed] == [e["data"] for e in events[4:]]

        async def completed() -> bool:
            return (await client.get(f"/v1/runs/{run['id']}")).json()["status"] == "completed"

        await eventually(completed, timeout=30)
        listed = (await client.get(f"/v1/runs/{run['id']}/artifacts")).json()
        [report] = [a["path"] for a in listed if a["path"].endswith("/outputs/report.md")]
        body = await client.get(f"/v1/runs/{run['id']}/artifacts/{report}")
        assert body.text.startswith("# Sales check")

        async def listed_run() -> bool:
            page = (await client.get("/v1/runs/", params={"limit": 200})).json()
            return run["id"] in [r["id"] for r in page["items"]]

        await eventually(listed_run, timeout=30)  # visibility is eventually consistent


async def test_a_conversation_over_the_api_takes_a_message_then_is_cancelled(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with api_client(engine_kind, stack, CONVERSATION, skill_dirs, tmp_path) as client:
        agent_id = await make_agent(client, name=unique("talker"), follow_up_seconds=120)
        run = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        url = f"/v1/runs/{run['id']}/events"
        first = await sse(client, url, until=lambda e: e["event"] == "answered")
        sent = await client.post(f"/v1/runs/{run['id']}/messages", json={"text": "more please"})
        assert sent.status_code == 202, sent.text
        answers = await sse(
            client, url, last_event_id=first[-1]["id"], until=lambda e: e["event"] == "answered"
        )
        assert answers[-1]["data"]["detail"].startswith("You said")
        assert (await client.post(f"/v1/runs/{run['id']}/cancel")).status_code == 202
        end = await sse(client, url, last_event_id=answers[-1]["id"])
        assert end[-1]["event"] == "run_finished"
        assert end[-1]["data"]["status"] == "cancelled"


UPLOADED = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: note-style}}]
  - tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
    expect: {tool_results: [{not_error: true, contains: "Short sentences"}]}
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: greeter, script: scripts/hello.py}}
    expect: {tool_results: [{not_error: true, contains: "Greeter"}]}
  - say: "Greeted."
    expect: {tool_results: [{not_error: true, contains: "hello from the uploaded greeter"}]}
"""

NOTE_STYLE = """---
name: note-style
description: How notes are written here. Use when writing any note.
---
# Note style

Short sentences. One idea per line.
"""


async def test_uploaded_skills_content_and_zip_run_on_both_engines(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """A content skill and a ZIP skill with a script, uploaded over the API, in one agent: the
    run activates both and runs the uploaded script in a real sandbox."""
    source = tmp_path / "src" / "greeter"
    write_skill(
        source,
        description="Greets the user from an uploaded package.",
        body="# Greeter\nRun scripts/hello.py.\n",
        files={"scripts/hello.py": "print('hello from the uploaded greeter')\n"},
    )
    async with api_client(engine_kind, stack, UPLOADED, skill_dirs, tmp_path) as client:
        content = await client.post(
            "/v1/skills/",
            json={
                "name": "note-style",
                "description": "How notes are written here. Use when writing any note.",
                "content": NOTE_STYLE,
            },
        )
        assert content.status_code == 201, content.text
        zipped = await client.post(
            "/v1/skills/upload",
            files={"file": ("greeter.zip", build_package(source), "application/zip")},
        )
        assert zipped.status_code == 201, zipped.text
        agent_id = await make_agent(
            client, name=unique("greeter-agent"), skill_ids=["note-style", "greeter"]
        )
        run = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        events = await sse(client, f"/v1/runs/{run['id']}/events")
        activated = {
            e["data"]["skill"]: e["data"]["version"]
            for e in events
            if e["event"] == "skill_activated"
        }
        assert activated == {
            "note-style": content.json()["latest"],
            "greeter": zipped.json()["latest"],
        }
        [ran] = [e for e in events if e["event"] == "script_ran"]
        assert ran["data"]["status"] == "succeeded"
        assert events[-1]["data"]["status"] == "completed"


async def test_runs_use_the_versions_pinned_at_start_from_the_store(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """The engine here never learns of the uploads (as a worker between two refreshes): the
    run's pinned versions come from the store. A version uploaded while a run waits for the
    model does not reach that run; the next run gets it."""
    name = unique("greeter")
    script = PINNED_RUN.replace("greeter", name)
    async with api_client(
        engine_kind, stack, script, skill_dirs, tmp_path, feed_engine=False
    ) as client:
        first = await upload_greeter(client, greeter_package(tmp_path, "v1", name))
        agent_id = await make_agent(client, name=unique("pinned"), skill_ids=[name])
        early = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        second = await upload_greeter(client, greeter_package(tmp_path, "v2", name))
        late = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()
        assert await what_the_run_used(client, early["id"]) == (first, "v1", "reference of v1")
        assert await what_the_run_used(client, late["id"]) == (second, "v2", "reference of v2")


async def test_an_agent_named_for_people_runs_by_slug_with_a_skill_given_by_id(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """The platform's published request shapes, on both engines: an agent with a display
    name, its skill given by the id the listing shows, run by its slug."""
    async with api_client(engine_kind, stack, CONVERSATION, skill_dirs, tmp_path) as client:
        [skill, *_] = (await client.get("/v1/skills/")).json()["items"]
        name = unique("Data Agent")
        made = await client.post(
            "/v1/agents/",
            json={"name": name, "instruction": "Talk.", "skill_ids": [skill["id"]]},
        )
        assert made.status_code == 201, made.text
        agent = made.json()
        assert agent["skill_ids"] == [skill["name"]]
        assert agent["slug"] != agent["id"]

        run = await client.post("/v1/runs/", data={"agent_id": agent["slug"], "input": "Hi."})
        assert run.status_code == 201, run.text
        assert run.json()["agent"]["id"] == agent["id"]
        events = await sse(client, f"/v1/runs/{run.json()['id']}/events")
        assert events[-1]["event"] == "run_finished"
        assert events[-1]["data"]["status"] == "completed"
