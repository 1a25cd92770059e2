"""The agent's model runs its run, on both engines: a run whose agent names a profile or
``provider:name`` gets that model, one worker serves runs of several models, a model the
worker cannot resolve fails the run at once, naming it, and an API agent's ``model_id`` is
checked when it is made and runs its runs.

The models are scripted (each script answers with its own name), behind the real engines: the
direct engine in-process and a Temporal worker on the dev server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillweave.agent import AgentSpec
from skillweave.config import ModelSettings
from skillweave.llm.factory import ModelProviders
from tests.api.test_runs import make_agent, sse
from tests.integration.harness import eventually
from tests.integration.temporal.harness import EngineKind, Stack, kind_is, open_engine, unique
from tests.integration.temporal.test_api_runs import api_client

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _script(folder: Path, name: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"model: {name}\nturns:\n  - say: answered by {name}\n", encoding="utf-8")
    return path


async def test_each_run_runs_on_the_model_its_agent_names(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    default = _script(tmp_path, "the-default")
    settings = ModelSettings(
        provider="scripted",
        name=str(default),
        profiles={
            "analyst": {"provider": "scripted", "name": str(_script(tmp_path, "analyst-model"))}
        },
        scripts_dir=tmp_path,  # a run's scripted:PATH is a script of the worker's folder
    )
    models = ModelProviders(settings)
    by_name = f"scripted:{_script(tmp_path, 'named-model')}"
    try:
        async with open_engine(engine_kind, stack, default.read_text(), models=models) as harness:
            plain, _ = await harness.run("Who answers?")
            profiled, events = await harness.run("Who answers?", agent=AgentSpec(model="analyst"))
            named, _ = await harness.run("Who answers?", agent=AgentSpec(model=by_name))
    finally:
        await models.aclose()

    assert (plain.status, plain.answer) == ("completed", "answered by the-default")
    assert (profiled.status, profiled.answer) == ("completed", "answered by analyst-model")
    assert (named.status, named.answer) == ("completed", "answered by named-model")
    # The run's events say which model answered.
    called = [e for e in events if kind_is("model_called")(e)]
    assert called
    assert all(e.model == "analyst-model" for e in called), called


async def test_a_model_the_worker_cannot_resolve_fails_the_run_naming_it(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    default = _script(tmp_path, "the-default")
    models = ModelProviders(ModelSettings(provider="scripted", name=str(default)))
    try:
        async with open_engine(engine_kind, stack, default.read_text(), models=models) as harness:
            result, events = await harness.run("Who answers?", agent=AgentSpec(model="nosuch"))
    finally:
        await models.aclose()

    assert result.status == "failed"
    assert result.reason is not None
    assert "unknown model profile 'nosuch'" in result.reason
    assert result.turns == 0
    assert not [e for e in events if kind_is("model_called")(e)]


async def test_an_api_agents_model_id_runs_its_run_and_the_record_names_it(
    stack: Stack, engine_kind: EngineKind, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """The bug this fixes: an agent made with a model_id completed on the server's model."""
    default = _script(tmp_path, "the-default")
    profiled = _script(tmp_path, "analyst-model")
    settings = ModelSettings(
        provider="scripted",
        name=str(default),
        profiles={"analyst": {"provider": "scripted", "name": str(profiled)}},
    )
    async with api_client(
        engine_kind, stack, default.read_text(), skill_dirs, tmp_path, model=settings
    ) as client:
        refused = await client.post(
            "/v1/agents/", json={"name": unique("a"), "instruction": "Go.", "model_id": "nosuch"}
        )
        assert refused.status_code == 422, refused.text
        assert "unknown model profile 'nosuch'" in refused.json()["detail"]

        agent_id = await make_agent(client, name=unique("analyst"), model_id="analyst")
        run = (
            await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Who answers?"})
        ).json()
        assert run["model"] == f"scripted:{profiled} (profile analyst)"
        events = await sse(client, f"/v1/runs/{run['id']}/events")
        called = [e["data"] for e in events if e["event"] == "model_called"]
        assert called
        assert [data["model"] for data in called] == ["analyst-model"] * len(called)

        async def ended() -> dict[str, Any] | None:
            record: dict[str, Any] = (await client.get(f"/v1/runs/{run['id']}")).json()
            return record if record["status"] != "running" else None

        record = await eventually(ended, timeout=30)
        assert record["status"] == "completed"
        assert record["result"]["answer"] == "answered by analyst-model"
