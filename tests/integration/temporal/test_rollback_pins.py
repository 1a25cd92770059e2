"""Rollback while a run that pinned the newer version goes on (issue 45, must show), on both
engines (the direct engine in-process, Temporal through the dev server and a worker), with the
real store, audit log, manager and sandboxes: two versions of a skill whose script prints its
version are stored; a run whose agent pins the newer (``name@PREFIX``) answers once and waits
for a follow-up; the skill is rolled back to the older version and the library reloaded; told
to go on, the run activates and runs the newer version; the next run gets the older one."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.skills import SkillLibrary, build_package
from skillweave.skills.stored import StoredSkills, rollback_check
from skillweave.storage.audit import AuditLog
from tests.conftest import write_skill
from tests.integration.temporal.harness import EngineKind, Stack, kind_is, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")


def script_of(name: str, *, waits: bool) -> str:
    """Activate `name`, run its script, answer with the output (after a first answer and a
    follow-up when `waits`)."""
    first = '  - say: "Ready when you are."\n' if waits else ""
    return (
        "turns:\n"
        + first
        + f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {name}}}}}]\n"
        f"  - tool_calls: [{{name: run_skill_script, arguments: {{skill: {name},"
        " script: scripts/version.py}}]\n"
        '  - say: "{{last_result}}"\n'
        "    expect: {tool_results: [{not_error: true}]}\n"
    )


def probe(root: Path, name: str, edition: str) -> bytes:
    folder = write_skill(
        root / edition / name,
        description=f"Says which edition it is ({edition}). Use when asked for the edition.",
        files={"scripts/version.py": f"print('EDITION-{edition.upper()}')\n"},
    )
    return build_package(folder)


async def test_a_rollback_never_changes_a_running_run_and_the_next_run_gets_it(
    stack: Stack, engine_kind: EngineKind, tmp_path: Path
) -> None:
    name = f"edition-probe-{uuid.uuid4().hex[:8]}"
    stored = StoredSkills(stack.store)
    older = (await stored.add_package(probe(tmp_path, name, "one"))).latest
    newer = (await stored.add_package(probe(tmp_path, name, "two"))).latest
    library = SkillLibrary(
        stack.settings.skills, dirs=[], store=stack.store, folder=tmp_path / "uploaded"
    )
    registry = await library.reload()
    assert registry.get(name).version == newer
    served = replace(stack, registry=registry)
    pinned = AgentSpec(skills=(f"{name}@{newer[:10]}",), follow_up_seconds=10)

    async with open_engine(engine_kind, served, script_of(name, waits=True)) as harness:
        services = harness.services
        assert services is not None
        run = await harness.start("Which edition?", agent=pinned)
        await harness.wait_event(run, kind_is("answered"))  # waiting for a follow-up
        audit = AuditLog(stack.store, actor="tester")
        done = await stored.rollback(
            name, check=rollback_check(stack.store, stack.settings.skills, audit)
        )
        await audit.aclose()
        assert (done.previous, done.version) == (newer, older)
        services.use_registry(await library.reload())  # what a worker's reload does
        assert services.registry.get(name).version == older
        reply = await harness.follow_up(run, "Go on.")
        await harness.engine.cancel(run)  # not waiting for the idle close
        events = await harness.all_events(run)

    assert "EDITION-TWO" in reply
    [activated] = [e for e in events if e.kind == "skill_activated"]
    assert activated.version == newer
    rollbacks = [r async for r in AuditLog(stack.store).read(event="rollback", skill=name)]
    assert [(r.actor, r.details["from"], r.details["to"]) for r in rollbacks] == [
        ("tester", newer, older)
    ]

    unpinned = AgentSpec(skills=(name,))
    async with open_engine(
        engine_kind, replace(stack, registry=services.registry), script_of(name, waits=False)
    ) as harness:
        result, _ = await harness.run("Which edition now?", agent=unpinned)
    assert result.status == "completed", result.reason
    assert result.active_skills == {name: older}
    assert "EDITION-ONE" in (result.answer or "")
