"""What the manager stores per execution still decodes as it was written."""

from __future__ import annotations

import hashlib
import json

from mcp_manager.records import ExecutionRecord, Fingerprint, result_for
from skillweave.sandbox.models import ExecuteRequest, ExecutionLimits, ExecutionResult

REQUEST = ExecuteRequest(
    execution_id="wf/script-1",
    run_id="run-1",
    skill="csv-cleaner",
    version="a" * 64,
    script="scripts/clean.py",
    limits=ExecutionLimits(timeout_seconds=9),
)


def test_a_record_in_the_stored_format_of_today_decodes() -> None:
    """Byte for byte what managers before ExecutionRecord wrote (json.dumps of a dict)."""
    result = ExecutionResult(
        execution_id=REQUEST.execution_id, run_id=REQUEST.run_id, skill=REQUEST.skill,
        version=REQUEST.version, script=REQUEST.script, status="succeeded", exit_code=0,
        stdout="ok\n", duration_ms=12,
    )  # fmt: skip
    stored = json.dumps(
        {"fingerprint": Fingerprint.of(REQUEST).value, "result": result.model_dump(mode="json")}
    ).encode()
    record = ExecutionRecord.model_validate_json(stored)
    assert record.result == result
    assert Fingerprint.of(REQUEST).matches(record.fingerprint)


def test_a_record_of_an_early_manager_decodes() -> None:
    """A result stored when ``none`` isolation was called ``rlimits``, with fewer members."""
    stored = (
        b'{"fingerprint": "f", "result": {"execution_id": "e", "run_id": "r", "skill": "s",'
        b' "version": "v", "script": "x.py", "status": "failed", "exit_code": 1,'
        b' "isolation": "rlimits"}}'
    )
    record = ExecutionRecord.model_validate_json(stored)
    assert record.result.isolation == "rlimits"
    assert record.result.outputs == []


def test_a_record_round_trips_and_keeps_its_members() -> None:
    record = ExecutionRecord(fingerprint="f", result=result_for(REQUEST, status="cancelled"))
    data = json.loads(record.encoded())
    assert set(data) == {"fingerprint", "result"}  # what earlier managers read
    assert ExecutionRecord.model_validate_json(record.encoded()) == record


def test_a_record_without_a_fingerprint_matches_no_request() -> None:
    record = ExecutionRecord.model_validate({"result": result_for(REQUEST, status="error")})
    assert not Fingerprint.of(REQUEST).matches(record.fingerprint)


def test_a_request_has_one_fingerprint_without_its_store_id() -> None:
    """The digest of the request's members that differ from their defaults, the store id left
    out (it says where the request may run, not what it runs)."""
    digest = hashlib.sha256(
        json.dumps(
            REQUEST.model_dump(mode="json", exclude_defaults=True, exclude={"store_id"}),
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
    ).hexdigest()
    fingerprint = Fingerprint.of(REQUEST)
    assert fingerprint.value == digest
    assert fingerprint.also == ()
    assert Fingerprint.of(REQUEST.model_copy(update={"store_id": "a1b2"})) == fingerprint
    other = REQUEST.model_copy(update={"args": ["--other"]})
    assert not Fingerprint.of(other).matches(digest)


def test_a_request_without_limits_is_the_one_naming_the_managers() -> None:
    limits = ExecutionLimits(timeout_seconds=30)
    bare = REQUEST.model_copy(update={"limits": None})
    named = Fingerprint.of(REQUEST.model_copy(update={"limits": limits}))
    assert Fingerprint.of(bare, default_limits=limits).matches(named.value)
    assert not Fingerprint.of(bare).matches(named.value)
