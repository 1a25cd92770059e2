"""The loop's side of installs an agent asks for (issue 45, part 3), with real services, store
and a registry of a local git repository; a scripted model and the fake sandbox.

When ``find_skills`` and ``request_skill`` are offered (off by default; ``on_miss``: once the
run searched its own library, or has no search), what is refused before anyone is asked (a
skill not found yet, one installed already), the person's decision (approved: installed,
pinned and activated although the agent's allowlist does not name it; refused: a tool error,
nothing stored), and how each step reads in every view.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec, event_line, parse_agent_spec
from skillweave.agent.acquisition import not_approved
from skillweave.agent.acquisitions import Acquisitions
from skillweave.agent.approvals import Approvals
from skillweave.agent.effect_models import ApprovalDecision, ApprovalRequest, RegistryOrigin
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, because
from skillweave.agent.spec import AcquisitionOptions, ApprovalOptions, CatalogOptions
from skillweave.agent.state import AgentState, FoundSkill
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.errors import AgentError, AgentSpecError
from skillweave.llm.messages import ToolCall
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills.stored import StoredSkills
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, Run, sample_library
from tests.engines.registry_skills import (
    LABEL,
    TALLY,
    registry_settings,
    skill_repository,
    write_index,
)
from workflows._details import current_details

ASKING = AgentSpec(
    skills=("notes",),  # the allowlist does not name the registry skill
    catalog=CatalogOptions(mode="auto"),
    acquisition=AcquisitionOptions(enabled=True, max_installs=1),
    approvals=ApprovalOptions(timeout_seconds=30),
)

FIND = f"""
turns:
  - tool_calls: [{{name: search_skills, arguments: {{query: tally words}}}}]
    expect: {{tools_exclude: [find_skills, request_skill]}}
  - tool_calls:
      - {{name: request_skill, arguments: {{name: {TALLY}}}}}
      - {{name: find_skills, arguments: {{query: tally the words of a text}}}}
    expect:
      tools_include: [find_skills]
      tools_exclude: [request_skill]
"""


def asking_script(decision_turns: str) -> str:
    return FIND + textwrap.indent(textwrap.dedent(decision_turns), "  ")


async def run_with_decision(
    tmp_path: Path, script: str, decision: ApprovalDecision | None, *, spec: AgentSpec = ASKING
) -> tuple[Run, Settings]:
    """Run `script` to its end on the direct engine, `decision` given to its approval."""
    repo = skill_repository(tmp_path / "library")
    index = write_index(repo, tmp_path / "index.json")
    settings = Settings(_env_file=None, skills=registry_settings(index))
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = FakeSandbox(store)
    provider = RecordingProvider(ScriptedProvider.from_yaml(script))
    services = AgentServices(
        settings=settings,
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=provider,
        model="scripted",
        sandbox=sandbox,  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    run_id = "run-acquisition"
    await engine.start(RunRequest(run_id=run_id, task="Tally 'a b c'.", agent=spec))

    async def decide() -> None:
        while decision is not None:
            try:
                await engine.approve(run_id, decision)
                return
            except AgentError:  # not waiting yet
                await asyncio.sleep(0.02)

    deciding = asyncio.create_task(decide())
    events = [event async for event in engine.events(run_id)]
    result = await engine.result(run_id)
    deciding.cancel()
    await services.aclose()
    return Run(result, events, engine, store, sandbox, provider), settings


async def test_an_approved_request_is_installed_pinned_and_used_in_the_same_run(
    tmp_path: Path,
) -> None:
    script = asking_script(
        f"""
          - tool_calls: [{{name: request_skill, arguments: {{name: {TALLY}}}}}]
            expect:
              tool_results:
                - {{is_error: true, contains: "no tool named 'request_skill'"}}
                - {{not_error: true, contains: "registry: {LABEL}"}}
              tools_include: [request_skill]
          - tool_calls:
              - {{name: activate_skill, arguments: {{name: {TALLY}}}}}
              - {{name: request_skill, arguments: {{name: {TALLY}}}}}
            expect: {{tool_results: [{{not_error: true, contains: "Installed '{TALLY}'"}}]}}
          - tool_calls:
              - {{name: run_skill_script,
                 arguments: {{skill: {TALLY}, script: scripts/tally.py, args: [a, b, c]}}}}
            expect:
              tool_results:
                - {{not_error: true, contains: '<skill_content name="{TALLY}">'}}
                - {{is_error: true, contains: "installed for this run already"}}
          - say: "{{{{last_result}}}}"
            expect: {{tool_results: [{{not_error: true, contains: "tally: 3"}}]}}
        """
    )
    run, settings = await run_with_decision(
        tmp_path, script, ApprovalDecision(approved=True, by="ops")
    )

    assert run.result.status == "completed", run.result.reason
    assert "tally: 3" in (run.result.answer or "")
    # Asked for before find_skills found it: not offered yet, so refused.
    refused = [e.detail for e in run.events if e.kind == "tool_refused"]
    assert "find_skills" in refused[0]
    [requested] = [e for e in run.events if e.kind == "skill_requested"]
    [installed] = [e for e in run.events if e.kind == "skill_installed"]
    assert (requested.status, installed.status) == ("checked", "installed")
    assert requested.version == installed.version
    version = installed.version
    assert version is not None
    [asked] = [e for e in run.events if e.kind == "approval_requested"]
    assert asked.detail.startswith(f"install the skill {TALLY} version {version[:12]} from lab (")
    assert "scan:" in asked.detail
    assert "signature: unsigned" in asked.detail
    activated = [(e.skill, e.version) for e in run.events if e.kind == "skill_activated"]
    assert activated == [(TALLY, version)]
    # Every view has a line for each new step.
    lines = [event_line(e).plain() for e in run.events]
    assert any(line.startswith(f"requested · {TALLY} @ {version[:12]} · checked") for line in lines)
    assert any(
        line.startswith(f"installed · {TALLY} @ {version[:12]} · installed") for line in lines
    )
    assert any(line.startswith("registries · 'tally the words") for line in lines)

    stored = await StoredSkills(run.store).get(TALLY)
    assert stored is not None
    assert (stored.latest, stored.enabled, len(stored.versions)) == (version, True, 1)
    origin = stored.latest_version.origin
    assert origin is not None
    assert (origin.kind, origin.path) == ("git", f"skills/{TALLY}")
    audit = AuditLog.from_settings(settings.audit, run.store)
    records = [r async for r in audit.read(skill=TALLY)]
    [install] = [r for r in records if r.event == "install"]
    assert install.run == run.result.run_id
    assert install.actor == f"run {run.result.run_id}"
    assert install.details["registry"] == LABEL
    assert install.details["approved_by"] == "ops"
    [approval] = [r for r in records if r.event == "approval"]
    assert (approval.actor, approval.details["decision"]) == ("ops", "installed")


async def test_a_refused_request_is_a_tool_error_and_installs_nothing(tmp_path: Path) -> None:
    script = asking_script(
        f"""
          - tool_calls: [{{name: request_skill, arguments: {{name: {TALLY}}}}}]
          - say: "Not installed."
            expect:
              tool_results:
                - {{is_error: true, contains: "was not approved: not this one. Do not request"}}
        """
    )
    run, _ = await run_with_decision(
        tmp_path, script, ApprovalDecision(approved=False, note="not this one", by="ops")
    )

    assert run.result.status == "completed", run.result.reason
    assert [e.status for e in run.events if e.kind == "approval_decided"] == ["denied"]
    assert not [e for e in run.events if e.kind == "skill_installed"]
    assert await StoredSkills(run.store).get(TALLY) is None


async def test_find_skills_is_offered_from_the_start_when_asked_to_and_never_when_off(
    tmp_path: Path,
) -> None:
    always = ASKING.model_copy(
        update={"acquisition": AcquisitionOptions(enabled=True, offer="always")}
    )
    script = """
turns:
  - say: "Nothing to do."
    expect: {tools_include: [find_skills], tools_exclude: [request_skill]}
"""
    run, _ = await run_with_decision(tmp_path / "always", script, None, spec=always)
    assert run.result.status == "completed", run.result.reason

    off = ASKING.model_copy(update={"acquisition": AcquisitionOptions()})
    script = """
turns:
  - tool_calls: [{name: search_skills, arguments: {query: tally words}}]
  - say: "Nothing found."
    expect: {tools_exclude: [find_skills, request_skill]}
"""
    run, _ = await run_with_decision(tmp_path / "off", script, None, spec=off)
    assert run.result.status == "completed", run.result.reason


@pytest.mark.parametrize("offer", ["on_miss", "always"])
async def test_a_run_without_search_is_offered_find_skills_at_once(
    tmp_path: Path, offer: str
) -> None:
    spec = AgentSpec(
        skills=("notes",),
        catalog=CatalogOptions(mode="all"),
        acquisition=AcquisitionOptions(enabled=True, offer=offer),  # type: ignore[arg-type]
    )
    script = """
turns:
  - say: "The whole catalog is in view."
    expect: {tools_include: [find_skills], tools_exclude: [search_skills]}
"""
    run, _ = await run_with_decision(tmp_path, script, None, spec=spec)
    assert run.result.status == "completed", run.result.reason


class _NoRuntime:
    """A runtime no call may reach: what is refused is refused before any side effect."""

    async def call(self, effect: object, request: object) -> object:
        raise AssertionError(f"{effect} was called")

    def now(self) -> float:
        return 0.0


async def test_what_the_run_may_not_ask_for_is_refused_before_any_side_effect() -> None:
    runtime = _NoRuntime()
    spec = ASKING
    journal = Journal(runtime.now, None)
    acquisitions = Acquisitions(
        runtime,  # type: ignore[arg-type]
        spec,
        journal,
        Approvals(runtime, spec, journal),  # type: ignore[arg-type]
        top_k=5,
    )
    state = AgentState(run_id="run-1", task="t", acquisition="on_miss", library_searched=True)
    state.found = {
        "other": FoundSkill(registry=LABEL, version="a" * 64),
        TALLY: FoundSkill(registry=LABEL, version="b" * 64),
    }
    state.acquired = {TALLY: "b" * 64}

    def call(name: str) -> ToolCall:
        return ToolCall(id="c", name="request_skill", arguments={"name": name})

    with pytest.raises(Refusal, match="installed for this run already"):
        await acquisitions.request(state, call(TALLY))
    with pytest.raises(Refusal, match="as many as its agent allows"):  # max_installs: 1
        await acquisitions.request(state, call("other"))
    with pytest.raises(Refusal, match="not a registry skill this run found"):
        await acquisitions.request(state, call("unknown"))


def test_the_spec_reads_acquisition_and_bounds_it() -> None:
    spec = parse_agent_spec(
        "acquisition: {enabled: true, registries: [lab], max_installs: 2, offer: always}"
    )
    assert spec.acquisition == AcquisitionOptions(
        enabled=True, registries=("lab",), max_installs=2, offer="always"
    )
    assert parse_agent_spec("name: a").acquisition.enabled is False
    for bad in ("max_installs: 0", "max_installs: 21", "offer: sometimes", "unknown: 1"):
        with pytest.raises(AgentSpecError, match="acquisition"):
            parse_agent_spec(f"acquisition: {{{bad}}}")


def test_the_temporal_ui_shows_what_is_asked_with_its_markdown_escaped() -> None:
    asked = ApprovalRequest(
        seq=3,
        skill=TALLY,
        script="",
        action="install",
        version="c" * 64,
        report="no findings",
        decision="clean",
        signature="unsigned",
        origin=RegistryOrigin(
            registry=LABEL, source="https://git.example/[click](https://evil.example)"
        ),
        timeout_seconds=60,
    )
    described = asked.describe()
    assert described == (
        f"install the skill {TALLY} version cccccccccccc from {LABEL} "
        "(https://git.example/[click](https://evil.example)); scan: no findings (clean); "
        "signature: unsigned"
    )
    details = current_details(
        AgentState(run_id="r", task="t"),
        phase="awaiting_approval",
        run=1,
        last_step="",
        awaiting=asked,
        last_error=None,
    )
    assert "\\[click\\](https://evil.example)" in details
    assert "[click](" not in details


def test_a_refusal_ends_the_persons_note_as_a_sentence() -> None:
    assert because("") == "."
    assert because("not today") == ": not today."
    assert because("Not on prod!") == ": Not on prod!"
    assert not_approved("x", "nope") == (
        "Installing 'x' was not approved: nope. Do not request it again unchanged."
    )


def test_the_reason_in_the_ui_details_is_text_not_markup() -> None:
    details = current_details(
        AgentState(run_id="r", task="t"),
        phase="failed",
        run=1,
        last_step="",
        awaiting=None,
        last_error="model server said: [log in](https://evil.example) ![x](https://evil.example/p)",
    )
    assert "\\[log in\\](https://evil.example)" in details
    assert "[log in](" not in details
    assert "![x](" not in details
