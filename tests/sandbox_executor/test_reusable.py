"""An executor that serves several executions (``EXECUTOR__REUSABLE``, what the local pool's
``SANDBOX__EXECUTIONS_PER_EXECUTOR`` above 1 sets): each one in a fresh workspace and
sandbox, the next made ready as soon as the last ended, the last one's files served until the
next request."""

from __future__ import annotations

import asyncio

import httpx

from sandbox_executor import ExecutorSettings
from sandbox_executor.executor import Executor
from skillweave.sandbox.models import ExecutorResult
from tests.sandbox_executor.conftest import MakeClient
from tests.sandbox_executor.support import AUTH, execute_form, make_package

_LOOK_AND_LEAVE = """\
import os, sys
print(sorted(os.listdir(".")), sorted(os.listdir("/tmp")), sorted(os.listdir("outputs")))
mark = sys.argv[1]
open(mark, "w").write(mark)
open(f"/tmp/{mark}", "w").write(mark)
open(f"outputs/{mark}.txt", "w").write(mark)
"""


async def _run(client: httpx.AsyncClient, mark: str) -> ExecutorResult:
    package = make_package({"scripts/look.py": _LOOK_AND_LEAVE})
    response = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "scripts/look.py", "args": [mark]}, package),
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


def _executor(client: httpx.AsyncClient) -> Executor:
    app = client._transport.app  # type: ignore[attr-defined]
    executor: Executor = app.state.executor
    return executor


async def test_each_execution_is_fresh_and_the_next_is_warm_before_it_is_asked_for(
    make_client: MakeClient,
) -> None:
    client = await make_client(ExecutorSettings(reusable=True))
    executor = _executor(client)
    first_stage = executor._attempts.current

    one = await _run(client, "one")
    assert one.exit_code == 0, one.stderr
    # The next execution's workspace and sandbox are made now, while the manager still
    # fetches the last one's files.
    for _ in range(100):
        warm = executor._attempts.current
        if warm is not None and warm is not first_stage and warm.stage is not None:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("no warm attempt was made after the execution")
    assert not warm.used
    fetched = await client.get("/files/outputs/one.txt", headers=AUTH)
    assert fetched.status_code == 200
    assert fetched.content == b"one"
    assert (await client.get("/healthz")).json()["status"] == "ready"

    two = await _run(client, "two")
    assert two.exit_code == 0, two.stderr
    assert executor._attempts.current is not warm or warm.used
    # Nothing of the first: not its files, not its /tmp, not its outputs.
    assert two.stdout == "['deps', 'inputs', 'outputs', 'skill'] [] []\n"
    assert one.stdout == two.stdout
    assert (await client.get("/files/outputs/one.txt", headers=AUTH)).status_code == 404
    assert (await client.get("/files/outputs/two.txt", headers=AUTH)).content == b"two"
    # The first execution's folder is gone once the second began.
    assert not (first_stage.folder if first_stage else executor.folder / "none").exists()


async def test_after_its_last_execution_it_makes_no_next_sandbox(make_client: MakeClient) -> None:
    """The pool replaces an executor after SANDBOX__EXECUTIONS_PER_EXECUTOR executions: a
    sandbox warmed after the last would only be killed unused (and its uid swept)."""
    client = await make_client(ExecutorSettings(reusable=True, max_executions=2))
    executor = _executor(client)
    assert (await _run(client, "one")).exit_code == 0
    assert (await _run(client, "two")).exit_code == 0
    last = executor._attempts.current
    assert last is not None
    assert last.used, "no attempt may be made after the last execution"
    assert executor._warming is None or executor._warming.done()
    assert [stage.popen.poll() is not None for stage in executor._holdings.stages] == [True]
    assert (await client.get("/healthz")).json()["status"] == "done"
    third = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "scripts/look.py"}, make_package({"scripts/look.py": "1"})),
    )
    assert third.status_code == 409
    assert "served its 2 executions" in third.json()["detail"]
    # Its files are still served, as a one-shot executor's are.
    assert (await client.get("/files/outputs/two.txt", headers=AUTH)).content == b"two"
    # Nothing was killed while running: the uid goes back without a sweep.
    await executor.close()
    assert not executor._holdings.killed_running
