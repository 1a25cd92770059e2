"""The static backend: one long-lived development executor (``EXECUTOR__REUSABLE=true``),
serving execution after execution, each in a fresh workspace and a fresh sandbox."""

from __future__ import annotations

import time

from mcp_manager import StaticBackend
from skillweave.sandbox.models import ExecuteRequest
from tests.integration.conftest import StartExecutor
from tests.integration.harness import Manager, StartManager
from tests.sandbox_executor.support import AUTH, execute_form, make_package
from tests.sandbox_executor.support import TOKEN as EXECUTOR_TOKEN


def _request(manager: Manager, execution_id: str, mark: str) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=execution_id,
        run_id="dev-run",
        skill="probe",
        version=manager.version("probe"),
        script="scripts/leftovers.py",
        args=[mark],
    )


async def test_one_dev_executor_serves_execution_after_execution(
    start_manager: StartManager, start_executor: StartExecutor
) -> None:
    executor = start_executor(env={"EXECUTOR__REUSABLE": "true"})
    manager = await start_manager(
        backend=StaticBackend(url=executor.base_url, token=EXECUTOR_TOKEN)
    )
    results = []
    for mark in ("one", "two", "three"):
        result = await manager.client.execute(
            _request(manager, f"dev/{mark}/{time.time_ns()}", mark)
        )
        assert result.status == "succeeded", result.stderr or result.error
        results.append(result)
    # Each run starts clean: no outputs and no /tmp files of the run before.
    assert [r.stdout for r in results] == ["[] []\n"] * 3
    for result, mark in zip(results, ("one", "two", "three"), strict=True):
        assert [output.path for output in result.outputs] == [f"mark-{mark}.txt"]
        assert await manager.store.get_bytes(result.outputs[0].ref) == mark.encode()
    assert executor.client.get("/healthz").json()["status"] == "ready"
    assert executor.alive()


def test_a_one_shot_executor_refuses_a_second_execution(start_executor: StartExecutor) -> None:

    executor = start_executor()
    package = make_package({"run.py": "print('once')\n"})
    first = executor.client.post(
        "/execute", headers=AUTH, **execute_form({"script": "run.py"}, package)
    )
    assert first.status_code == 200
    second = executor.client.post(
        "/execute", headers=AUTH, **execute_form({"script": "run.py"}, package)
    )
    assert second.status_code == 409
    assert executor.client.get("/healthz").json()["status"] == "done"
