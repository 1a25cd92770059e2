"""A cancel is one INFO line in the worker's log (issue 39, item 7): `skillweave runs cancel` (the
engine's cancel signal) while a model call is in flight ends the run cancelled, and the worker
says why its activity stopped in one line, never a WARNING with the CancelledError's traceback.
Real Temporal dev server and worker."""

from __future__ import annotations

import logging

import pytest

from skillweave.agent import AgentSpec
from skillweave.agent.effects import INVOKE_MODEL
from tests.integration.harness import eventually
from tests.integration.temporal.harness import Stack, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

SLOW = """
turns:
  - say: "thinking"
    delay_seconds: 60
  - say: "never reached"
"""


async def test_a_cancelled_run_is_one_info_line_in_the_worker_log(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with open_engine("temporal", stack, SLOW) as harness:
        run_id = await harness.start("Take your time.", agent=AgentSpec())

        async def thinking() -> bool:
            described = await harness.handle(run_id).describe()
            pending = described.raw_description.pending_activities
            return any(p.activity_type.name == INVOKE_MODEL.name for p in pending)

        await eventually(thinking, what="the model call in flight")
        await harness.engine.cancel(run_id, reason="cancelled by the user")

        def said() -> list[logging.LogRecord]:
            return [r for r in caplog.records if r.name == "activities.failures"]

        async def told() -> bool:
            return bool(said())

        await eventually(told, what="the worker's line about the cancel")
        result = await harness.engine.result(run_id)

    assert result.status == "cancelled"
    [line] = said()
    assert line.levelno == logging.INFO
    assert line.getMessage() == (
        f"invoke_model of run {run_id} cancelled: its run has ended (cancelled, or finished by"
        " another attempt)"
    )
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("temp")]
    assert loud == [], [r.getMessage() for r in loud]
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.INFO)
