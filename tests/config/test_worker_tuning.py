"""The worker's tuning settings (``WORKFLOW__WORKER_MAX_…``, ``…_POLLERS``): read from the
environment, bounded, and described where ``skillweave worker --help`` points."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillweave.config import Settings, WorkflowSettings

TUNING = {
    "WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS": ("worker_max_cached_workflows", "250"),
    "WORKFLOW__WORKER_MAX_CONCURRENT_WORKFLOW_TASKS": (
        "worker_max_concurrent_workflow_tasks",
        "8",
    ),
    "WORKFLOW__WORKER_MAX_CONCURRENT_ACTIVITIES": ("worker_max_concurrent_activities", "40"),
    "WORKFLOW__WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES": (
        "worker_max_concurrent_local_activities",
        "30",
    ),
    "WORKFLOW__WORKER_WORKFLOW_POLLERS": ("worker_workflow_pollers", "3"),
    "WORKFLOW__WORKER_ACTIVITY_POLLERS": ("worker_activity_pollers", "4"),
}


def test_each_tuning_variable_reaches_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, (_, value) in TUNING.items():
        monkeypatch.setenv(variable, value)
    workflow = Settings(_env_file=None).workflow
    assert {field: getattr(workflow, field) for field, _ in TUNING.values()} == {
        field: int(value) for field, value in TUNING.values()
    }


def test_the_defaults_are_the_documented_ones() -> None:
    workflow = WorkflowSettings()
    assert workflow.worker_max_cached_workflows == 1000
    assert workflow.worker_max_concurrent_workflow_tasks == 100
    assert workflow.worker_max_concurrent_activities == 100
    assert workflow.worker_max_concurrent_local_activities == 100
    assert workflow.worker_workflow_pollers == 5
    assert workflow.worker_activity_pollers == 5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("worker_max_cached_workflows", -1),
        ("worker_max_cached_workflows", 100_001),
        # The SDK needs two workflow slots and two pollers once runs are cached.
        ("worker_max_concurrent_workflow_tasks", 1),
        ("worker_max_concurrent_activities", 0),
        ("worker_max_concurrent_local_activities", 0),
        ("worker_max_concurrent_activities", 10_001),
        ("worker_workflow_pollers", 1),
        ("worker_workflow_pollers", 101),
        ("worker_activity_pollers", 0),
    ],
)
def test_values_out_of_bounds_are_refused(field: str, value: int) -> None:
    with pytest.raises(ValidationError, match=field):
        WorkflowSettings.model_validate({field: value})


def test_a_cache_of_zero_turns_caching_off() -> None:
    assert WorkflowSettings(worker_max_cached_workflows=0).worker_max_cached_workflows == 0


def test_every_tuning_field_is_described_and_says_who_reads_it() -> None:
    for field, _ in TUNING.values():
        description = WorkflowSettings.model_fields[field].description or ""
        assert "Read by the worker alone" in description, field
    cache = WorkflowSettings.model_fields["worker_max_cached_workflows"].description or ""
    assert "docs/SCALING.md" in cache
