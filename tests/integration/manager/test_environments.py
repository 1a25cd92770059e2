"""A skill's declared dependencies, end to end through real managers and sandboxes.

Its script imports a package the executor's base environment does not have. On an air-gapped
manager (builds off) the run is refused until the environment exists; a manager allowed to
build prepares it once (from a local file index, in the build sandbox); then the script runs,
on either manager, and later runs reuse the stored environment: no second build anywhere.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import skills
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import Skill, SkillRegistry, SkillScanner
from skillweave.skills.package import build_package
from tests.conftest import write_skill
from tests.integration.harness import Manager, StartManager, eventually
from tests.integration.manager.conftest import TOKEN
from tests.mcp_manager.environment_support import bwrap_works, python_index

pytestmark = pytest.mark.skipif(not bwrap_works(), reason="environment builds need bubblewrap")

USE = "import swdemo_plus\nprint('double', swdemo_plus.DOUBLE)\n"


def _skills(root: Path) -> SkillRegistry:
    write_skill(
        root / "needs-deps",
        description="Doubles a value with a library. Use when a test needs dependencies.",
        files={"requirements.txt": "swdemo-plus==1.0\n", "scripts/use.py": USE},
    )
    write_skill(
        root / "declares-nothing",
        description="The same script, without declaring its library.",
        files={"scripts/use.py": USE},
    )
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def _request(skill: Skill) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=f"deps/{skill.name}/{time.monotonic_ns()}",
        run_id="run-deps",
        skill=skill.name,
        version=skill.version,
        script="scripts/use.py",
    )


async def _metric(manager: Manager, name: str, **labels: str) -> float:
    text = (await manager.http.get("/metrics")).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


async def test_a_script_needing_a_package_runs_once_its_environment_is_built_and_reuses_it(
    start_manager: StartManager, tmp_path: Path
) -> None:
    index = python_index(tmp_path / "index")
    registry = _skills(tmp_path / "skills")
    skill, bare = registry.get("needs-deps"), registry.get("declares-nothing")
    offline = await start_manager(environments={"builds": False})  # air-gapped: prebuilt only
    for published in (skill, bare):
        await publish_skill(offline.store, published)

    # The package is not in the executor's base environment: undeclared, the import fails.
    # (It is inferred from the import, but with builds off nothing inferred can be built: the
    # run goes on as without inference, not refused; test_inferred_environments has the rest.)
    result = await offline.client.execute(_request(bare))
    assert result.status == "failed"
    assert "No module named 'swdemo_plus'" in result.stderr

    # Declared but not built, with builds off: refused, clearly, and nothing ran.
    first = _request(skill)
    with pytest.raises(ExecutionRejectedError) as refused:
        await offline.client.execute(first)
    assert refused.value.status_code == 422
    assert "needs-deps" in str(refused.value)
    assert await _metric(offline, "skillweave_sandbox_executions_total") == 1  # the bare run

    # `skillweave skills build` asks a manager allowed to build (a local file index here).
    builder = await start_manager(
        environments={"find_links": [str(index)], "no_index": True}, pool_target=0
    )
    prepared = await builder.client.prepare_environment(skill.name, skill.version)
    assert prepared["needed"] is True
    assert prepared["built"] is True
    assert prepared["dependencies"]["python"] == ["swdemo-plus==1.0"]
    assert prepared["bytes"] > 0
    assert await _metric(builder, "skillweave_sandbox_environment_builds_total") == 1

    # Now it runs (the refused id was left free), and again, on either manager: reused.
    for manager, request in (
        (offline, first),
        (offline, _request(skill)),
        (builder, _request(skill)),
    ):
        result = await manager.client.execute(request)
        assert result.status == "succeeded", result.stderr
        assert result.stdout == "double 84\n"
    assert await _metric(builder, "skillweave_sandbox_environment_builds_total") == 1
    assert await _metric(offline, "skillweave_sandbox_environment_builds_total") == 0
    reused = "skillweave_sandbox_environment_seconds_count"
    assert await _metric(offline, reused, built="false") == 2
    # The build's log is kept beside the environment.
    logs = [ref.key for ref in await offline.store.list("environments/needs-deps/")]
    assert any(key.endswith(".log") for key in logs), logs
    assert any(key.endswith(".tar.gz") for key in logs), logs


async def test_a_failed_build_names_the_package_and_stores_no_environment(
    start_manager: StartManager, tmp_path: Path
) -> None:
    index = python_index(tmp_path / "index")
    root = tmp_path / "skills"
    write_skill(
        root / "wants-missing",
        description="Declares a package no index has.",
        files={"requirements.txt": "swmissing==9.9\n", "scripts/use.py": "print('never')\n"},
    )
    skill = SkillRegistry.from_scan(SkillScanner([root]).scan()).get("wants-missing")
    manager = await start_manager(environments={"find_links": [str(index)], "no_index": True})
    await publish_skill(manager.store, skill)
    with pytest.raises(ExecutionRejectedError) as refused:
        await manager.client.execute(_request(skill))
    assert refused.value.status_code == 422
    assert "swmissing" in str(refused.value)
    keys = [ref.key for ref in await manager.store.list("environments/wants-missing/")]
    assert not [key for key in keys if key.endswith(".tar.gz")], keys
    assert any(key.endswith(".log") for key in keys), keys
    assert await _metric(manager, "skillweave_sandbox_executions_total") == 0


async def test_an_upload_over_the_api_has_the_manager_build_its_environment(
    start_manager: StartManager, tmp_path: Path
) -> None:
    """Registration builds: the API asks the manager to prepare a new version's environment
    as soon as it is uploaded, so its first run finds it ready."""
    index = python_index(tmp_path / "index")
    registry = _skills(tmp_path / "skills")
    manager = await start_manager(
        environments={"find_links": [str(index)], "no_index": True}, pool_target=0
    )
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr("api-token")},
        sandbox={"manager_url": manager.url, "manager_token": SecretStr(TOKEN)},
        skills={"dirs": [], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    app = create_api(
        settings, store=manager.store, routers=[skills.router], on_startup=[skills.open_skills]
    )
    package = build_package(registry.get("needs-deps").path)
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": "Bearer api-token"}
        ) as client,
    ):
        uploaded = await client.post(
            "/v1/skills/upload", files={"file": ("skill.zip", package, "application/zip")}
        )
        assert uploaded.status_code == 201, uploaded.text

        async def built() -> bool:
            return await _metric(manager, "skillweave_sandbox_environment_builds_total") == 1

        await eventually(built, timeout=60)
    stored = await manager.store.list("environments/needs-deps/")
    assert [ref.key for ref in stored if ref.key.endswith(".tar.gz")]
