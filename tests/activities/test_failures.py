"""The error mapping at the activity boundary: every branch of the rule, as Temporal sees it.
That the direct engine decides the same for every class is tests/engines/test_retries.py."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError

from activities.failures import FAILURE_MAX_BYTES, application_error, raises_application_errors
from skillweave.errors import (
    AgentError,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ConfigError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    ManagerUnreachableError,
    ModelError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
    SandboxStartError,
    ScriptedModelError,
    SkillNotFoundError,
    SkillweaveError,
    StorageError,
    ToolSchemaError,
)

RETRIED = [
    ModelError("overloaded", retryable=True, status=529),
    SandboxStartError("the pod never became ready"),
    SandboxError("cannot reach the MCP manager"),
    ManagerUnreachableError("cannot reach the MCP manager at http://m:8090: ConnectError"),
    SandboxError("MCP manager error 502: bad gateway"),
    StorageError("S3 is down", code="InternalError"),
]
NOT_RETRIED = [
    ModelError("bad request", status=400),
    ScriptedModelError("no turn left"),
    ExecutionRejectedError(422, "unknown script"),
    SandboxStartError("sandboxes cannot start: bubblewrap is missing", permanent=True),
    ExecutionConflictError("wf/script-1", "was interrupted"),
    ArtifactNotFoundError("runs/r1/inputs/a.csv"),
    ArtifactIntegrityError("runs/r1/inputs/a.csv", "3 bytes", "4 bytes"),
    InvalidKeyError("../x", "the key has a '..' segment"),
    SkillNotFoundError("pdf"),
    ToolSchemaError("not a tool schema"),
    AgentError("broken invariant"),
    ConfigError("bad settings"),
    SkillweaveError("anything else"),
]


@pytest.mark.parametrize("exc", RETRIED, ids=lambda e: type(e).__name__)
def test_transient_errors_are_retried_under_the_policy(exc: SkillweaveError) -> None:
    error = application_error(exc)
    assert not error.non_retryable
    assert error.next_retry_delay is None
    assert error.type == type(exc).__name__
    assert error.message == str(exc)


@pytest.mark.parametrize("exc", NOT_RETRIED, ids=lambda e: type(e).__name__)
def test_other_skillweave_errors_fail_at_once(exc: SkillweaveError) -> None:
    error = application_error(exc)
    assert error.non_retryable
    assert error.next_retry_delay is None
    assert error.type == type(exc).__name__
    assert error.message == str(exc)


def test_a_model_error_retries_after_the_servers_retry_after() -> None:
    error = application_error(ModelError("rate limited", retryable=True, retry_after=7.5))
    assert not error.non_retryable
    assert error.next_retry_delay == timedelta(seconds=7.5)


def test_a_full_pool_retries_after_its_retry_after() -> None:
    error = application_error(PoolExhaustedError("no sandbox free", retry_after=3))
    assert not error.non_retryable
    assert error.type == "PoolExhaustedError"
    assert error.next_retry_delay == timedelta(seconds=3)


def test_a_lost_sandbox_retries_at_once() -> None:
    lost = SandboxLostError("wf/script-3", "the pod died")
    error = application_error(lost)
    assert not error.non_retryable
    assert error.type == "SandboxLostError"
    assert error.next_retry_delay == timedelta(0)


def test_an_execution_under_another_claim_retries_after_the_lease() -> None:
    busy = ExecutionInProgressError("wf/script-3", retry_after=7.0)
    error = application_error(busy)
    assert not error.non_retryable
    assert error.type == "ExecutionInProgressError"
    assert error.next_retry_delay == timedelta(seconds=7)


def test_a_negative_retry_after_does_not_make_a_negative_delay() -> None:
    error = application_error(ModelError("odd server", retryable=True, retry_after=-2))
    assert not error.next_retry_delay


def test_a_retry_after_beyond_the_longest_back_off_is_capped() -> None:
    error = application_error(ModelError("come back tomorrow", retryable=True, retry_after=86400))
    assert error.next_retry_delay == timedelta(seconds=60)


async def test_the_decorator_maps_skillweave_errors_into_one_line_and_fields() -> None:
    original = SkillNotFoundError("pdf", available=("notes",))

    @raises_application_errors
    async def fails() -> None:
        raise original

    with pytest.raises(ApplicationError) as raised:
        await fails()
    assert raised.value.type == "SkillNotFoundError"
    assert raised.value.non_retryable
    assert raised.value.message == str(original).splitlines()[0]
    assert raised.value.__cause__ is None  # a chain would be encoded below it, unbounded
    (details,) = raised.value.details
    assert details["error"] == "SkillNotFoundError"
    assert details["message"] == str(original)
    assert any("fails" in frame for frame in details["where"])


@pytest.mark.parametrize(
    "exc", [OSError("disk"), ValueError("a bug")], ids=lambda e: type(e).__name__
)
async def test_the_decorator_maps_other_errors_and_they_are_retried(exc: Exception) -> None:
    @raises_application_errors
    async def fails() -> None:
        raise exc

    with pytest.raises(ApplicationError) as raised:
        await fails()
    assert raised.value.type == type(exc).__name__
    assert not raised.value.non_retryable
    assert raised.value.message == str(exc)


@pytest.mark.parametrize(
    "exc", [asyncio.CancelledError(), ApplicationError("as is")], ids=lambda e: type(e).__name__
)
async def test_the_decorator_leaves_cancellation_and_temporal_errors_untouched(
    exc: BaseException,
) -> None:
    @raises_application_errors
    async def fails() -> None:
        raise exc

    with pytest.raises(type(exc)) as raised:
        await fails()
    assert raised.value is exc


async def test_a_failure_leads_with_its_cause_in_one_line_under_the_size_limit() -> None:
    """What the Temporal UI shows of a retried step: not "Failure exceeds size limit.", but the
    cause, whatever the chain below it and however deep the traceback."""

    def deep(depth: int) -> None:
        if depth:
            deep(depth - 1)
            return
        raise ConnectionError("connection refused\n" + "errno 111 " * 2000)

    @raises_application_errors
    async def fails() -> None:
        try:
            deep(60)
        except ConnectionError as exc:
            try:
                raise OSError("transport closed " + "x" * 5000) from exc
            except OSError as inner:
                raise SandboxError(
                    "cannot reach the MCP manager at http://127.0.0.1:9/ (connection refused)"
                    "\n" + "retry details " * 500
                ) from inner

    with pytest.raises(ApplicationError) as raised:
        await fails()
    failure = Failure()
    await DataConverter.default.encode_failure(raised.value, failure)
    assert failure.ByteSize() <= FAILURE_MAX_BYTES, failure.ByteSize()
    assert failure.message == (
        "cannot reach the MCP manager at http://127.0.0.1:9/ (connection refused)"
    )
    assert "\n" not in failure.message
    assert not failure.HasField("cause")
    decoded = await DataConverter.default.decode_failure(failure)
    assert isinstance(decoded, ApplicationError)
    (details,) = decoded.details
    assert details["causes"] == [
        "OSError: transport closed " + "x" * 222 + "…",
        "ConnectionError: connection refused",
    ]
    assert not decoded.non_retryable


async def test_the_decorator_returns_the_result() -> None:
    @raises_application_errors
    async def works(x: int, *, y: int) -> int:
        return x + y

    assert await works(1, y=2) == 3
