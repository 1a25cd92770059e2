"""The ``workers`` check of ``doctor`` and the start-up checks (``cli.service_checks``): what
the roll call of the task queue says about this process's store, for a client and for a
worker. The roll call itself is read from a real server in
tests/integration/temporal/test_store_routing."""

from __future__ import annotations

from typing import Any

import pytest

from skillweave.cli.probe import Check, Probe, Role
from skillweave.cli.service_checks import workers_check
from skillweave.config import Settings
from skillweave.engines import temporal
from skillweave.engines.temporal import Roll

A, B, C = "a" * 16, "b" * 16, "c" * 16


def _worker(pid: int, store: str) -> str:
    return f"{pid}@host store={store}"


async def _check(monkeypatch: pytest.MonkeyPatch, role: Role, roll: Roll) -> Check:
    async def connect(_settings: Any) -> object:
        return object()

    async def read_roll(_client: object, task_queue: str, store_id: str) -> Roll:
        assert (task_queue, store_id) == (roll.task_queue, roll.store_id)
        return roll

    monkeypatch.setattr(temporal, "connect", connect)
    monkeypatch.setattr(temporal, "read_roll", read_roll)
    settings = Settings(_env_file=None, workflow={"task_queue": "q"})
    return await workers_check(Probe(settings, role, store_id=roll.store_id))


async def test_a_client_whose_store_no_worker_uses_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    check = await _check(monkeypatch, "doctor", Roll("q", C, (), (_worker(1, A), _worker(2, B))))
    assert (check.status, check.transient) == ("fail", True)  # a worker may yet start on C
    assert check.detail.startswith(f"no worker on task queue 'q' works on this process's store {C}")
    assert f"work on {A}, {B}" in check.detail
    assert "wait for ever" in check.detail


async def test_a_client_with_workers_of_its_store_is_ok_or_told_of_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alone = await _check(monkeypatch, "api", Roll("q", A, (_worker(1, A),), (_worker(1, A),)))
    assert (alone.status, alone.detail) == ("ok", f"1 worker on store {A} polls task queue 'q@{A}'")
    shared = Roll("q", A, (_worker(1, A),), (_worker(1, A), _worker(2, B)))
    mixed = await _check(monkeypatch, "doctor", shared)
    assert mixed.status == "warn"
    assert f"workers of store {B} poll 'q' too" in mixed.detail


async def test_no_worker_at_all_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    check = await _check(monkeypatch, "run", Roll("q", A, (), ()))
    assert (check.status, check.transient) == ("warn", True)
    assert f"no worker polls task queue 'q@{A}' yet" in check.detail


async def test_a_worker_is_told_of_other_stores_on_its_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    told = await _check(monkeypatch, "worker", Roll("q", B, (), (_worker(1, A), _worker(2, B))))
    assert told.status == "warn"
    assert told.detail == (
        f"workers of store {A} poll task queue 'q' too; this worker works on {B}: runs started "
        f"against {A} never run here, nor {B}'s there"
    )
    fine = await _check(monkeypatch, "worker", Roll("q", B, (), (_worker(2, B),)))
    assert fine.status == "ok"


async def test_the_direct_engine_has_no_workers_to_read() -> None:
    settings = Settings(_env_file=None, workflow={"execution_engine": "direct"})
    check = await workers_check(Probe(settings, "doctor", store_id=A))
    assert check.status == "ok"
    assert "not used" in check.detail
