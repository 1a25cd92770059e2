"""Installs an agent asks for (issue 45, part 3), on both engines, with the real Temporal dev
server, the real manager and sandboxes, and a registry of a local git repository: a run
searches its library (nothing fits), finds a skill in the registry, asks for it, a person
approves it through the run's approval channel (the Temporal signal; the direct engine's
approval), it is installed and activated, and its script runs in a sandbox. The same run
with a refusal installs nothing (on Temporal, the request is read and refused through the
API: ``GET /v1/runs/{id}/status``, ``POST /v1/runs/{id}/approvals``). On Temporal, a
worker killed during the install leaves exactly one install when the run completes on the
next worker (there the request is read and approved with ``skillweave runs show`` and
``skillweave runs approve``, as a person types them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from pathlib import Path

import httpx
import pytest
import yaml
from pydantic import SecretStr
from temporalio.api.sdk.v1 import WorkflowMetadata

from mcp_manager.server import LoopbackServer
from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalDecision
from skillweave.agent.spec import AcquisitionOptions, CatalogOptions
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import RegistrySource, Settings
from skillweave.engines import RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.skills.stored import StoredSkills
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog
from tests.engines.registry_skills import (
    LABEL,
    TALLY_PY,
    registry_settings,
    skill_repository,
    write_index,
)
from tests.integration.harness import eventually
from tests.integration.temporal.harness import (
    TOOLS,
    EngineKind,
    Stack,
    kind_is,
    open_engine,
    unique,
)
from tests.integration.temporal.test_followers_outlive_workers import cli_env
from tests.integration.temporal.test_worker_crash import SKILLWEAVE, _final_attempts, worker_rig

pytestmark = pytest.mark.asyncio(loop_scope="session")

ASKING = AgentSpec(
    skills=(TOOLS,),  # the allowlist does not name the registry skill
    catalog=CatalogOptions(mode="auto"),
    acquisition=AcquisitionOptions(enabled=True),
)


def asking(name: str, *, approved: bool) -> str:
    """The model: search the library, find `name` in the registry, ask for it, then use it
    (approved) or say it could not (refused)."""
    start = f"""
turns:
  - tool_calls: [{{name: search_skills, arguments: {{query: tally the words of a text}}}}]
    expect: {{tools_exclude: [find_skills, request_skill]}}
  - tool_calls: [{{name: find_skills, arguments: {{query: tally the words of a text}}}}]
    expect: {{tools_include: [find_skills], tools_exclude: [request_skill]}}
  - tool_calls: [{{name: request_skill, arguments: {{name: {name}}}}}]
    expect:
      tool_results: [{{not_error: true, contains: "registry: {LABEL}"}}]
      tools_include: [request_skill]
"""
    if not approved:
        return (
            start
            + """
  - say: "Not installed."
    expect:
      tool_results: [{is_error: true, contains: "was not approved: not this one. Do not request"}]
"""
        )
    return (
        start
        + f"""
  - tool_calls: [{{name: activate_skill, arguments: {{name: {name}}}}}]
    expect: {{tool_results: [{{not_error: true, contains: "Installed '{name}'"}}]}}
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {name}, script: scripts/tally.py, args: [one, two, three]}}}}
    expect: {{tool_results: [{{not_error: true, contains: '<skill_content name="{name}">'}}]}}
  - say: "{{{{last_result}}}}"
    expect: {{tool_results: [{{not_error: true, contains: "tally: 3"}}]}}
"""
    )


def registry_of(tmp_path: Path, name: str) -> tuple[dict[str, object], Path]:
    """A registry listing the skill `name` (from a new git repository): its skills settings."""
    repo = skill_repository(tmp_path / "library", {name: {"scripts/tally.py": TALLY_PY}})
    index = write_index(repo, tmp_path / "index.json")
    return registry_settings(index), repo


def with_registry(stack: Stack, skills: dict[str, object]) -> Stack:
    settings = stack.settings.model_copy(
        update={"skills": stack.settings.skills.model_copy(update=_parsed(skills))}
    )
    return dataclasses.replace(stack, settings=settings)


def _parsed(skills: dict[str, object]) -> dict[str, object]:
    """`skills` as model fields (``model_copy`` does not validate)."""
    return {
        "registries": [RegistrySource.model_validate(r) for r in skills["registries"]],  # type: ignore[attr-defined]
        "registry_cache_seconds": skills["registry_cache_seconds"],
        "registry_cache_dir": Path(str(skills["registry_cache_dir"])),
    }


async def _cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    """``skillweave ARGS`` in a subprocess, as a user types it; its output (exit 0)."""
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, f"skillweave {' '.join(args)}: {out.decode()}{err.decode()}"
    return out.decode()


async def install_records(store: ArtifactStore, name: str) -> list[str]:
    log = AuditLog(store)
    return [r.event async for r in log.read(skill=name) if r.event in ("install", "update")]


async def test_a_run_finds_asks_for_is_approved_installs_and_uses_a_registry_skill(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    name = f"tally-{engine_kind}-{uuid.uuid4().hex[:6]}"
    skills, _ = registry_of(tmp_path, name)
    served = with_registry(stack, skills)
    async with open_engine(engine_kind, served, asking(name, approved=True)) as harness:
        run_id = await harness.start("How many words is 'one two three'?", agent=ASKING)
        asked = await harness.wait_event(run_id, kind_is("approval_requested"))
        assert asked.detail.startswith(f"install the skill {name} version ")
        assert f"from {LABEL} (" in asked.detail
        if engine_kind == "temporal":
            view = await harness.status(run_id)
            waiting = view.awaiting_approval
            assert waiting is not None
            assert (waiting.action, waiting.skill) == ("install", name)
            assert waiting.origin is not None
            assert waiting.origin.registry == LABEL
            assert waiting.origin.commit is not None
            assert waiting.report  # the scan, for the approver
            assert waiting.signature == "unsigned"
            metadata = await harness.handle(run_id).query(
                "__temporal_workflow_metadata", result_type=WorkflowMetadata
            )
            assert f"**Waiting for approval:** install the skill {name}" in (
                metadata.current_details
            )
        await harness.engine.approve(run_id, ApprovalDecision(approved=True, by="ops"))
        result = await harness.engine.result(run_id)
        events = await harness.all_events(run_id)

    assert result.status == "completed", result.reason
    assert "tally: 3" in (result.answer or "")
    [installed] = [e for e in events if e.kind == "skill_installed"]
    assert installed.status == "installed"
    assert [(e.skill, e.version) for e in events if e.kind == "skill_activated"] == [
        (name, installed.version)
    ]
    assert [e.status for e in events if e.kind == "script_ran"] == ["succeeded"]
    stored = await StoredSkills(stack.store).get(name)
    assert stored is not None
    assert (stored.latest, stored.enabled) == (installed.version, True)
    origin = stored.latest_version.origin
    assert origin is not None
    assert (origin.kind, origin.path) == ("git", f"skills/{name}")
    assert origin.commit is not None
    assert await install_records(stack.store, name) == ["install"]
    log = AuditLog(stack.store)
    [record] = [r async for r in log.read(skill=name, event="install")]
    assert (record.actor, record.details["registry"]) == (f"run {run_id}", LABEL)


async def test_a_refused_request_is_a_tool_error_and_installs_nothing(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    name = f"tally-no-{engine_kind}-{uuid.uuid4().hex[:6]}"
    skills, _ = registry_of(tmp_path, name)
    served = with_registry(stack, skills)
    async with open_engine(engine_kind, served, asking(name, approved=False)) as harness:
        run_id = await harness.start("How many words is 'one two three'?", agent=ASKING)
        await harness.wait_event(run_id, kind_is("approval_requested"))
        if engine_kind == "temporal":  # the API's door: what is asked, and the decision
            await _refused_through_the_api(harness.temporal, stack, run_id, name)
        else:
            decision = ApprovalDecision(approved=False, note="not this one", by="ops")
            await harness.engine.approve(run_id, decision)
        result = await harness.engine.result(run_id)
        events = await harness.all_events(run_id)

    assert result.status == "completed", result.reason
    assert [e.status for e in events if e.kind == "approval_decided"] == ["denied"]
    assert not [e for e in events if e.kind == "skill_installed"]
    assert await StoredSkills(stack.store).get(name) is None
    assert await install_records(stack.store, name) == []


async def _refused_through_the_api(
    engine: TemporalEngine, stack: Stack, run_id: str, name: str
) -> None:
    """``GET /v1/runs/{id}/status`` shows the install asked for; ``POST …/approvals`` refuses."""
    token = "acquisition-token"
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(token)},
        skills={"uploaded_dir": str(stack.settings.skills.uploaded_dir)},
    )
    app = create_api(
        settings,
        store=stack.store,
        routers=[skills_router, agents_router, runs_router],
        on_startup=[open_skills, open_agents, open_runs(engine)],
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as api,
    ):
        status = await api.get(f"/v1/runs/{run_id}/status")
        assert status.status_code == 200, status.text
        asked = status.json()["awaiting_approval"]
        assert (asked["action"], asked["skill"]) == ("install", name)
        assert asked["origin"]["registry"] == LABEL
        assert asked["origin"]["path"] == f"skills/{name}"
        assert len(asked["version"]) == 64
        assert asked["signature"] == "unsigned"
        assert asked["decision"] in ("clean", "warn")
        decided = await api.post(
            f"/v1/runs/{run_id}/approvals", json={"approved": False, "note": "not this one"}
        )
        assert decided.status_code < 300, decided.text


REVIEW_SECONDS = 4.0
"""How long the (scripted) model review of a version takes: the install is in flight that
long, time to kill its worker."""


async def test_a_worker_killed_during_the_install_leaves_exactly_one_install(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    name = f"tally-killed-{uuid.uuid4().hex[:6]}"
    skills, _ = registry_of(tmp_path, name)
    review = tmp_path / "reviewer.yaml"
    review.write_text(
        yaml.safe_dump(
            {
                "model": "reviewer",
                "turns": [
                    {
                        "delay_seconds": REVIEW_SECONDS,
                        "tool_calls": [
                            {
                                "name": "report_findings",
                                "arguments": {"verdict": "clean", "findings": []},
                            }
                        ],
                    }
                ],
            }
        )
    )
    env = {
        "SKILLS__REGISTRIES": json.dumps(skills["registries"]),
        "SKILLS__REGISTRY_CACHE_SECONDS": "0",
        "SKILLS__REGISTRY_CACHE_DIR": str(skills["registry_cache_dir"]),
        "SKILLS__SCAN__REVIEW_MODEL": "reviewer",
        "SKILLS__SCAN__REVIEW_TIMEOUT_SECONDS": str(REVIEW_SECONDS * 3),
        "MODEL__PROFILES__REVIEWER__PROVIDER": "scripted",
        "MODEL__PROFILES__REVIEWER__NAME": str(review),
    }
    async with worker_rig(stack, skill_dirs, tmp_path, asking(name, approved=True), **env) as rig:
        run_id = unique("acquire")
        await rig.engine.start(
            RunRequest(run_id=run_id, task="How many words is 'one two three'?", agent=ASKING)
        )

        async def waiting() -> bool:
            return (await rig.engine.status(run_id)).awaiting_approval is not None

        await eventually(waiting, timeout=60, what="the request waiting for approval")
        # A person reads what is asked and approves it, as they type it.
        env = cli_env(rig)
        shown = " ".join((await _cli(env, tmp_path, "runs", "show", run_id)).split())
        assert f"waiting for approval: install the skill {name} version " in shown, shown
        assert f"from {LABEL} (" in shown
        assert "; scan: " in shown
        approved = " ".join((await _cli(env, tmp_path, "runs", "approve", run_id)).split())
        assert approved.startswith(f"approved: run {run_id}: install the skill {name}"), approved
        await eventually(
            lambda: rig.in_flight(run_id, "install_skill"), timeout=30, what="the install"
        )
        rig.worker.kill()
        await rig.worker.start()
        result = await rig.engine.result(run_id)
        history = await stack.client.get_workflow_handle(workflow_id(run_id)).fetch_history()
        store = rig.store
        # Every door sees the one install: the library's listing and the audit log.
        listed = await _cli(env, tmp_path, "skills", "list")
        audited = await _cli(
            env, tmp_path, "audit", "show", "--skill", name, "--event", "install", "--json"
        )

    assert result.status == "completed", result.reason
    assert "tally: 3" in (result.answer or "")
    assert max(_final_attempts(history)["install_skill"]) >= 2  # the kill hit the install
    stored = await StoredSkills(store).get(name)
    assert stored is not None
    assert len(stored.versions) == 1
    assert await install_records(store, name) == ["install"]
    assert name in listed
    [record] = [json.loads(line) for line in audited.splitlines() if line.strip()]
    assert (record["run"], record["details"]["registry"]) == (run_id, LABEL)
    assert record["details"]["approved_by"].startswith("cli:")  # the person, as the CLI names them
