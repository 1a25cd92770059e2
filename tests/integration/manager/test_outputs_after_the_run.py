"""What happens to a run's files once its executor answered. Whatever the executor says from
then on is the run's terminal result; a sandbox lost from outside while its files are fetched
took them with it, and the run goes again on a fresh sandbox (nothing a script does can cause
that: its processes are gone, and collection is bounded). Real manager, real executors, real
store; the executor is really killed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_manager.backends import Sandbox
from skillweave.errors import SandboxLostError
from skillweave.sandbox.models import ExecuteRequest
from skillweave.storage import keys
from tests.integration.harness import Manager, StartManager
from tests.integration.manager.test_manager import pool_back_at_target

pytestmark = pytest.mark.timeout(180)


async def _copy(manager: Manager, execution_id: str) -> ExecuteRequest:
    ref = await manager.store.put_bytes(
        keys.run_input_key("run-1", "in.txt"), b"abc", content_type="text/plain"
    )
    return manager.request("scripts/copy.py", execution_id=execution_id, inputs=[ref])


async def test_a_sandbox_killed_while_its_outputs_are_fetched_is_lost_and_its_run_kept_once(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    client = manager.service._executor.outputs
    fetch = client.fetch
    killed: list[Path] = []

    async def dying_first(sandbox: Sandbox, *args: Any, **kwargs: Any) -> Any:
        if not killed:  # the executor answered (the script ran), then its process is gone
            assert sandbox.process is not None
            assert sandbox.folder is not None
            await sandbox.process.stop(grace=0.0)
            killed.append(sandbox.folder)
        return await fetch(sandbox, *args, **kwargs)

    monkeypatch.setattr(client, "fetch", dying_first)
    body = await _copy(manager, "outputs/died-while-fetched")

    with pytest.raises(SandboxLostError, match="lost while its files were fetched"):
        await manager.client.execute(body)  # 502 sandbox_lost: the caller asks again
    assert killed
    assert await manager.store.stat(keys.execution_result_key(body.execution_id)) is None

    result = await manager.client.execute(body)  # the id is free: one run on a fresh sandbox
    assert result.status == "succeeded", (result.error, result.stderr)
    assert [output.path for output in result.outputs] == ["out.txt"]
    assert await manager.store.get_bytes(result.outputs[0].ref) == b"cba"  # copy.py reverses
    again = await manager.client.execute(body)
    assert again == result
    await pool_back_at_target(manager)
    assert await manager.executions(outcome="lost") == 1
    assert await manager.deduplicated() == 1
    # Killed before its own clean-up: its folder (the run's workspace) is removed after it.
    assert not killed[0].exists()


async def test_a_file_the_executor_cannot_serve_is_a_terminal_result(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor answers for the file it was asked for (here: it has no such file), so the
    run ends in error, stored, and a repeat is answered from the store, never run again."""
    manager = await start_manager()
    client = manager.service._executor.outputs
    fetch = client.fetch

    async def missing(sandbox: Sandbox, item: Any, *args: Any, **kwargs: Any) -> Any:
        return await fetch(
            sandbox, item.model_copy(update={"name": "outputs/gone"}), *args, **kwargs
        )

    monkeypatch.setattr(client, "fetch", missing)
    body = await _copy(manager, "outputs/not-served")

    first = await manager.client.execute(body)

    assert first.status == "error", first
    assert first.exit_code == 0
    assert first.error is not None
    assert "could not be brought back from the sandbox" in first.error
    assert "it is not run again" in first.error
    assert await manager.store.stat(keys.execution_result_key(body.execution_id)) is not None
    assert await manager.client.execute(body) == first
    await pool_back_at_target(manager)
    assert await manager.executions() == 1
    assert await manager.executions(outcome="lost") == 0
    assert manager.backend.runs == 1


async def test_outputs_no_key_can_carry_are_skipped_and_the_others_kept(
    start_manager: StartManager,
) -> None:
    """A newline and other control characters in output names: those are skipped, with the
    reason; the run succeeds and keeps its other outputs."""
    manager = await start_manager()
    names = ["good.txt", "new\nline.txt", "tab\there.txt", "also good.md", "esc\x1b[0m"]
    body = manager.request(
        "scripts/names.py", execution_id="outputs/control-names", args=[json.dumps(names)]
    )
    result = await manager.client.execute(body)
    assert result.status == "succeeded", (result.error, result.stderr)
    assert sorted(output.path for output in result.outputs) == ["also good.md", "good.txt"]
    assert sorted((s.path, s.reason) for s in result.skipped_outputs) == [
        ("esc\\x1b[0m", "the name contains a control character"),
        ("new\\x0aline.txt", "the name contains a control character"),
        ("tab\\x09here.txt", "the name contains a control character"),
    ]
    await pool_back_at_target(manager)
    assert manager.backend.runs == 1
