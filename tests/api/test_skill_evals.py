"""``/v1/skills/{name}/evals`` over real HTTP on the direct engine (the scripted model, a fake
sandbox): a batch started (202), followed while it runs, its report read as JSON, Markdown
and a self-contained HTML page under a strict CSP, the skill's batches listed, and each
refusal a problem+json answer, the name and the batch id checked before any store read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import skill_evals, skills
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider
from tests.conftest import write_skill

TOKEN = "evals-token"
PROBLEM = "application/problem+json"
SKILL = "greeter"
EVALS = {
    "skill_name": SKILL,
    "evals": [
        {"id": 1, "prompt": "Greet Ada.", "checks": [{"type": "answer_contains", "text": "Hi"}]},
        {"id": 2, "prompt": "Greet Bob.", "checks": [{"type": "answer_contains", "text": "Yo"}]},
    ],
}


class CountingStore(LocalArtifactStore):
    """A local store that counts its reads."""

    reads = 0

    async def get_bytes(self, ref: Any) -> bytes:  # type: ignore[override]
        self.reads += 1
        return await super().get_bytes(ref)

    async def stat(self, key: str) -> Any:
        self.reads += 1
        return await super().stat(key)


class GatedProvider(RecordingProvider):
    """Answers once its gate opens (open unless a test closes it)."""

    def __init__(self, inner: ScriptedProvider) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()
        self.gate.set()

    async def complete(self, request):  # type: ignore[no-untyped-def]
        await self.gate.wait()
        return await super().complete(request)


@dataclass
class Api:
    client: httpx.AsyncClient
    store: CountingStore
    provider: GatedProvider


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    async with served(tmp_path) as served_api:
        yield served_api


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[Api]:
    """The skill and eval routes over real HTTP, on a direct engine over the scripted model."""
    library = tmp_path / "library"
    write_skill(
        library / SKILL,
        description="Greets people. Use when someone is to be greeted.",
        files={"evals/evals.json": json.dumps(EVALS)},
    )
    write_skill(library / "plain", description="Does a thing. Use when testing.")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store = CountingStore(tmp_path / "store")
    provider = GatedProvider(ScriptedProvider.from_yaml("turns: [{say: 'Hi there'}]"))
    services = AgentServices(
        settings=settings,
        registry=SkillRegistry.from_scan(SkillScanner([library]).scan()),
        store=store,
        provider=provider,
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    app = create_api(
        settings,
        store=store,
        routers=[skills.router, skill_evals.router],
        on_startup=[skills.open_skills, skill_evals.open_evals(engine)],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            yield Api(client, store, provider)


async def _report(api: Api, url: str) -> dict[str, Any]:
    for _ in range(400):
        answer = await api.client.get(url)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        if body["status"] not in ("running", "stopped"):
            return body
        await asyncio.sleep(0.02)
    pytest.fail("the batch never wrote its report")


async def test_a_batch_is_started_and_its_report_read_in_every_form(api: Api) -> None:
    started = await api.client.post(f"/v1/skills/{SKILL}/evals", json={"baseline": True})
    assert started.status_code == 202, started.text
    body = started.json()
    assert body["skill"] == SKILL
    assert body["status"] == "running"
    assert body["jobs"] == 4
    assert body["batch_id"].startswith("eval-")
    assert body["status_url"] == f"/v1/skills/{SKILL}/evals/{body['batch_id']}"

    report = await _report(api, body["status_url"])
    assert report["status"] == "completed"
    assert report["batch_id"] == body["batch_id"]
    assert len(report["jobs"]) == 4
    rates = {v["variant"]: v["pass_rate"] for v in report["variants"]}
    assert rates == {"skill": 0.5, "baseline": 0.5}  # "Hi there" holds Hi, never Yo

    markdown = await api.client.get(body["status_url"], params={"format": "markdown"})
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert f"# Evals of {SKILL}" in markdown.text

    page = await api.client.get(body["status_url"], params={"format": "html"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == skill_evals.CSP
    assert page.text.lstrip().lower().startswith("<!doctype html")

    odd = await api.client.get(body["status_url"], params={"format": "pdf"})
    assert odd.status_code == 422


async def test_a_running_batch_answers_its_progress(api: Api) -> None:
    api.provider.gate.clear()
    started = (await api.client.post(f"/v1/skills/{SKILL}/evals", json={})).json()
    for _ in range(200):
        running = (await api.client.get(started["status_url"])).json()
        if running["status"] == "running" and running["progress"]["running"]:
            break
        await asyncio.sleep(0.02)
    assert running["status"] == "running"
    assert running["progress"]["jobs"] == 2
    assert running["progress"]["finished"] == 0
    assert "0 of 2 jobs graded" in running["detail"]
    not_yet = await api.client.get(started["status_url"], params={"format": "html"})
    assert not_yet.status_code == 404
    api.provider.gate.set()
    assert (await _report(api, started["status_url"]))["status"] == "completed"


async def test_the_skills_batches_are_listed_newest_first(api: Api) -> None:
    ids = []
    for body in ({}, {"repeat": 2}):
        started = (await api.client.post(f"/v1/skills/{SKILL}/evals", json=body)).json()
        await _report(api, started["status_url"])
        ids.append(started["batch_id"])
    listed = await api.client.get(f"/v1/skills/{SKILL}/evals")
    assert listed.status_code == 200
    rows = listed.json()
    assert sorted(row["batch_id"] for row in rows) == sorted(ids)
    assert [row["created_at"] for row in rows] == sorted(
        (row["created_at"] for row in rows), reverse=True
    )
    by_id = {row["batch_id"]: row for row in rows}
    assert by_id[ids[1]]["jobs"] == 4
    assert by_id[ids[1]]["variants"] == ["skill"]
    assert by_id[ids[1]]["status"] == "completed"
    assert (await api.client.get("/v1/skills/plain/evals")).json() == []


async def test_what_cannot_be_is_refused_before_the_store_is_read(api: Api) -> None:
    before = api.store.reads
    for url in (
        "/v1/skills/ghost/evals",
        "/v1/skills/ghost/evals/eval-20261207-000000-abcdef",
        f"/v1/skills/{SKILL}/evals/not-a-batch",
        f"/v1/skills/{SKILL}/evals/eval-..%2F..%2Fsecrets",
    ):
        answer = await api.client.get(url)
        assert answer.status_code == 404, (url, answer.text)
        assert answer.headers["content-type"] == PROBLEM
    refused = await api.client.post("/v1/skills/ghost/evals", json={})
    assert refused.status_code == 404
    assert refused.headers["content-type"] == PROBLEM
    assert api.store.reads == before


async def test_bad_requests_are_problems(api: Api) -> None:
    cases = [
        ("plain", {}, 422, "has no evals/evals.json"),
        (SKILL, {"repeat": 0}, 422, "repeat"),
        (SKILL, {"concurrency": 65}, 422, "concurrency"),
        (SKILL, {"surprise": True}, 422, "surprise"),
        (SKILL, {"version": "xyz"}, 422, "version"),
        (SKILL, {"version": "0123abcd"}, 404, "no version 0123abcd"),
        (SKILL, {"model": "no-such-profile"}, 422, "no-such-profile"),
    ]
    for name, body, code, said in cases:
        answer = await api.client.post(f"/v1/skills/{name}/evals", json=body)
        assert answer.status_code == code, (body, answer.text)
        assert answer.headers["content-type"] == PROBLEM
        assert said in answer.json()["detail"], answer.json()
    unknown = await api.client.get(f"/v1/skills/{SKILL}/evals/eval-20261207-000000-abcdef")
    assert unknown.status_code == 404
    assert "no eval batch eval-20261207-000000-abcdef" in unknown.json()["detail"]


async def test_a_batch_running_when_the_api_stops_is_cancelled_with_its_report(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as api:
        api.provider.gate.clear()
        started = (await api.client.post(f"/v1/skills/{SKILL}/evals", json={})).json()
        for _ in range(200):
            body = (await api.client.get(started["status_url"])).json()
            if body["status"] == "running" and body["progress"]["running"]:
                break
            await asyncio.sleep(0.02)
    stored = tmp_path / "store" / "evals" / SKILL / started["batch_id"] / "report.json"
    assert json.loads(stored.read_text())["status"] == "cancelled"


class _Unanswered:
    """A batch that runs while no worker answers for its progress (Temporal)."""

    def __init__(self, *, runs: bool) -> None:
        self._runs = runs

    async def progress(self, batch_id: str) -> None:
        return None

    async def runs(self, batch_id: str) -> bool:
        return self._runs


@pytest.mark.parametrize(("runs", "status"), [(True, "running"), (False, "stopped")])
async def test_a_batch_whose_progress_is_untold_is_running_only_while_it_runs(
    tmp_path: Path, runs: bool, status: str
) -> None:
    from skillweave.evals import EvalBatch, EvalCase, store

    class _State:
        pass

    state = _State()
    state.store = LocalArtifactStore(tmp_path / "store")  # type: ignore[attr-defined]
    batch = EvalBatch(
        batch_id="eval-20261207-000000-abcdef",
        skill=SKILL,
        version="a" * 64,
        cases=(EvalCase(id="1", prompt="Greet Ada.", expectations=("Hi",)),),
        created_at="2026-12-07T00:00:00Z",
    )
    await store.save_batch(state.store, batch)  # type: ignore[attr-defined]

    answer = await skill_evals._without_report(
        SKILL,
        batch.batch_id,
        state,
        _Unanswered(runs=runs),
        "json",  # type: ignore[arg-type]
    )

    assert answer.status == status
    assert answer.progress is None
    assert ("no worker answered" in answer.detail) is runs
