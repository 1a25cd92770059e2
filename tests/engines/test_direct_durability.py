"""The direct engine's transcript is written behind: a run's records are published at once
and fsynced in the background, and the run tells its end (``run_finished``, its result) only
once every record is on disk; a record that cannot get there fails the run, saying so.

A real local store in a temporary folder, ``os.fsync`` watched (the paths it was called on)
and slow for the transcript's files, so that the run gets ahead of the disk.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.transcripts import stored_records, transcript_log_path

_SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
  - tool_calls: [{name: read_skill_resource, arguments: {skill: notes, path: references/guide.md}}]
  - say: "done"
"""


class _Fsyncs:
    def __init__(self) -> None:
        self.paths: set[Path] = set()
        self.failing = False

    def __call__(self, fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if path.name.endswith("transcript"):  # the run's transcript log
            if self.failing:
                raise OSError(5, "Input/output error")
            time.sleep(0.02)  # a slow disk: the run gets ahead of it
        self.paths.add(path)


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> _Fsyncs:
    watched = _Fsyncs()
    monkeypatch.setattr(os, "fsync", watched)
    return watched


def _engine(tmp_path: Path) -> tuple[DirectEngine, LocalArtifactStore]:
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml(_SCRIPT),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    return DirectEngine(services), store


async def test_the_end_is_told_once_every_record_is_on_disk(
    tmp_path: Path, fsyncs: _Fsyncs
) -> None:
    engine, store = _engine(tmp_path)
    await engine.start(RunRequest(run_id="r1", task="read the guide"))
    log = transcript_log_path(store, "r1")
    async for event in engine.events("r1"):
        if event.kind == "run_finished":
            # task, activation, its result, the read, its result, …: all in the run's log
            assert len(stored_records(store, "r1")) >= 5
            assert log in fsyncs.paths
            assert log.parent in fsyncs.paths
    result = await engine.result("r1")
    assert result.status == "completed"


async def test_a_record_that_cannot_reach_the_disk_fails_the_run(
    tmp_path: Path, fsyncs: _Fsyncs
) -> None:
    engine, _ = _engine(tmp_path)
    fsyncs.failing = True
    await engine.start(RunRequest(run_id="r1", task="read the guide"))
    ends = [event async for event in engine.events("r1") if event.kind == "run_finished"]
    result = await engine.result("r1")
    assert result.status == "failed"
    assert "the transcript is not on disk" in (result.reason or "")
    assert "Input/output error" in (result.reason or "")
    assert [(end.status, end.detail) for end in ends] == [("failed", result.reason)]
