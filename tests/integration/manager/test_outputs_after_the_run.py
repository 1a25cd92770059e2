"""Once the executor answered, the script finished: whatever happens while its files are
brought back is the run's terminal result, stored, never a lost sandbox (which would run the
script again). Real manager, real executors, real store; the executor is really killed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_manager.backends import Sandbox
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


async def test_a_sandbox_that_dies_while_its_outputs_are_fetched_is_a_terminal_result(
    start_manager: StartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = await start_manager()
    client = manager.service._executor
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

    first = await manager.client.execute(body)

    assert killed
    assert first.status == "error", first
    assert first.exit_code == 0
    assert first.stdout.strip() == "3"
    assert first.error is not None
    assert "could not be brought back from the sandbox" in first.error
    assert "it is not run again" in first.error
    assert first.outputs == []
    assert await manager.store.stat(keys.execution_result_key(body.execution_id)) is not None
    again = await manager.client.execute(body)
    assert again == first
    await pool_back_at_target(manager)
    assert await manager.executions() == 1
    assert await manager.executions(outcome="lost") == 0
    assert await manager.deduplicated() == 1
    # Killed before its own clean-up: its folder (the run's workspace) is removed after it.
    assert not killed[0].exists()


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
