"""A worker's log says an activity failure the activities classified in one line (the SDK's
"Completing activity as failed" comes with a traceback otherwise); an unexpected exception keeps
its traceback, since that is a bug to read."""

from __future__ import annotations

import logging

import pytest
from temporalio.exceptions import ApplicationError

from skillweave.engines.temporal import configure_logging


def _logged(caplog: pytest.LogCaptureFixture, error: BaseException) -> logging.LogRecord:
    logger = logging.getLogger("temporalio.activity")
    try:
        raise error
    except BaseException:
        logger.warning(
            "Completing activity as failed (%s)", {"activity_type": "invoke_model"}, exc_info=True
        )
    [record] = [r for r in caplog.records if r.name == "temporalio.activity"]
    return record


def test_a_classified_failure_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    configure_logging(verbose=True)
    error = ApplicationError(
        "a scripted model named by a request must be a script file",
        type="ConfigError",
        non_retryable=True,
    )
    record = _logged(caplog, error)
    text = caplog.text
    assert record.exc_info is None
    assert "Traceback" not in text
    assert len(text.strip().splitlines()) == 1
    assert "Completing activity as failed ({'activity_type': 'invoke_model'}): ConfigError: " in (
        record.getMessage()
    )
    assert record.getMessage().endswith("(not retryable)")


def test_an_unexpected_exception_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    configure_logging(verbose=True)
    record = _logged(caplog, RuntimeError("a bug"))
    assert record.exc_info is not None
    assert "Traceback" in caplog.text
