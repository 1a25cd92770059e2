"""A whole agent run through the direct engine and the real local sandbox pool.

The scripted model drives the bundled data toolkit: activate the parent and a child, read a
reference, profile a CSV in a sandbox (an artifact), activate the report skill (its tool is
registered from ``--help-json`` run in a sandbox) and feed it the profile's artifact, then
answer. Real manager on loopback, real executor processes, real store; no fakes.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.agent import AgentSpec
from skillweave.config import Settings, bundled_skills_dir
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

CSV = b"region,units,price\nnorth,3,9.5\nsouth,,12\neast,7,8.25\nwest,2,\n"

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: data-toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: csv-profiler}}]
    expect: {tool_results: [{contains: "<sub_skills>"}]}
  - tool_calls:
      - {name: read_skill_resource,
         arguments: {skill: csv-profiler, path: references/stats-format.md}}
    expect: {tools_include: [profile_csv]}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: csv-profiler, script: scripts/profile_csv.py,
                    args: [inputs/sales.csv], inputs: ["{{artifact:sales.csv}}"]}
  - tool_calls: [{name: activate_skill, arguments: {name: json-report}}]
    expect: {tool_results: [{not_error: true, contains: "stats.json"}]}
  - tool_calls:
      - name: render_stats_report
        arguments: {input_artifacts: ["{{artifact:stats.json}}"], title: Sales check}
    expect: {tools_include: [render_stats_report]}
  - say: "Report written. {{artifact:report.md}}"
    expect: {tool_results: [{not_error: true, contains: "report.md"}]}
"""


async def test_a_multi_skill_run_chains_artifacts_through_real_sandboxes(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(token), "pool_target": 1, "pool_max": 4},
    )
    store = LocalArtifactStore(tmp_path / "store")
    registry = SkillRegistry.from_scan(SkillScanner([bundled_skills_dir()]).scan())
    async with Manager.serving(settings, store=store) as manager:
        services = AgentServices(
            settings=settings,
            registry=registry,
            store=store,
            provider=ScriptedProvider.from_yaml(SCRIPT),
            model="scripted",
            sandbox=manager.client,
        )
        engine = DirectEngine(services)
        run_id = "run-direct-e2e"
        sales = await store.put_bytes(keys.run_input_key(run_id, "sales.csv"), CSV)
        await engine.start(
            RunRequest(
                run_id=run_id,
                task="Profile the attached sales.csv and write a data-quality report.",
                agent=AgentSpec(skills=("data-toolkit",)),
                inputs=(sales,),
            )
        )
        events = [event async for event in engine.events(run_id)]
        result = await engine.result(run_id)

    assert result.status == "completed", result.reason
    assert list(result.active_skills) == ["data-toolkit", "csv-profiler", "json-report"]
    assert result.script_runs == 2
    stats_ref, report_ref = result.outputs
    assert stats_ref.key.endswith("/outputs/stats.json")
    assert report_ref.key.endswith("/outputs/report.md")
    # The chain is intact: the profile read the CSV, the report read that very profile.
    stats = json.loads(await store.get_bytes(stats_ref))
    assert stats["rows"] == 4
    assert [c["name"] for c in stats["columns"]] == ["region", "units", "price"]
    report = (await store.get_bytes(report_ref)).decode()
    assert report.startswith("# Sales check")
    assert "units" in report
    assert "price" in report
    assert report_ref.key in (result.answer or "")
    ran = [e for e in events if e.kind == "script_ran"]
    assert [e.status for e in ran] == ["succeeded", "succeeded"]
    assert all(e.duration_ms is not None and e.duration_ms > 0 for e in ran)
    activated = [e for e in events if e.kind == "skill_activated"]
    assert activated[2].tools_registered == ("render_stats_report",)
