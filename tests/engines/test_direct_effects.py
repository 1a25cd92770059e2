"""The direct engine makes each side effect from its descriptor: the services' method named as
it, through the wire models, and it refuses services that miss one when it is built.

A side effect added in a test and run on both engines: tests/integration/temporal/
test_new_side_effect.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.agent.effect_models import SearchInput, ToolOutcome
from skillweave.agent.effects import EFFECTS, SEARCH_SKILLS, SideEffect
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.engines.direct import DirectRuntime
from skillweave.errors import ConfigError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library


def _services(tmp_path: Path, cls: type[AgentServices] = AgentServices) -> AgentServices:
    store = LocalArtifactStore(tmp_path / "store")
    return cls(
        settings=Settings(_env_file=None),  # type: ignore[call-arg]
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml("turns: [{say: unused}]"),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )


def test_the_services_implement_every_side_effect_but_the_workers_own() -> None:
    made_by_services = {e.name for e in EFFECTS if e.implemented_by == "services"}
    assert made_by_services == {e.name for e in EFFECTS} - {"run_limits"}
    for name in made_by_services:
        assert callable(getattr(AgentServices, name)), name


def test_services_without_a_side_effect_fail_when_the_engine_is_built(tmp_path: Path) -> None:
    class Partial(AgentServices):
        search_skills = None  # type: ignore[assignment]

    services = _services(tmp_path, Partial)
    with pytest.raises(ConfigError, match=r"^Partial implements no search_skills: "):
        DirectEngine(services)
    with pytest.raises(ConfigError, match=r"^Partial implements no search_skills: "):
        DirectRuntime(services)


async def test_a_call_is_the_method_named_as_its_effect_over_the_wire(tmp_path: Path) -> None:
    services = _services(tmp_path)
    seen: list[SearchInput] = []

    async def search(request: SearchInput) -> ToolOutcome:
        seen.append(request)
        return ToolOutcome(seq=request.seq, chars=0, summary="none")

    services.search_skills = search  # type: ignore[assignment,method-assign]
    request = SearchInput(run_id="r1", query="words", seq=3, tool_call_id="call-1")
    outcome = await DirectRuntime(services).call(SEARCH_SKILLS, request)
    assert outcome == ToolOutcome(seq=3, chars=0, summary="none")
    # The request crossed the wire: an equal copy, not the loop's own object.
    assert seen == [request]
    assert seen[0] is not request


async def test_an_effect_that_answers_nothing_answers_none(tmp_path: Path) -> None:
    services = _services(tmp_path)

    async def forget(request: SearchInput) -> None:
        return None

    services.forget = forget  # type: ignore[attr-defined]
    forgetting = SideEffect[SearchInput, None](
        name="forget",
        input=SearchInput,
        output=None,
        summary=lambda request, state: "forget",
        retry_name=lambda request: "forget",
    )
    request = SearchInput(run_id="r1", query="words", seq=3, tool_call_id="call-1")
    assert await DirectRuntime(services).call(forgetting, request) is None
