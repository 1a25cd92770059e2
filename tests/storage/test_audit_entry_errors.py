"""A malformed audit entry is the input's fault, not the store's: it is told apart from a
failing store (``AuditEntryError``), never retried, and answered 422 by the API, not 503."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from skillweave.api.problems import install_problem_handlers
from skillweave.engines.retries import classify
from skillweave.errors import AuditEntryError, AuditLogError, StorageError
from skillweave.storage.audit import MAX_DETAILS_BYTES, AuditLog
from skillweave.storage.local import LocalArtifactStore


async def test_a_malformed_entry_is_an_entry_error_and_writes_nothing(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    log = AuditLog(store)
    with pytest.raises(AuditEntryError, match="over the 4096 allowed"):
        await log.record("execution", skill="s", blob="x" * MAX_DETAILS_BYTES)
    with pytest.raises(AuditEntryError):
        await log.record("execution", skill="s" * 300)
    assert await store.list("audit/") == []


def test_an_entry_error_is_not_retried_and_a_failing_store_is() -> None:
    assert not classify(AuditEntryError("details too large")).again
    assert classify(AuditLogError("cannot write 1 audit record(s): disk full")).again
    assert classify(StorageError("down")).again


async def test_the_api_answers_an_entry_error_422_and_a_failing_log_503() -> None:
    app = FastAPI()
    install_problem_handlers(app)

    @app.get("/entry")
    async def entry() -> None:
        raise AuditEntryError("audit details are 5000 bytes as JSON, over the 4096 allowed")

    @app.get("/store")
    async def store() -> None:
        raise AuditLogError("cannot write 1 audit record(s) to the store", code="SlowDown")

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        bad = await client.get("/entry")
        down = await client.get("/store")
    assert bad.status_code == 422
    assert "cannot be recorded in the audit log" in bad.json()["detail"]
    assert down.status_code == 503
    assert down.json()["error"] == "audit_unavailable"
    assert down.headers["retry-after"]
