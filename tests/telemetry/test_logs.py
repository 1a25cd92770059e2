"""Log lines: the human and JSON formats, the run fields, one handler, and no secret in any."""

from __future__ import annotations

import io
import json
import logging
import re
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from skillweave.config import ObservabilitySettings, Settings
from skillweave.telemetry import bound
from skillweave.telemetry.logs import configure_logging, register_secrets
from tests.telemetry.support import captured_logs, logging_restored

log = logging.getLogger("skillweave.test")

SECRET = "sk-live-7f3a9c1e"


def _lines(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


def _objects(buffer: io.StringIO) -> list[dict[str, str]]:
    return [json.loads(line) for line in _lines(buffer)]


# --- text -------------------------------------------------------------------------------------


def test_text_is_the_default_human_line_with_the_bound_fields_appended() -> None:
    with captured_logs() as buffer:
        log.info("before %d", 1)
        with bound(run_id="run-1", skill="csv-profiler"), bound(script="scripts/p.py"):
            log.warning("inside")
        log.info("after")

    before, inside, after = _lines(buffer)
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert re.fullmatch(stamp + r" INFO skillweave\.test: before 1", before)
    assert inside.endswith(
        " WARNING skillweave.test: inside [run_id=run-1 skill=csv-profiler script=scripts/p.py]"
    )
    assert after.endswith(" INFO skillweave.test: after")


def test_text_shows_the_traceback_below_the_line() -> None:
    with captured_logs() as buffer:
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("it failed")

    first, *rest = _lines(buffer)
    assert first.endswith("ERROR skillweave.test: it failed")
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "ValueError: boom"


# --- json -------------------------------------------------------------------------------------


def test_json_is_one_object_per_line_with_time_level_logger_message_and_service() -> None:
    with captured_logs(log_format="json", service="skillweave-worker") as buffer:
        log.info("two\nlines and a %s", {"not": "json"})

    [line] = _lines(buffer)
    record = json.loads(line)
    assert record == {
        "time": record["time"],
        "level": "INFO",
        "logger": "skillweave.test",
        "message": "two\nlines and a {'not': 'json'}",
        "service": "skillweave-worker",
    }
    assert record["time"].endswith("Z")
    stamped = datetime.fromisoformat(record["time"])
    assert stamped.utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - stamped).total_seconds()) < 60


def test_json_carries_the_bound_fields_only_inside_the_block() -> None:
    with captured_logs(log_format="json") as buffer:
        with bound(run_id="run-1", execution_id="wf/script-4", skill="pdf", script="s.py"):
            log.info("inside")
        log.info("outside")

    inside, outside = _objects(buffer)
    assert {k: inside[k] for k in ("run_id", "execution_id", "skill", "script")} == {
        "run_id": "run-1",
        "execution_id": "wf/script-4",
        "skill": "pdf",
        "script": "s.py",
    }
    assert not {"run_id", "execution_id", "skill", "script"} & set(outside)


def test_json_takes_fields_from_extra_over_the_bound_ones_as_strings() -> None:
    with captured_logs(log_format="json") as buffer, bound(run_id="bound", skill="pdf"):
        log.info("given", extra={"run_id": 42})

    [record] = _objects(buffer)
    assert (record["run_id"], record["skill"]) == ("42", "pdf")


def test_json_puts_the_traceback_in_exception_and_a_stack_in_stack() -> None:
    with captured_logs(log_format="json") as buffer:
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("it failed")
        log.error("no traceback")
        log.info("where", stack_info=True)

    failed, plain, where = _objects(buffer)
    assert failed["message"] == "it failed"
    assert failed["exception"].startswith("Traceback (most recent call last):")
    assert failed["exception"].endswith("ValueError: boom")
    assert "exception" not in plain
    assert "stack" not in plain
    assert where["stack"].startswith("Stack (most recent call last):")


# --- the handler ------------------------------------------------------------------------------


def test_configuring_twice_keeps_one_handler_and_leaves_others_alone() -> None:
    foreign = logging.NullHandler()
    with captured_logs(log_format="json") as buffer:
        root = logging.getLogger()
        root.addHandler(foreign)
        configure_logging(ObservabilitySettings(), service="skillweave-test", stream=buffer)
        log.info("once")
        assert foreign in root.handlers

    [line] = _lines(buffer)
    assert line.endswith(" INFO skillweave.test: once")


def test_the_level_applies_to_skillweave_and_libraries_report_warnings() -> None:
    library = logging.getLogger("somelibrary")
    with captured_logs(log_level="DEBUG") as buffer:
        log.debug("ours")
        library.info("chatter")
        library.warning("theirs")

    assert [line.rsplit(": ", 1)[1] for line in _lines(buffer)] == ["ours", "theirs"]


def test_without_a_stream_lines_go_to_the_current_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with logging_restored():
        configure_logging(ObservabilitySettings(), service="skillweave-test")
        log.warning("to stderr")
    captured = capsys.readouterr()
    assert captured.err.rstrip().endswith("skillweave.test: to stderr")
    assert captured.out == ""


# --- secrets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_registered_secret_is_redacted_in_message_args_exception_and_fields(
    log_format: str,
) -> None:
    with captured_logs(log_format=log_format) as buffer:
        register_secrets([SECRET])
        log.info(f"key {SECRET} inline")
        log.info("key %s as an argument", SECRET)
        try:
            raise RuntimeError(f"refused {SECRET}")
        except RuntimeError:
            log.exception("failed")
        with bound(skill=SECRET):
            log.info("a field", extra={"script": f"run-{SECRET}.py"})

    text = buffer.getvalue()
    assert SECRET not in text
    assert "key *** inline" in text
    assert "key *** as an argument" in text
    assert "RuntimeError: refused ***" in text
    if log_format == "json":
        *_, fields = _objects(buffer)
        assert (fields["skill"], fields["script"]) == ("***", "run-***.py")
    else:
        assert text.rstrip().endswith("a field [skill=*** script=run-***.py]")


def test_every_secret_of_the_settings_is_registered_skill_secrets_included() -> None:
    settings = Settings(
        _env_file=None,
        model={"api_key": "model-key-1"},
        api={"token": "api-token-2", "extra_tokens": ["api-token-3"]},
        storage={"s3_secret_key": "s3-secret-4"},
        sandbox={
            "manager_token": "manager-token-5",
            "skill_secrets": {"pdf": {"PDF_KEY": SecretStr("pdf-secret-6")}},
        },
    )
    values = [
        "model-key-1",
        "api-token-2",
        "api-token-3",
        "s3-secret-4",
        "manager-token-5",
        "pdf-secret-6",
    ]
    with captured_logs(log_format="json", secrets=settings) as buffer:
        log.info("values: %s", " ".join(values))

    [record] = _objects(buffer)
    assert record["message"] == "values: " + " ".join(["***"] * len(values))


def test_short_values_are_not_registered_and_the_longest_secret_wins() -> None:
    with captured_logs() as buffer:
        register_secrets(["", "dev", "1", "abcd", "abcdefgh"])
        log.info("dev mode 1: abcdefgh abcd")

    assert _lines(buffer)[0].endswith("dev mode 1: *** ***")


def test_nothing_is_redacted_when_no_secret_is_registered() -> None:
    with captured_logs(log_format="json", secrets=Settings(_env_file=None)) as buffer:
        log.info("*** stays, and so does everything else")

    [record] = _objects(buffer)
    assert record["message"] == "*** stays, and so does everything else"


# --- terminal safety --------------------------------------------------------------------------

HOSTILE = "skill says \x1b[2J\x1b]52;c;cHduZWQ=\x07 \x9b31m \u202eevil"


def test_text_lines_show_control_sequences_escaped() -> None:
    with captured_logs() as buffer:
        log.warning("diagnostic: %s", HOSTILE)
    [line] = _lines(buffer)
    assert not any(char in line for char in "\x1b\x07\x9b\u202e")
    assert "\\x1b[2J" in line
    assert "\\u202eevil" in line


def test_json_lines_escape_what_a_terminal_would_act_on_and_keep_the_value() -> None:
    with captured_logs(log_format="json") as buffer:
        log.warning("diagnostic: %s", HOSTILE)
    [line] = _lines(buffer)
    assert not any(char in line for char in "\x1b\x07\x9b\u202e")
    assert json.loads(line)["message"] == f"diagnostic: {HOSTILE}"
