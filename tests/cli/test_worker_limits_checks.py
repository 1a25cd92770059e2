"""The ``agree`` check of the limits a run runs under: the worker's (issue 41, item 4).

A worker compares its own script step with its manager's limit; a client of the Temporal
engine (``run``, the API) compares nothing, since its runs run under their workers' limits,
and is told in one line when it sets one of them; the direct engine is its own worker.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillweave.cli.checks import client_limits_check, run_checks
from skillweave.cli.probe import Probe, Role
from skillweave.cli.service_checks import agree_check
from skillweave.config import Settings

WARNING = (
    "WORKFLOW__SCRIPT_TIMEOUT_SECONDS has no effect here: a run runs under the limits of the "
    "worker that runs it (the workers' settings); set it on the workers, not on a client"
)


def _settings(**workflow: Any) -> Settings:
    """This process's settings: scripts in-process with a 120 s limit, and `workflow`."""
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        workflow=workflow,
        sandbox={"timeout_seconds": 120.0},
    )


async def _agreement(settings: Settings, role: Role) -> tuple[str, str]:
    check = await agree_check(Probe(settings, role))
    assert check.name == "agree"
    return check.status, check.detail


@pytest.mark.parametrize("role", ["run", "api"])
async def test_a_client_that_sets_a_workers_limit_is_told_it_has_no_effect(role: Role) -> None:
    # 2.5 s is far under the 120 s script limit: a worker would refuse it (below); a client
    # is not compared at all, only told.
    assert await _agreement(_settings(script_timeout_seconds=2.5), role) == ("warn", WARNING)


async def test_the_warning_names_every_limit_set_in_one_line() -> None:
    told = client_limits_check(_settings(heartbeat_timeout_seconds=3, activity_max_attempts=2))
    assert told is not None
    assert told.detail.startswith(
        "WORKFLOW__HEARTBEAT_TIMEOUT_SECONDS, WORKFLOW__ACTIVITY_MAX_ATTEMPTS have no effect"
    )
    assert told.detail.endswith("set them on the workers, not on a client")
    # Other workflow settings are a client's own: nothing to say.
    assert client_limits_check(_settings(task_queue="q", temporal_address="h:1")) is None


@pytest.mark.parametrize("role", ["run", "api"])
async def test_a_client_that_leaves_the_limits_alone_compares_none(role: Role) -> None:
    assert await _agreement(_settings(), role) == (
        "ok",
        "scripts run on the workers, under their limits",
    )


async def test_a_worker_still_compares_its_own_step_with_the_script_limit() -> None:
    status, detail = await _agreement(_settings(script_timeout_seconds=2.5), "worker")
    assert status == "fail"
    assert "SANDBOX__TIMEOUT_SECONDS (120 s) is not under WORKFLOW__SCRIPT_TIMEOUT_SECONDS" in (
        detail
    )


async def test_the_direct_engine_is_its_own_worker_and_not_told() -> None:
    settings = _settings(execution_engine="direct", script_timeout_seconds=2.5)
    assert await _agreement(settings, "run") == (
        "ok",
        "scripts run in-process, limit 120 s",
    )


async def test_a_run_about_to_start_on_temporal_gets_the_one_line() -> None:
    checks = await run_checks(_settings(script_timeout_seconds=2.5), "run")
    assert [(c.status, c.detail) for c in checks if c.name == "agree"] == [("warn", WARNING)]
