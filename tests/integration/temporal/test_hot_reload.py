"""Hot reload for runs (issue 25), on both engines: the library a worker serves is rescanned
while it runs, a new run sees a changed skill at once, and a running run keeps the version it
activated. Also the worker's own composition (``cli.worker.open_worker``'s: the whole library,
``cli.library.opened_library``, reloaded) and the API: directory skills added, changed and
removed reach them without a restart."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import Settings
from skillweave.skills import SkillLibrary
from skillweave.skills.reload import reloading
from tests.conftest import write_skill
from tests.integration.temporal.harness import EngineKind, Stack, kind_is, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

RELOAD = 0.1
SEEN_WITHIN = 10.0

RUN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
  - tool_calls: [{name: read_skill_resource, arguments: {skill: notes, path: references/notes.md}}]
    delay_seconds: 3
    expect: {tool_results: [{not_error: true, contains: '<skill_content name="notes">'}]}
  - say: "{{last_result}}"
"""


def notes(root: Path, word: str) -> None:
    write_skill(
        root / "notes",
        description=f"Team notes ({word}). Use when the team's notes are needed.",
        files={"references/notes.md": f"The word is {word}.\n"},
    )


async def eventually(holds: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SEEN_WITHIN
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError("the library did not change in time")
        await asyncio.sleep(0.05)


async def test_a_running_run_keeps_its_version_while_new_runs_see_the_change(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    library_root = tmp_path / "library"
    notes(library_root, "first")
    library = SkillLibrary(stack.settings.skills, dirs=[library_root])
    first = library.refresh().get("notes").version
    async with open_engine(engine_kind, replace(stack, registry=library.registry), RUN) as harness:
        services = harness.services
        assert services is not None
        async with reloading(library, services.use_registry, every=RELOAD):
            run = await harness.start("What is the word?")
            await harness.wait_event(run, kind_is("skill_activated"))
            notes(library_root, "second")  # while the model thinks (3 s)
            await eventually(lambda: services.registry.get("notes").version != first)
            result = await harness.engine.result(run)
            later, _ = await harness.run("What is the word now?")

    assert result.status == "completed", result.reason
    assert result.active_skills == {"notes": first}
    assert "The word is first." in (result.answer or "")
    assert later.status == "completed", later.reason
    assert later.active_skills["notes"] != first
    assert "The word is second." in (later.answer or "")


async def test_a_workers_library_sees_added_changed_and_removed_skills(
    stack: Stack, tmp_path: Path
) -> None:
    from skillweave.cli.library import opened_library

    library_root = tmp_path / "library"
    write_skill(library_root / "style-guide", description="House style. Use when writing.")
    skills = stack.settings.skills.model_copy(
        update={"reload_seconds": RELOAD, "uploaded_dir": tmp_path / "uploaded"}
    )
    settings = stack.settings.model_copy(update={"skills": skills})
    async with open_engine("temporal", stack, "turns: [{say: unused}]") as harness:
        services = harness.services
        assert services is not None
        async with (
            opened_library(settings, roots=[library_root]) as served,
            reloading(served, services.use_registry, every=RELOAD),
        ):
            services.serve_library(served)
            assert "notes" not in services.registry
            notes(library_root, "first")
            await eventually(lambda: "notes" in services.registry)
            notes(library_root, "second")
            await eventually(lambda: "(second)" in services.registry.get("notes").description)
            shutil.rmtree(library_root / "notes")
            await eventually(lambda: "notes" not in services.registry)


async def test_the_api_lists_added_changed_and_removed_directory_skills(
    stack: Stack, tmp_path: Path
) -> None:
    library_root = tmp_path / "library"
    write_skill(library_root / "style-guide", description="House style. Use when writing.")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr("api-token")},
        skills={
            "dirs": [str(library_root)],
            "uploaded_dir": str(tmp_path / "uploaded"),
            "reload_seconds": RELOAD,
        },
    )
    app = create_api(settings, store=stack.store, routers=[skills_router], on_startup=[open_skills])

    async def listed(client: httpx.AsyncClient) -> dict[str, str]:
        page = (await client.get("/v1/skills/", params={"source": "directory"})).json()
        return {item["name"]: item["description"] for item in page["items"]}

    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": "Bearer api-token"}
        ) as client,
    ):
        assert list(await listed(client)) == ["style-guide"]
        for change, holds in (
            (lambda: notes(library_root, "first"), lambda seen: "notes" in seen),
            (
                lambda: notes(library_root, "second"),
                lambda seen: "(second)" in seen.get("notes", ""),
            ),
            (lambda: shutil.rmtree(library_root / "notes"), lambda seen: "notes" not in seen),
        ):
            change()
            deadline = time.monotonic() + SEEN_WITHIN
            while not holds(await listed(client)):
                assert time.monotonic() < deadline, await listed(client)
                await asyncio.sleep(0.05)
        # What runs are pinned against follows too.
        registry = app.state.api.skills.registry
        assert "notes" not in registry
