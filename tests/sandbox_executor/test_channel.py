"""The run channel (``skillweave.sandbox.run_channel``) against a real executor: the token first,
every limit before a blob is read, nothing run before the go byte, one execution per executor,
and the manager's client reading a refusal the executor sent while it was still writing."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from mcp_manager.backends import Sandbox
from mcp_manager.executor_client import ExecutorClient, Handover, SandboxRun
from sandbox_executor import ExecutorSettings, create_app
from skillweave.sandbox.models import ExecuteRequest, ExecutorRequest
from skillweave.sandbox.run_channel import (
    GO,
    HEAD_MAX_BYTES,
    SOCKET_NAME,
    RunHead,
    frame,
    read_answer,
)
from skillweave.storage.local import LocalArtifactStore
from skillweave.telemetry.masker import SecretMasker
from tests.sandbox_executor.support import TOKEN, make_package

pytestmark = pytest.mark.timeout(120)

SCRIPTS = {
    "run.py": "print(open('inputs/a.txt').read())\n",
    "lists.py": "import os\nprint(sorted(os.listdir('inputs')))\n",
}


class Executor:
    """An executor app with its run channel listening, on a short path (a socket's path may
    not be longer than 107 bytes)."""

    def __init__(self, app: FastAPI, channel: Path) -> None:
        self.app = app
        self.channel = channel

    @property
    def status(self) -> str:
        status: str = self.app.state.executor.status
        return status


@pytest.fixture
async def executor() -> AsyncIterator[Executor]:
    folder = Path(tempfile.mkdtemp(prefix="sw-channel-"))
    settings = ExecutorSettings(max_body_bytes=2 * 1024 * 1024)
    app = create_app(token=TOKEN, settings=settings, channel=folder / SOCKET_NAME)
    lifespan = app.router.lifespan_context(app)
    await lifespan.__aenter__()
    try:
        yield Executor(app, folder / SOCKET_NAME)
    finally:
        await lifespan.__aexit__(None, None, None)
        shutil.rmtree(folder, ignore_errors=True)


def _head(script: str = "run.py", inputs: Sequence[tuple[str, int]] = (), **sizes: Any) -> bytes:
    head = RunHead(
        request=ExecutorRequest(script=script),
        package=sizes.pop("package", 0),
        inputs=list(inputs),
        **sizes,
    )
    return head.model_dump_json().encode()


async def _exchange(
    channel: Path, *parts: bytes, go: bool = True
) -> tuple[int, dict[str, Any]] | None:
    """Send `parts` (and the go byte), then the answer: its status and body; None when the
    executor closed without one."""
    reader, writer = await asyncio.open_unix_connection(str(channel))
    try:
        for part in parts:
            writer.write(part)
        if go:
            writer.write(GO)
        await writer.drain()
        try:
            status, body = await read_answer(reader, 1 << 24)
        except asyncio.IncompleteReadError:
            return None
        answer: dict[str, Any] = json.loads(body)
        return status, answer
    finally:
        writer.close()


_NEGATIVE = json.dumps({"request": {"script": "run.py"}, "package": -1}).encode()


def _run_parts(script: str = "run.py", data: bytes = b"hello") -> list[bytes]:
    package = make_package(SCRIPTS)
    return [
        frame(TOKEN.encode()),
        frame(_head(script, [("a.txt", len(data))], package=len(package))),
        package,
        data,
    ]


async def test_a_run_over_the_channel_is_one_execution(executor: Executor) -> None:
    assert stat.S_IMODE(os.stat(executor.channel).st_mode) == 0o600

    answered = await _exchange(executor.channel, *_run_parts())

    assert answered is not None
    status, result = answered
    assert status == 200, result
    assert result["exit_code"] == 0
    assert result["stdout"] == "hello\n"
    assert executor.status == "done"
    again = await _exchange(executor.channel, *_run_parts())
    assert again is not None
    assert again[0] == 409


@pytest.mark.parametrize(
    ("parts", "status", "words"),
    [
        ([frame(b"wrong-token")], 401, "token"),
        ([frame(b"x" * 5000)], 401, "token"),  # over the token frame's limit: never read
        ([frame(TOKEN.encode()), frame(b"{not json")], 422, "bad run head"),
        ([frame(TOKEN.encode()), (HEAD_MAX_BYTES + 1).to_bytes(4, "big")], 413, "over the limit"),
        ([frame(TOKEN.encode()), frame(_head(package=3 * 1024 * 1024))], 413, "MAX_BODY_BYTES"),
        ([frame(TOKEN.encode()), frame(_NEGATIVE)], 422, "package"),
        ([frame(TOKEN.encode()), frame(_head(inputs=[("a", 1)] * 257))], 400, "more than 256"),
        ([frame(TOKEN.encode()), frame(_head(script="../x.py", package=0))], 400, "'..'"),
    ],
)
async def test_a_bad_request_is_refused_and_nothing_ran(
    executor: Executor, parts: list[bytes], status: int, words: str
) -> None:
    answered = await _exchange(executor.channel, *parts, go=False)

    assert answered is not None
    assert answered[0] == status, answered
    assert words in answered[1]["detail"]
    # Nothing ran: the one-shot executor still takes its execution.
    assert executor.status == "ready"
    done = await _exchange(executor.channel, *_run_parts())
    assert done is not None
    assert done[0] == 200, done


async def test_nothing_runs_before_the_go_byte_and_a_drop_leaves_nothing(
    executor: Executor,
) -> None:
    _reader, writer = await asyncio.open_unix_connection(str(executor.channel))
    for part in _run_parts(data=b"dropped"):
        writer.write(part)
    await writer.drain()
    await asyncio.sleep(0.5)  # the workspace is filled meanwhile
    assert executor.status == "busy"
    writer.close()  # no go byte: the run is dropped

    async def ready() -> bool:
        return executor.status == "ready"

    for _ in range(200):
        if await ready():
            break
        await asyncio.sleep(0.02)
    assert executor.status == "ready"
    package = make_package(SCRIPTS)
    answered = await _exchange(
        executor.channel,
        frame(TOKEN.encode()),
        frame(_head("lists.py", package=len(package))),
        package,
    )
    assert answered is not None
    assert answered[0] == 200, answered
    assert answered[1]["stdout"] == "[]\n"  # nothing of the dropped request is left


async def test_a_byte_other_than_go_runs_nothing(executor: Executor) -> None:
    answered = await _exchange(executor.channel, *_run_parts(), b"\x02", go=False)

    assert answered is not None
    assert answered[0] == 400
    assert "go byte" in answered[1]["detail"]
    assert executor.status == "ready"


async def test_the_manager_reads_a_refusal_sent_while_it_was_writing(
    executor: Executor, tmp_path: Path
) -> None:
    """An executor that has run refuses the next run at its head (409) and closes; the manager,
    still writing a large request, reads that answer rather than calling the sandbox lost."""
    first = await _exchange(executor.channel, *_run_parts())
    assert first is not None
    assert first[0] == 200
    client = ExecutorClient(store=LocalArtifactStore(tmp_path / "store"), masker=SecretMasker([]))
    sandbox = Sandbox("s1", "http://127.0.0.1:9", TOKEN, channel=executor.channel)
    request = ExecuteRequest(
        execution_id="e1", run_id="r1", skill="demo", version="a" * 64, script="run.py"
    )
    run = SandboxRun(
        request=request,
        body=ExecutorRequest(script="run.py"),
        package=make_package(SCRIPTS),
        inputs=[("a.txt", os.urandom(1024 * 1024))],
    )
    try:
        result = await client.run(sandbox, run, handover=Handover())
    finally:
        await client.aclose()

    assert result.status == "error"
    assert result.error is not None
    assert "one-shot" in result.error, result.error


async def test_a_path_too_long_for_a_socket_leaves_runs_to_http(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    app = create_app(token=TOKEN, channel=deep / SOCKET_NAME)
    lifespan = app.router.lifespan_context(app)
    await lifespan.__aenter__()
    try:
        assert app.state.channel is None
        assert not (deep / SOCKET_NAME).exists()
    finally:
        await lifespan.__aexit__(None, None, None)
