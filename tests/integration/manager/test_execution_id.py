"""A script's ``SKILLWEAVE_EXECUTION_ID`` (issue 28, part 5): its run's execution id, the same
on every attempt of the run, so a script that acts outside its sandbox can use it as an
idempotency key; a request cannot set it to something else."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(120)

SCRIPT = "import os\nprint(os.environ['SKILLWEAVE_EXECUTION_ID'])\n"


async def test_a_script_reads_its_runs_execution_id(tmp_path: Path) -> None:
    write_skill(tmp_path / "library" / "keyed", files={"scripts/key.py": SCRIPT})
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "library"]).scan())
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, registry)
    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr("t" * 16)})

    def request(execution_id: str, **env: str) -> ExecuteRequest:
        return ExecuteRequest(
            execution_id=execution_id,
            run_id="run-keyed",
            skill="keyed",
            version=registry.get("keyed").version,
            script="scripts/key.py",
            env=env,
        )

    async with Manager.serving(settings, store=store, registry=registry) as manager:
        first = await manager.client.execute(request("skillweave-run-run-keyed/script-3"))
        forged = await manager.client.execute(
            request("skillweave-run-run-keyed/script-5", SKILLWEAVE_EXECUTION_ID="forged")
        )

    assert first.stdout.strip() == "skillweave-run-run-keyed/script-3"
    assert forged.stdout.strip() == "skillweave-run-run-keyed/script-5"
