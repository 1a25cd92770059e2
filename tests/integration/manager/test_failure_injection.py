"""Exactly-once under failures inside the manager: a failure at each step of an execution
ends in one of two states, never a claim left without a result (which would run the script a
second time once its lease lapsed).

- before the script can have started (package, environment, a request never sent): the id is
  left free; a retry runs the script once;
- after (the executor call sent, outputs collected, output masked, result written): a terminal
  result is stored, naming the failure and its class; a retry gets it, and the script ran at
  most once. A result that cannot be stored at all leaves the claim saying the script ran: a
  retry gets 409, not a second run.

Runs are counted outside the sandbox (`CountingBackend`: each one-shot executor says, before it
is destroyed, whether it served an execution). The failures are injected into the real
manager's steps; the executors and the store are real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from skillweave.errors import ExecutionConflictError, SandboxError, StorageError
from skillweave.sandbox.models import ExecuteRequest
from skillweave.storage import keys
from tests.integration.harness import Manager, StartManager
from tests.integration.manager.test_manager import pool_back_at_target

pytestmark = pytest.mark.timeout(180)


class Injected(RuntimeError):
    """The failure a test injects."""


def failing_once(step: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """`step`, which fails the first time it is called, then works."""
    calls = 0

    async def once(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Injected("injected failure")
        return await step(*args, **kwargs)

    return once


def _connecting_fails(manager: Manager, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manager's first run sent to a sandbox (over its run channel, as the local backend's
    are) cannot connect: nothing of the request is sent."""
    executor = manager.service._executor
    connect = executor._open_channel
    failed = False

    async def once(path: Path) -> Any:
        nonlocal failed
        if not failed:
            failed = True
            raise ConnectionRefusedError("injected: refused")
        return await connect(path)

    monkeypatch.setattr(executor, "_open_channel", once)


def _failing_before_the_end(manager: Manager, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manager's first run is sent to its sandbox but for its end (the go byte), then its
    call fails: the sandbox has read the request and run nothing."""
    executor = manager.service._executor
    deliver = executor._over_channel
    failed = False

    async def once(reader: Any, writer: asyncio.StreamWriter, *args: Any) -> Any:
        nonlocal failed
        if not failed:
            failed = True
            await writer.drain()  # all of the request but its end is out
            writer.close()
            raise Injected("injected failure before the request's end")
        return await deliver(reader, writer, *args)

    monkeypatch.setattr(executor, "_over_channel", once)


async def _claim_of(manager: Manager, execution_id: str) -> bool:
    return await manager.store.stat(keys.execution_claim_key(execution_id)) is not None


async def _result_of(manager: Manager, execution_id: str) -> bool:
    return await manager.store.stat(keys.execution_result_key(execution_id)) is not None


def _copy(manager: Manager, execution_id: str) -> ExecuteRequest:
    return manager.request("scripts/copy.py", execution_id=execution_id, inputs=[])


async def _with_input(manager: Manager, execution_id: str) -> ExecuteRequest:
    ref = await manager.store.put_bytes(
        keys.run_input_key("run-1", "in.txt"), b"abc", content_type="text/plain"
    )
    return manager.request("scripts/copy.py", execution_id=execution_id, inputs=[ref])


# --- before the script can have started: the id stays free ---------------------------------


@pytest.mark.parametrize(
    "step", ["_packages.get", "_environments._environment", "_preparation._validate"]
)
async def test_a_failure_before_the_run_leaves_the_id_free_and_a_retry_runs_once(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    manager = await start_manager()
    part, method = step.split(".")
    collaborator = getattr(manager.service, part)
    monkeypatch.setattr(collaborator, method, failing_once(getattr(collaborator, method)))
    body = await _with_input(manager, f"inject/{step}")
    with pytest.raises(SandboxError):
        await manager.client.execute(body)
    assert not await _claim_of(manager, body.execution_id)
    assert not await _result_of(manager, body.execution_id)
    result = await manager.client.execute(body)
    assert result.status == "succeeded", result.error
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


@pytest.mark.parametrize(
    "inject",
    [_connecting_fails, _failing_before_the_end],
    ids=["never-connected", "failed-before-the-end"],
)
async def test_a_request_whose_end_was_never_sent_leaves_the_id_free(
    start_manager: StartManager,
    monkeypatch: pytest.MonkeyPatch,
    inject: Callable[[Manager, pytest.MonkeyPatch], None],
) -> None:
    """The request's end is sent only once the claim is durable; a call that fails before
    sending it cannot have started the script: the id is free, and a retry runs it once."""
    manager = await start_manager()
    inject(manager, monkeypatch)
    body = await _with_input(manager, f"inject/{inject.__name__}")
    with pytest.raises(SandboxError):
        await manager.client.execute(body)
    assert not await _claim_of(manager, body.execution_id)
    assert not await _result_of(manager, body.execution_id)
    result = await manager.client.execute(body)
    assert result.status == "succeeded", result.error
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


# --- after it may have run: a terminal result, never a second run --------------------------


async def _assert_terminal(manager: Manager, body: ExecuteRequest, *, runs: int) -> None:
    first = await manager.client.execute(body)
    assert first.status == "error"
    assert first.error is not None
    assert "Injected" in first.error  # the failure, with its class
    assert "it is not run again" in first.error
    assert await _result_of(manager, body.execution_id)
    again = await manager.client.execute(body)
    assert again == first
    await pool_back_at_target(manager)
    assert manager.backend.runs == runs


async def test_a_failure_of_the_executor_call_after_the_request_ended_is_a_terminal_result(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    executor = manager.service._executor
    deliver = executor._over_channel

    async def broken(*args: Any, **kwargs: Any) -> Any:
        await deliver(*args, **kwargs)
        raise Injected("injected failure in the executor call")

    monkeypatch.setattr(executor, "_over_channel", broken)
    await _assert_terminal(manager, await _with_input(manager, "inject/call"), runs=1)


async def test_a_failure_collecting_outputs_is_a_terminal_result(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    service = manager.service
    outputs = service._executor.outputs
    monkeypatch.setattr(outputs, "fetch", failing_once(outputs.fetch))
    await _assert_terminal(manager, await _with_input(manager, "inject/outputs"), runs=1)


async def test_a_failure_reading_the_executor_answer_is_a_terminal_result(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    from mcp_manager import executor_client

    class Garbled(executor_client.ExecutorResult):
        @classmethod
        def model_validate_json(cls, *args: Any, **kwargs: Any) -> Any:
            raise Injected("injected: the executor's answer does not parse")

    monkeypatch.setattr(executor_client, "ExecutorResult", Garbled)
    await _assert_terminal(manager, await _with_input(manager, "inject/answer"), runs=1)


async def test_a_failure_masking_the_output_is_a_terminal_result_without_the_text(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    from mcp_manager.executions import _secrets

    real = _secrets.mask_result
    calls = 0

    def mask_once(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Injected("injected failure while masking")
        return real(*args)

    monkeypatch.setattr(_secrets, "mask_result", mask_once)
    body = await _with_input(manager, "inject/mask")
    await _assert_terminal(manager, body, runs=1)
    assert (await manager.client.execute(body)).stdout == ""  # nothing unmasked was kept


async def test_a_result_write_that_fails_once_is_asked_again_and_kept(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    service = manager.service
    put = service._store.put_bytes
    failed: list[str] = []

    async def flaky(key: str, *args: Any, **kwargs: Any) -> Any:
        if key.startswith("executions/") and key.endswith(".json") and not failed:
            failed.append(key)
            raise StorageError("injected: the store did not answer")
        return await put(key, *args, **kwargs)

    monkeypatch.setattr(service._store, "put_bytes", flaky)
    body = await _with_input(manager, "inject/write-once")
    first = await manager.client.execute(body)
    assert first.status == "succeeded", first.error
    assert failed == [keys.execution_result_key(body.execution_id)]
    assert await manager.client.execute(body) == first
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1


async def test_a_result_that_cannot_be_stored_is_never_run_again(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    service = manager.service
    put = service._store.put_bytes

    async def down(key: str, *args: Any, **kwargs: Any) -> Any:
        if key.startswith("executions/") and key.endswith(".json"):
            raise StorageError("injected: the store refuses results")
        return await put(key, *args, **kwargs)

    monkeypatch.setattr(service._store, "put_bytes", down)
    # The lease lapses at once: without the "ran" mark, the retry would take the claim over.
    monkeypatch.setattr(service._claims, "lease", 0.05)
    body = await _with_input(manager, "inject/write-never")
    with pytest.raises(SandboxError):
        await manager.client.execute(body)
    monkeypatch.setattr(service._store, "put_bytes", put)
    with pytest.raises(ExecutionConflictError, match="not run again"):
        await manager.client.execute(body)
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1
