"""Visible retries against a real OpenAI-compatible server on loopback that answers 503 twice
and then the answer (``tests.llm_server``): on both engines each retry reaches the run's
followers and the API's SSE stream as a ``retrying`` note, in one line (call, attempt n of N,
the wait, the cause), and the run completes; the same lines in the output of real
``skillweave run`` subprocesses (live view and ``--json``) and of ``skillweave runs logs -f``.

On Temporal the retries' waits are the workflow's retry policy (1 s, then 2 s: the engine's
back-off, :class:`~skillweave.engines.retries.Backoff`); the direct engine's are set short
here, and in the subprocesses they are the same 1 s and 2 s. The notes' words come from the
failed attempts' heartbeat details, what the Temporal UI shows on the pending activity.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from skillweave.agent import AgentSpec
from skillweave.api.run_events import server_sent_events
from skillweave.config import ModelSettings, Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.contract import ActivityTimeouts
from skillweave.engines.notes import FollowNote
from skillweave.engines.retries import Backoff
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.factory import ModelProviders
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.agent.harness import FakeSandbox, sample_library
from tests.integration.temporal.harness import start_dev_server, unique
from tests.llm_server import StrictLLMServer, strict_llm_server, text_reply, unavailable_503
from workflows.worker import build_worker

pytestmark = pytest.mark.timeout(240)

ATTEMPTS = 4
CAUSE = "HTTP 503 Service Unavailable: Loading model"


def _line(attempt: int, of: int, wait: float, *, model: str = "openai:m") -> str:
    return f"model {model}: attempt {attempt} of {of} failed: {CAUSE}; retrying in {wait:.1f} s"


def _unavailable_twice(server: StrictLLMServer, answer: str) -> None:
    server.script(unavailable_503(), unavailable_503(), text_reply(answer))


@pytest.fixture
async def server() -> AsyncIterator[StrictLLMServer]:
    async with strict_llm_server() as running:
        yield running


@contextlib.asynccontextmanager
async def _services(tmp_path: Path, server: StrictLLMServer) -> AsyncIterator[AgentServices]:
    store = LocalArtifactStore(tmp_path / "store")
    models = ModelProviders(
        ModelSettings(
            profiles={"m": {"provider": "openai", "name": "m", "base_url": server.base_url}}
        )
    )
    try:
        yield AgentServices(
            settings=Settings(_env_file=None),
            registry=sample_library(tmp_path / "skills"),
            store=store,
            provider=ScriptedProvider.from_yaml("turns:\n  - say: not this one\n"),
            model="scripted",
            sandbox=FakeSandbox(store),  # type: ignore[arg-type]
            models=models,
        )
    finally:
        await models.aclose()


async def _follow_and_stream(engine: Any, run_id: str) -> tuple[list[Any], str]:
    """What a follower and the API's SSE stream of the run get, side by side, to its end."""

    async def follow() -> list[Any]:
        return [item async for item in engine.follow(run_id)]

    async def stream() -> str:
        return b"".join([chunk async for chunk in server_sent_events(engine, run_id, 0)]).decode()

    followed, streamed = await asyncio.gather(follow(), stream())
    return followed, streamed


def _check(followed: list[Any], streamed: str, lines: list[str], *, late: bool = False) -> None:
    """The followers told `lines`, one retrying note each, between the steps. `late`: a
    follower reading the server's pending activities tells the retries from the moment it
    first reads them (on a busy host the first backoff may pass before): a suffix of them."""
    kinds = [item.kind for item in followed]
    told = kinds.count("retrying")
    expected = lines[-told:] if late and told else lines
    assert told >= (1 if late else len(lines)), kinds
    steps = ["model_called", "answered", "run_finished"]
    assert kinds == ["run_started", *(["retrying"] * len(expected)), *steps]
    notes = [item for item in followed if isinstance(item, FollowNote)]
    assert [note.detail for note in notes] == expected
    assert [note.retry.line() for note in notes if note.retry is not None] == expected
    # The SSE stream: each retry a note with no id (a reconnect resumes after the last step),
    # between the steps, which keep their ids.
    blocks = [block for block in streamed.split("\n\n") if block.startswith(("id:", "event:"))]
    retries = [block for block in blocks if block.startswith("event: retrying\n")]
    details = [json.loads(block.partition("data: ")[2])["detail"] for block in retries]
    assert details == (lines[-len(details) :] if late else lines), details
    assert details, streamed
    steps = [block.splitlines()[0] for block in blocks if block.startswith("id:")]
    assert steps == ["id: 1", "id: 2", "id: 3", "id: 4"]


async def test_the_direct_engine_tells_each_retry_to_followers_and_the_sse_stream(
    tmp_path: Path, server: StrictLLMServer
) -> None:
    _unavailable_twice(server, "direct answered")
    async with _services(tmp_path, server) as services:
        engine = DirectEngine(services, backoff=Backoff(initial=0.2, attempts=ATTEMPTS))
        run = await engine.start(
            RunRequest(run_id=unique("direct"), task="Say hello.", agent=AgentSpec(model="m"))
        )
        followed, streamed = await _follow_and_stream(engine, run)
        result = await engine.result(run)
    assert result.status == "completed", result
    assert result.answer == "direct answered"
    _check(followed, streamed, [_line(1, ATTEMPTS, 0.2), _line(2, ATTEMPTS, 0.4)])
    assert len(server.requests) == 3


async def test_the_temporal_engine_tells_each_retry_from_the_pending_activity(
    tmp_path: Path, server: StrictLLMServer
) -> None:
    _unavailable_twice(server, "temporal answered")
    env = await start_dev_server(LocalArtifactStore(tmp_path / "store"))
    try:
        async with _services(tmp_path, server) as services:
            task_queue = unique("tq")
            async with build_worker(
                env.client,
                services,
                task_queue=task_queue,
                store_id=await store_identity(services.store),
                heartbeat_seconds=0.5,
                limits=ActivityTimeouts(heartbeat_seconds=5, max_attempts=ATTEMPTS),
            ):
                engine = TemporalEngine(
                    env.client, task_queue=task_queue, poll_seconds=0.05, store=services.store
                )
                run = await engine.start(
                    RunRequest(
                        run_id=unique("temporal"), task="Say hello.", agent=AgentSpec(model="m")
                    )
                )
                followed, streamed = await _follow_and_stream(engine, run)
                result = await engine.result(run)
    finally:
        await env.shutdown()
    assert result.status == "completed", result
    assert result.answer == "temporal answered"
    # "model openai:m", not the activity's name: the words the failed attempt put in its
    # heartbeat details, which the UI shows on the pending activity.
    _check(followed, streamed, [_line(1, ATTEMPTS, 1.0), _line(2, ATTEMPTS, 2.0)], late=True)
    assert len(server.requests) == 3


# --- the CLI --------------------------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    return {
        **base,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": '["bundled"]',
        **extra,
    }


async def _skillweave(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skillweave.cli",
        *args,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


def _shown(stderr: str) -> str:
    return " ".join(stderr.split())


async def test_skillweave_run_shows_each_retry_live_and_beside_json_lines(
    tmp_path: Path, server: StrictLLMServer
) -> None:
    env = _env(
        tmp_path,
        WORKFLOW__EXECUTION_ENGINE="direct",
        MODEL__BASE_URL=server.base_url,
        MODEL__API_KEY="sk-local-test",
    )
    lines = [_line(1, 8, 1.0, model="openai:m"), _line(2, 8, 2.0, model="openai:m")]

    _unavailable_twice(server, "answered after two 503s")
    code, out, err = await _skillweave(tmp_path, env, "run", "Say hello", "--model", "openai:m")
    assert code == 0, out + err
    for line in lines:
        assert f"retrying · {line}" in _shown(err), err
    assert "answered after two 503s" in out

    _unavailable_twice(server, "answered in JSON")
    code, out, err = await _skillweave(
        tmp_path, env, "run", "Say hello", "--model", "openai:m", "--json"
    )
    assert code == 0, out + err
    # stdout keeps only the events and the result; the notes go to stderr.
    records = [json.loads(line) for line in out.splitlines()]
    assert records[-1]["kind"] == "result"
    assert records[-1]["status"] == "completed"
    assert "retrying" not in {record["kind"] for record in records}
    for line in lines:
        assert f"retrying · {line}" in _shown(err), err


async def test_run_and_runs_logs_on_temporal_show_each_retry(
    tmp_path: Path, server: StrictLLMServer
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    environment = await start_dev_server(store)
    task_queue = unique("tq")
    env = _env(
        tmp_path,
        WORKFLOW__EXECUTION_ENGINE="temporal",
        WORKFLOW__TEMPORAL_ADDRESS=environment.client.service_client.config.target_host,
        WORKFLOW__TASK_QUEUE=task_queue,
        MODEL__BASE_URL=server.base_url,
        MODEL__API_KEY="sk-local-test",
    )
    lines = [_line(1, 8, 1.0), _line(2, 8, 2.0)]
    models = ModelProviders(
        ModelSettings(
            provider="openai", name="m", base_url=server.base_url, api_key="sk-local-test"
        )
    )
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=models.provider_for(None),
        model="m",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
        models=models,
    )
    try:
        async with build_worker(
            environment.client,
            services,
            task_queue=task_queue,
            store_id=await store_identity(store),
            heartbeat_seconds=0.5,
        ):
            for flags in ((), ("--json",)):
                _unavailable_twice(server, "answered on temporal")
                code, out, err = await _skillweave(
                    tmp_path, env, "run", "Say hello", "--model", "openai:m", *flags
                )
                assert code == 0, out + err
                for line in lines:
                    assert f"retrying · {line}" in _shown(err), err
                assert "answered on temporal" in out

            # A run another door started, followed with `runs logs -f` while it retries: three
            # failures, so that the last wait (4 s) outlasts the command's start on a busy host.
            server.script(*[unavailable_503()] * 3, text_reply("answered for the logs"))
            lines = [*lines, _line(3, 8, 4.0)]
            engine = TemporalEngine(environment.client, task_queue=task_queue, store=store)
            run = await engine.start(
                RunRequest(run_id=unique("logs"), task="Say hello.", agent=AgentSpec())
            )
            code, out, err = await _skillweave(tmp_path, env, "runs", "logs", "-f", run)
            assert code == 0, out + err
            # A follower that comes late tells the retries from the moment it reads the run (a
            # retry is not kept with the run's events): the last one at least, none other.
            told = [_shown(row) for row in err.splitlines() if row.startswith("retrying · ")]
            assert told, err
            assert told[-1] == f"retrying · {lines[-1]}", err
            assert set(told) <= {f"retrying · {line}" for line in lines}, err
            assert "finished   completed" in out
    finally:
        await models.aclose()
        await environment.shutdown()
