"""Repeated identical warnings and errors are counted, not written (issue 28, part 3): a
manager down for a while is two lines on its workers, not one per retried attempt."""

from __future__ import annotations

import logging

from skillweave.telemetry.logs import _Repeats
from tests.telemetry.support import captured_logs


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(
    message: str, *, level: int = logging.ERROR, error: Exception | None = None
) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord("skillweave.test", level, __file__, 1, message, (), exc_info)


def test_identical_errors_in_a_window_are_written_once_then_counted() -> None:
    clock = Clock()
    repeats = _Repeats(60, clock)
    assert repeats.admit(record("cannot reach the manager")) == (True, [])
    for _ in range(40):
        clock.now += 1
        assert repeats.admit(record("cannot reach the manager")) == (False, [])
    assert repeats.admit(record("another problem"))[0]  # not the same: written

    clock.now = 61
    write, due = repeats.admit(record("cannot reach the manager"))
    assert write  # a new window
    (line,) = due
    assert line.getMessage() == "cannot reach the manager (repeated 40 more times in 61 s)"
    assert line.levelno == logging.ERROR


def test_the_same_failure_with_a_different_line_around_it_is_a_repeat() -> None:
    """The SDK's own line names the attempt; the exception is what repeats."""
    repeats = _Repeats(60, Clock())
    error = ConnectionError("cannot reach the MCP manager")
    assert repeats.admit(record("activity failed (attempt 1)", level=logging.WARNING, error=error))[
        0
    ]
    again = record("activity failed (attempt 2)", level=logging.WARNING, error=error)
    assert not repeats.admit(again)[0]
    other = record("activity failed (attempt 3)", level=logging.WARNING, error=OSError("disk"))
    assert repeats.admit(other)[0]
    (line,) = repeats.due()
    assert line.getMessage() == (
        "activity failed (attempt 1): ConnectionError: cannot reach the MCP manager "
        "(repeated 1 more times in 0 s)"
    )


def test_info_is_never_held_back() -> None:
    repeats = _Repeats(60, Clock())
    for _ in range(3):
        assert repeats.admit(record("pool refilled", level=logging.INFO))[0]


def test_a_service_writes_the_first_and_the_count_at_its_end() -> None:
    with captured_logs() as buffer:
        log = logging.getLogger("skillweave.test")
        for attempt in range(500):
            try:
                raise ConnectionError("cannot reach the MCP manager at http://127.0.0.1:9")
            except ConnectionError:
                log.warning("step failed (attempt %d)", attempt, exc_info=True)
        log.warning("something else")
        assert buffer.getvalue().count("step failed") == 1
        logging.getLogger().handlers[-1].close()  # the end of the process: counts written
    lines = buffer.getvalue().splitlines()
    counted = [line for line in lines if "repeated" in line]
    assert len(counted) == 1
    assert "step failed (attempt 0): ConnectionError: cannot reach the MCP manager" in counted[0]
    assert "(repeated 499 more times in" in counted[0]
    assert "something else" in buffer.getvalue()


def test_zero_writes_every_one() -> None:
    with captured_logs(log_repeat_seconds=0) as buffer:
        for _ in range(5):
            logging.getLogger("skillweave.test").error("the same")
    assert buffer.getvalue().count("the same") == 5
