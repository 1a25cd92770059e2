"""A script step that reaches a manager still starting (a ``skillweave manager`` started before
its S3) waits for the manager, told as such: the sandbox client reads the manager's 503
``not_ready`` as :class:`ManagerNotReadyError` naming what the manager waits for, and the
step's wait (``skillweave.sandbox.queue``) is on the manager with that line, never "pool
exhausted". Once S3 is up the same request reaches the manager. Real processes: the
``skillweave manager`` command and ``moto_server``, started late on a port chosen up front."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.errors import ExecutionRejectedError, ManagerNotReadyError
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.queue import queued
from skillweave.waiting import WAITING, Waiting
from tests.integration.cli.test_start_in_any_order import (
    TOKEN,
    health_until,
    is_ready,
    manager_before_s3,
)
from tests.moto import moto_server

pytestmark = pytest.mark.timeout(300)

REQUEST = ExecuteRequest(
    execution_id="wf-late/script-1",
    run_id="run-late",
    skill="nowhere",
    version="a" * 64,
    script="scripts/a.py",
)


async def test_a_step_waits_for_a_manager_that_waits_for_its_store(tmp_path: Path) -> None:
    async with manager_before_s3(tmp_path) as late:
        base, manager, logs = late.base, late.process, late.logs
        starting = (
            f"the MCP manager at {base} is starting: waiting for the S3 store at {late.endpoint}"
        )
        async with SandboxClient(base, token=TOKEN) as client:
            with pytest.raises(ManagerNotReadyError) as caught:
                await client.execute(REQUEST)
            said = str(caught.value)
            assert said.startswith(starting), said
            assert said.endswith("(its /healthz says)"), said
            assert "pool" not in said

            told: list[Waiting | None] = []
            reporting = WAITING.set(told.append)
            try:
                with pytest.raises(ManagerNotReadyError):
                    await queued(
                        lambda: client.execute(REQUEST), queue_seconds=2.5, call="script a.py"
                    )
            finally:
                WAITING.reset(reporting)
            begun, ended = told
            assert isinstance(begun, Waiting)
            assert begun.on == "manager", begun
            assert begun.detail.startswith(starting), begun
            assert "waiting for the MCP manager" in begun.line(), begun.line()
            assert ended is None

            with moto_server(tmp_path, port=late.s3_port):
                await health_until(f"{base}/healthz", manager, logs, is_ready)
                with pytest.raises(ExecutionRejectedError):  # it answers: no such skill
                    await client.execute(REQUEST)
