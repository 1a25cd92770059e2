"""Names are owned (DESIGN §8), over real HTTP: no upload — ZIP or SKILL.md text, top or child
at any depth — may bring a skill whose name (NFKC-normalized, case-folded) a directory skill or
another upload holds; the answer is a 409 that names the clash, where it is and who owns it, and
nothing is stored. A run whose agent lists a skill that is deleted, disabled or shadowed is a
409 that says which and why. The engine is a recorder: these refusals come before any run."""

from __future__ import annotations

import asyncio
import io
import zipfile
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.agent.events import AgentEvent
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import Settings
from skillweave.engines.base import RunRequest, RunResult
from skillweave.skills import SkillRegistry
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

TOKEN = "names-token"
PROBLEM = "application/problem+json"
DESCRIPTION = "Does a thing. Use when a thing must be done."
CLEANER = "csv-cleaner"


def secret_script(owner: str) -> str:
    """A script that would print its skill's secret, marked with who wrote it."""
    return f"import os\nprint({owner!r}, os.environ.get('CLEANER_TOKEN', 'none'))\n"


class RecordingEngine:
    """An engine that records what it was asked to start and ends every run at once."""

    def __init__(self) -> None:
        self.started: list[RunRequest] = []

    async def start(self, request: RunRequest) -> str:
        self.started.append(request)
        return request.run_id

    async def result(self, run_id: str) -> RunResult:
        return RunResult(run_id=run_id, status="completed")

    async def events(self, run_id: str) -> AsyncIterator[AgentEvent]:  # pragma: no cover
        return
        yield

    async def send(self, run_id: str, text: str) -> None:  # pragma: no cover
        raise NotImplementedError

    async def cancel(self, run_id: str) -> None:  # pragma: no cover
        raise NotImplementedError


@dataclass
class Served:
    client: httpx.AsyncClient
    app: FastAPI
    store: LocalArtifactStore
    engine: RecordingEngine
    library: Path

    @property
    def registry(self) -> SkillRegistry:
        """What runs are pinned against (directory skills and enabled uploads)."""
        return self.app.state.api.skills.registry

    async def refresh(self) -> None:
        """Rebuild the registry, as after an upload (picks up new directory skills too)."""
        await self.app.state.api.skills.changed()


def directory_skill(library: Path, folder: str, name: str | None = None) -> Path:
    """A directory skill with a script (that would print its secret) in `library`."""
    return write_skill(
        library / folder,
        name=name,
        description=DESCRIPTION,
        files={"scripts/clean.py": secret_script("directory")},
    )


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """The directory library; tests write skills into it before the API starts."""
    folder = tmp_path / "library"
    folder.mkdir()
    return folder


@pytest.fixture
async def served(tmp_path: Path, library: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start the API (skills, agents, runs) over `library`."""
    async with AsyncExitStack() as stack:

        async def start(*, disabled: tuple[str, ...] = ()) -> Served:
            settings = Settings(
                _env_file=None,
                api={"token": SecretStr(TOKEN)},
                # The engine is a recording one: runs name the default model, never call it.
                model={"provider": "openai", "name": "gpt-4o-mini"},
                skills={
                    "dirs": [str(library)],
                    "uploaded_dir": str(tmp_path / "uploaded"),
                    "disabled": list(disabled),
                },
            )
            store = LocalArtifactStore(tmp_path / "store")
            engine = RecordingEngine()
            app = create_api(
                settings,
                store=store,
                routers=[skills_router, agents_router, runs_router],
                on_startup=[open_skills, open_agents, open_runs(engine)],
            )
            server = await stack.enter_async_context(LoopbackServer(app))
            client = await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
                )
            )
            return Served(client, app, store, engine, library)

        yield start


def skill_md(name: str, body: str = "# Do\n\nDo the thing.\n") -> str:
    return f"---\nname: {name}\ndescription: {DESCRIPTION}\n---\n{body}"


def tree_zip(top: str, *children: str, marker: str = "") -> bytes:
    """A ZIP of skill `top` holding a skill at each path of `children` (``a`` or ``a/b``),
    each named like its folder, each with a script."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in ("", *children):
            folder = f"{top}/{path}/" if path else f"{top}/"
            name = path.rsplit("/", 1)[-1] if path else top
            archive.writestr(f"{folder}SKILL.md", skill_md(name, f"# {name}{marker}\n"))
            archive.writestr(f"{folder}scripts/clean.py", secret_script(f"upload {top}"))
    return buffer.getvalue()


async def upload(api: Served, data: bytes) -> httpx.Response:
    files = {"file": ("skill.zip", data, "application/zip")}
    return await api.client.post("/v1/skills/upload", files=files)


async def post_content(api: Served, name: str) -> httpx.Response:
    body = {"name": name, "description": DESCRIPTION, "content": skill_md(name)}
    return await api.client.post("/v1/skills/", json=body)


async def stored_keys(api: Served) -> list[str]:
    refs = [*await api.store.list("skills/"), *await api.store.list("catalog/")]
    return sorted(ref.key for ref in refs)


def name_taken(response: httpx.Response, *, name: str, path: str, owner: str) -> dict[str, Any]:
    """Assert the 409 of a name clash, naming `name`, `path` and `owner`; its one entry."""
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == 409
    assert body["title"] == "Skill name taken"
    for needle in (repr(name), repr(path), owner):
        assert needle in body["detail"], body["detail"]
    [entry] = body["errors"]
    assert entry["name"] == name
    assert entry["path"] == path
    assert owner in entry["owner"]
    return entry


def unavailable(response: httpx.Response, *, skill: str, reason: str) -> str:
    """Assert the 409 of a run whose agent's skill is unavailable; its detail."""
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["title"] == "Agent's skill unavailable"
    assert repr(skill) in body["detail"]
    assert reason in body["detail"]
    [entry] = body["errors"]
    assert (entry["skill"], entry["reason"]) == (skill, reason)
    return body["detail"]


async def make_agent(api: Served, *skills: str) -> str:
    body = {"name": "analyst", "instruction": "Work.", "skill_ids": list(skills)}
    response = await api.client.post("/v1/agents/", json=body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def start_run(api: Served, agent_id: str) -> httpx.Response:
    return await api.client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Go."})


# -- uploads --------------------------------------------------------------------------------


async def test_a_child_named_like_a_directory_skill_is_refused_and_the_directory_skill_stays(
    served: Callable[..., Any], library: Path
) -> None:
    """The review's example: a new top name, a child named like a directory skill."""
    folder = directory_skill(library, CLEANER)
    api: Served = await served()
    before = api.registry.get(CLEANER)

    refused = await upload(api, tree_zip("report-kit", CLEANER))
    entry = name_taken(
        refused, name=CLEANER, path=f"report-kit/{CLEANER}", owner="the directory skill"
    )
    assert str(folder.absolute()) in entry["owner"]
    assert await stored_keys(api) == []

    # The directory skill is what runs get: its folder, its version (its secrets follow it).
    skill = api.registry.get(CLEANER)
    assert (skill.path, skill.version) == (folder.absolute(), before.version)
    assert api.registry.owner_of(CLEANER).kind == "directory"
    assert "report-kit" not in api.registry
    listed = (await api.client.get("/v1/skills/")).json()["items"]
    assert [(i["name"], i["source"]) for i in listed] == [(CLEANER, "directory")]

    agent_id = await make_agent(api, CLEANER)
    started = await start_run(api, agent_id)
    assert started.status_code == 201, started.text
    assert started.json()["skills"] == [
        {"name": CLEANER, "version": before.version, "parent": None}
    ]
    [request] = api.engine.started
    assert [(p.name, p.version) for p in request.agent.pinned or ()] == [(CLEANER, before.version)]
    # The package the manager runs (with csv-cleaner's secrets) for that pin: the directory's.
    ref = await api.store.stat(keys.skill_package_key(CLEANER, before.version))
    assert ref is not None
    with zipfile.ZipFile(io.BytesIO(await api.store.get_bytes(ref))) as package:
        assert package.read(f"{CLEANER}/scripts/clean.py").decode() == secret_script("directory")


@pytest.mark.parametrize("spelled", ["Csv-Cleaner", "ＣＳＶ-Cleaner", "CSV-CLEANER"])
async def test_names_clash_after_case_folding_and_nfkc(
    served: Callable[..., Any], library: Path, spelled: str
) -> None:
    """A third-party directory skill named outside the spec (lenient loading keeps it) owns
    every spelling of its name: a child 'csv-cleaner' of an upload, or a text upload of it."""
    directory_skill(library, "third-party-cleaner", name=spelled)
    api: Served = await served()
    assert spelled in api.registry

    refused = await upload(api, tree_zip("report-kit", f"tools/{CLEANER}"))
    entry = name_taken(
        refused, name=CLEANER, path=f"report-kit/tools/{CLEANER}", owner="the directory skill"
    )
    assert entry["owned_as"] == spelled
    name_taken(
        await post_content(api, CLEANER), name=CLEANER, path=CLEANER, owner="directory skill"
    )
    assert await stored_keys(api) == []
    assert CLEANER not in api.registry


async def test_a_name_a_directory_skill_has_in_any_namespace_is_refused(
    served: Callable[..., Any], library: Path
) -> None:
    """Namespaced directory skills own their own names too: `web/csv-cleaner` (known as
    csv-cleaner), and two `parser`s (known as pdf.parser and csv.parser)."""
    directory_skill(library, f"web/{CLEANER}")
    directory_skill(library, "pdf/parser")
    directory_skill(library, "csv/parser")
    api: Served = await served()
    assert sorted(api.registry.names) == [CLEANER, "csv.parser", "pdf.parser"]
    for name in (CLEANER, "parser"):
        name_taken(await post_content(api, name), name=name, path=name, owner="directory skill")
    assert await stored_keys(api) == []


async def test_a_grandchild_clash_is_refused(served: Callable[..., Any], library: Path) -> None:
    directory_skill(library, CLEANER)
    api: Served = await served()
    refused = await upload(api, tree_zip("report-kit", "stage", f"stage/{CLEANER}"))
    name_taken(refused, name=CLEANER, path=f"report-kit/stage/{CLEANER}", owner="directory")
    assert await stored_keys(api) == []


async def test_another_uploads_skills_are_owned_at_any_depth(served: Callable[..., Any]) -> None:
    api: Served = await served()
    first = await upload(api, tree_zip("kit-a", "shared", "shared/deep"))
    assert first.status_code == 201, first.text
    kept = await stored_keys(api)

    owner = "the uploaded skill 'kit-a' (its child skill at 'kit-a/shared')"
    name_taken(
        await upload(api, tree_zip("kit-b", "shared")),
        name="shared",
        path="kit-b/shared",
        owner=owner,
    )
    deep_owner = "the uploaded skill 'kit-a' (its child skill at 'kit-a/shared/deep')"
    name_taken(
        await upload(api, tree_zip("kit-b", "x/deep")),
        name="deep",
        path="kit-b/x/deep",
        owner=deep_owner,
    )
    # Its child's name as the top of a ZIP or of a text upload; its top's name as a child.
    name_taken(await upload(api, tree_zip("shared")), name="shared", path="shared", owner=owner)
    name_taken(await post_content(api, "deep"), name="deep", path="deep", owner=deep_owner)
    name_taken(
        await upload(api, tree_zip("kit-b", "kit-a")),
        name="kit-a",
        path="kit-b/kit-a",
        owner="the uploaded skill 'kit-a'",
    )
    assert await stored_keys(api) == kept
    assert api.registry.owner_of("shared").source == "kit-a"

    # A disabled upload keeps its names; a deleted one frees them.
    assert (await api.client.patch("/v1/skills/kit-a", json={"enabled": False})).is_success
    name_taken(
        await upload(api, tree_zip("kit-b", "shared")),
        name="shared",
        path="kit-b/shared",
        owner=owner,
    )
    assert (await api.client.delete("/v1/skills/kit-a")).status_code == 204
    assert (await upload(api, tree_zip("kit-b", "shared"))).status_code == 201
    assert api.registry.owner_of("shared").source == "kit-b"


async def test_simultaneous_uploads_cannot_both_claim_a_free_name(
    served: Callable[..., Any],
) -> None:
    api: Served = await served()
    answers = await asyncio.gather(
        *(upload(api, tree_zip(f"kit-{n}", "shared")) for n in range(4)),
        post_content(api, "shared"),
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201, 409, 409, 409, 409], [a.text for a in answers]
    holders = [s for s in api.registry if s.name == "shared"]
    assert len(holders) == 1


async def test_two_skills_of_one_name_in_one_package_are_refused(
    served: Callable[..., Any],
) -> None:
    api: Served = await served()
    refused = await upload(api, tree_zip("kit", "a/dup", "b/dup"))
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"] == PROBLEM
    assert "duplicate skill name 'dup'" in refused.json()["detail"]
    assert await stored_keys(api) == []


async def test_a_new_version_of_ones_own_upload_keeps_its_children(
    served: Callable[..., Any],
) -> None:
    api: Served = await served()
    first = await upload(api, tree_zip("kit", "helper", "helper/deep"))
    assert first.status_code == 201, first.text
    second = await upload(api, tree_zip("kit", "helper", "helper/deep", marker=" v2"))
    assert second.status_code == 201, second.text
    assert second.json()["latest"] != first.json()["latest"]
    third = await post_content(api, "kit")  # the text form replaces it too
    assert third.status_code == 201, third.text
    assert "helper" not in api.registry
    again = await upload(api, tree_zip("kit", "helper", marker=" v3"))
    assert again.status_code == 201, again.text
    assert api.registry.owner_of("helper").source == "kit"
    assert "v3" in api.registry.get("helper").body


# -- runs -----------------------------------------------------------------------------------


async def test_a_run_names_a_deleted_skill(served: Callable[..., Any]) -> None:
    api: Served = await served()
    assert (await post_content(api, "greeter")).status_code == 201
    agent_id = await make_agent(api, "greeter")
    assert (await api.client.delete("/v1/skills/greeter")).status_code == 204
    unavailable(await start_run(api, agent_id), skill="greeter", reason="deleted")
    assert api.engine.started == []
    assert await api.store.list("runs/") == []


async def test_a_run_names_a_disabled_uploaded_skill(served: Callable[..., Any]) -> None:
    api: Served = await served()
    assert (await post_content(api, "greeter")).status_code == 201
    agent_id = await make_agent(api, "greeter")
    assert (await api.client.patch("/v1/skills/greeter", json={"enabled": False})).is_success
    detail = unavailable(await start_run(api, agent_id), skill="greeter", reason="disabled")
    assert "PATCH /v1/skills/greeter" in detail
    assert api.engine.started == []


async def test_a_run_names_a_disabled_directory_skill(
    served: Callable[..., Any], library: Path
) -> None:
    """Before, a skill switched off by SKILLS__DISABLED was left out of the run silently."""
    directory_skill(library, CLEANER)
    directory_skill(library, "other")
    api: Served = await served(disabled=(CLEANER,))
    agent_id = await make_agent(api, CLEANER, "other")
    detail = unavailable(await start_run(api, agent_id), skill=CLEANER, reason="disabled")
    assert "SKILLS__DISABLED" in detail
    assert api.engine.started == []


async def test_a_run_names_a_skill_shadowed_by_a_later_directory_skill(
    served: Callable[..., Any],
) -> None:
    """An upload the agent listed; then the operator adds a directory skill of that name,
    which the registry gives the name to. The run says so instead of swapping skills."""
    api: Served = await served()
    assert (await post_content(api, "greeter")).status_code == 201
    agent_id = await make_agent(api, "greeter")
    directory_skill(api.library, "greeter")
    await api.refresh()
    assert api.registry.owner_of("greeter").kind == "directory"
    detail = unavailable(await start_run(api, agent_id), skill="greeter", reason="shadowed")
    assert "both claim the name" in detail
    assert api.engine.started == []


async def test_a_child_skill_listed_by_an_agent_is_pinned(
    served: Callable[..., Any], library: Path
) -> None:
    """A child is a valid standalone skill: an agent that lists it alone gets it (before, it
    was dropped because its parent was not listed), and a disabled child of a listed tree
    is left out as the run would not see it."""
    parent = write_skill(library / "tree", description=DESCRIPTION)
    write_skill(parent / "tree-child", description=DESCRIPTION)
    write_skill(parent / "tree-child-off", description=DESCRIPTION)
    api: Served = await served(disabled=("tree-child-off",))
    child_agent = await make_agent(api, "tree-child")
    started = await start_run(api, child_agent)
    assert started.status_code == 201, started.text
    assert [s["name"] for s in started.json()["skills"]] == ["tree-child"]
    assert await api.store.stat(
        keys.skill_package_key("tree-child", api.registry.get("tree-child").version)
    )

    body = {"name": "tree-user", "instruction": "Work.", "skill_ids": ["tree"]}
    tree_agent = (await api.client.post("/v1/agents/", json=body)).json()["id"]
    started = await start_run(api, tree_agent)
    assert started.status_code == 201, started.text
    assert [(s["name"], s["parent"]) for s in started.json()["skills"]] == [
        ("tree", None),
        ("tree-child", "tree"),
    ]
