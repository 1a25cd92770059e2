"""What a worker asks the manager for a script step (issue 28, part 2): the id of its store
(a manager on another refuses the run), and no limits, so the script limit is the manager's
``SANDBOX__TIMEOUT_SECONDS`` and is decided in that one place."""

from __future__ import annotations

from pathlib import Path

from skillweave.agent.effect_models import RunScriptInput
from skillweave.agent.idempotency import execution_key
from skillweave.config import Settings
from skillweave.engines import AgentServices
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.packages import publish_library
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.agent.harness import FakeSandbox, sample_library


async def test_a_script_step_names_the_store_and_leaves_the_limit_to_the_manager(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    registry = sample_library(tmp_path / "skills")
    await publish_library(store, registry)
    sandbox = FakeSandbox(store)
    services = AgentServices(
        # A worker's own SANDBOX__TIMEOUT_SECONDS is not what its scripts run under.
        settings=Settings(_env_file=None, sandbox={"timeout_seconds": 7}),
        registry=registry,
        store=store,
        provider=ScriptedProvider.from_yaml("turns: [{say: unused}]"),
        model="scripted",
        sandbox=sandbox,
    )
    outcome = await services.run_skill_script(
        RunScriptInput(
            run_id="j1",
            execution_id=execution_key("j1", 3),
            skill="profiler",
            version=registry.get("profiler").version,
            script="scripts/count.py",
            seq=3,
            tool_call_id="call-1",
        )
    )

    assert outcome.ran  # (count.py fails without its input: what matters is the request)
    (request,) = sandbox.requests
    assert request.store_id == await store_identity(store)
    assert request.limits is None
