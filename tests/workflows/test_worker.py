"""``workflows.worker``: the settings' tuning reaches the Temporal worker, under a caller's
explicit options (the SDK's ``Worker`` replaced by a recorder: a real one needs a server,
which ``tests/integration/temporal/test_worker_cache.py`` gives it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import PollerBehaviorSimpleMaximum, UnsandboxedWorkflowRunner, WorkerTuner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

import workflows.worker as worker_module
from skillweave.config import Settings
from skillweave.engines import AgentServices
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry
from skillweave.storage.local import LocalArtifactStore
from workflows.worker import build_worker, sandbox_runner, worker_tuning


class RecordedWorker:
    """Stands in for ``temporalio.worker.Worker``: keeps what it was given."""

    def __init__(self, client: Client, **options: Any) -> None:
        self.client = client
        self.options = options


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "Worker", RecordedWorker)


def services(tmp_path: Path, **workflow: Any) -> AgentServices:
    return AgentServices(
        settings=Settings(_env_file=None, workflow=workflow),
        registry=SkillRegistry({}),
        store=LocalArtifactStore(tmp_path / "store"),
        provider=ScriptedProvider.from_yaml("turns: [{say: hi}]"),
        model="scripted",
        sandbox=SandboxClient("http://127.0.0.1:9", token="unused"),
    )


def built(tmp_path: Path, *, workflow: dict[str, Any], **options: Any) -> dict[str, Any]:
    worker = build_worker(
        Client.__new__(Client),
        services(tmp_path, **workflow),
        task_queue="q",
        store_id="s",
        **options,
    )
    assert isinstance(worker, RecordedWorker)
    return worker.options


TUNED = {
    "worker_max_cached_workflows": 7,
    "worker_max_concurrent_workflow_tasks": 3,
    "worker_max_concurrent_activities": 11,
    "worker_max_concurrent_local_activities": 13,
    "worker_workflow_pollers": 2,
    "worker_activity_pollers": 4,
}


@pytest.mark.usefixtures("recorded")
def test_the_worker_receives_the_configured_tuning(tmp_path: Path) -> None:
    options = built(tmp_path, workflow=TUNED)
    assert options["max_cached_workflows"] == 7
    assert options["max_concurrent_workflow_tasks"] == 3
    assert options["max_concurrent_activities"] == 11
    assert options["max_concurrent_local_activities"] == 13
    assert options["workflow_task_poller_behavior"] == PollerBehaviorSimpleMaximum(maximum=2)
    assert options["activity_task_poller_behavior"] == PollerBehaviorSimpleMaximum(maximum=4)


@pytest.mark.usefixtures("recorded")
def test_a_callers_explicit_options_win(tmp_path: Path) -> None:
    options = built(tmp_path, workflow=TUNED, max_cached_workflows=0, max_concurrent_activities=1)
    assert options["max_cached_workflows"] == 0
    assert options["max_concurrent_activities"] == 1
    assert options["max_concurrent_workflow_tasks"] == 3  # the rest still from the settings


@pytest.mark.usefixtures("recorded")
def test_a_callers_tuner_replaces_the_slots_but_not_the_cache(tmp_path: Path) -> None:
    tuner = WorkerTuner.create_fixed(workflow_slots=2, activity_slots=2, local_activity_slots=2)
    options = built(tmp_path, workflow=TUNED, tuner=tuner)
    assert options["tuner"] is tuner
    assert (
        not {
            "max_concurrent_workflow_tasks",
            "max_concurrent_activities",
            "max_concurrent_local_activities",
        }
        & options.keys()
    )
    assert options["max_cached_workflows"] == 7


def test_the_tuning_names_real_worker_options() -> None:
    import inspect

    from temporalio.worker import Worker

    accepted = inspect.signature(Worker.__init__).parameters
    assert set(worker_tuning(Settings(_env_file=None).workflow)) <= accepted.keys()


@pytest.mark.usefixtures("recorded")
def test_workflow_code_runs_outside_the_sandbox_unless_asked(tmp_path: Path) -> None:
    assert isinstance(built(tmp_path, workflow={})["workflow_runner"], UnsandboxedWorkflowRunner)
    sandboxed = built(tmp_path, workflow={"worker_workflow_sandbox": True})["workflow_runner"]
    assert isinstance(sandboxed, SandboxedWorkflowRunner)
    # The sandbox it asks for is the one the replay tests replay every recorded history in.
    assert sandboxed.restrictions == sandbox_runner().restrictions


def test_the_replay_tests_replay_in_the_sandbox() -> None:
    # What running outside the sandbox gives up is checked here instead (workflows.worker).
    source = (Path(__file__).parent / "test_replay.py").read_text(encoding="utf-8")
    assert "workflow_runner=sandbox_runner()" in source
