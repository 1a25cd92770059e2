"""Log lines of long-running processes: human or JSON, with the run fields, without secrets.

Each long-running entry point (``skillweave worker``, ``dev``, ``manager``, ``api``, ``mcp``
and the sandbox executor) calls :func:`configure_logging` once at start-up; it installs the
one handler on the root logger. A line carries the fields :func:`skillweave.telemetry.bound`
bound where it was logged (run id, execution id, skill, script), or those given as
``extra=`` on the record.

- ``text`` (the default): ``TIME LEVEL LOGGER: message [run_id=… skill=…]``, a traceback on
  the lines below.
- ``json``: one object per line (newlines inside values are escaped): ``time`` (ISO 8601,
  UTC), ``level``, ``logger``, ``message``, ``service``, the fields present, ``exception``
  (the formatted traceback) when there is one, ``stack`` when ``stack_info=True`` asked.

Secret values never reach a line: every secret of the settings (each ``SecretStr``, the
per-skill secrets included) and any value given to :func:`register_secrets` is replaced by
``***`` wherever it appears in the message, the traceback or a field, in both formats, by
the same :class:`~skillweave.telemetry.masker.SecretMasker` (and so in the same forms) that
masks a run's output. Values shorter than :data:`MIN_SECRET_CHARS` are not registered:
replacing ``1`` or ``dev`` everywhere would mangle ordinary text while hiding next to nothing.

Repeats are counted, not written: a warning or an error identical to one written less than
``OBSERVABILITY__LOG_REPEAT_SECONDS`` ago (the same logger, level and message, or for a record
with a traceback the same exception and text, so one failure retried over and over is one
line) is held back, and once that time is up the next record, or the end of the process,
writes one line saying how many there were (:class:`_Repeats`). A service that cannot reach
something for a minute writes two lines about it, not one per attempt.

Written by hand, not with a JSON-logging library: the stdlib's ``logging`` does the routing,
and what such a library would add (encoding a few fields) is a few lines here, beside the
redaction step both formats share, with no extra dependency in the executor's image.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final, TextIO

from pydantic import BaseModel, SecretStr

from skillweave.config import ObservabilitySettings
from skillweave.telemetry.context import FIELDS, current_fields
from skillweave.telemetry.masker import MASK, MIN_SECRET_CHARS, SecretMasker
from skillweave.terminal import terminal_safe, terminal_safe_json

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "configure_logging", "register_secrets"]

REDACTED: Final = MASK

_TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_OWN_LOGGERS: Final = ("skillweave", "mcp_manager", "sandbox_executor", "workflows", "activities")
"""Loggers ``log_level`` applies to; libraries' loggers report warnings and errors only (their
INFO is per-request chatter: every HTTP call, every served request)."""


class _Redactor:
    """Masks the registered secret values in a text (the masker's one rule)."""

    def __init__(self) -> None:
        self._masker = SecretMasker()
        self._lock = threading.Lock()

    def register(self, values: Iterable[str]) -> None:
        with self._lock:
            values = self._masker.values | {v for v in values if len(v) >= MIN_SECRET_CHARS}
            if values != self._masker.values:
                self._masker = SecretMasker(values)

    def redact(self, text: str) -> str:
        return self._masker.mask_text(text)  # read once: a concurrent register swaps it whole


_REDACTOR = _Redactor()


def register_secrets(values: Iterable[str]) -> None:
    """Never log `values` from now on, in this process (those under :data:`MIN_SECRET_CHARS`
    characters are ignored). Registering a value twice is harmless."""
    _REDACTOR.register(values)


def _secrets_in(value: Any) -> Iterator[str]:
    """Every ``SecretStr`` value in `value`, at any depth (models, dicts, lists)."""
    if isinstance(value, SecretStr):
        yield value.get_secret_value()
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _secrets_in(getattr(value, name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _secrets_in(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _secrets_in(item)


def _fields(record: logging.LogRecord) -> dict[str, str]:
    """The run fields of `record`: those bound where it was logged, then its ``extra=``."""
    bound = current_fields()
    fields: dict[str, str] = {}
    for name in FIELDS:
        value = getattr(record, name, None) or bound.get(name)
        if value:
            fields[name] = str(value)
    return fields


class _TextFormatter(logging.Formatter):
    """``TIME LEVEL LOGGER: message [run_id=… skill=…]``, then any traceback; redacted."""

    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        fields = _fields(record)
        if not fields:
            return line
        return f"{line} [{' '.join(f'{k}={v}' for k, v in fields.items())}]"

    def format(self, record: logging.LogRecord) -> str:
        # Log lines quote attacker text (SKILL.md diagnostics, build output): a terminal must
        # not act on it.
        return terminal_safe(_REDACTOR.redact(super().format(record)))


class _JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line; every value redacted."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self._service = service

    def format(self, record: logging.LogRecord) -> str:
        redact = _REDACTOR.redact
        line: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "service": self._service,
        }
        line.update({name: redact(value) for name, value in _fields(record).items()})
        if record.exc_info and not record.exc_text:  # cached on the record, as logging does
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = redact(record.exc_text)
        if record.stack_info:
            line["stack"] = redact(self.formatStack(record.stack_info))
        return terminal_safe_json(json.dumps(line, ensure_ascii=False))


_RepeatKey = tuple[str, int, str, str]


class _Repeats:
    """Which warnings and errors to write: the first of identical ones in `window` seconds, then
    one line with how many more there were (see the module docstring). Not thread-safe: the
    handler calls it under its lock."""

    def __init__(self, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = window
        self._clock = clock
        self._open: dict[_RepeatKey, tuple[float, int, logging.LogRecord]] = {}

    @staticmethod
    def _key(record: logging.LogRecord) -> _RepeatKey:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:  # the same failure, whatever the line around it says
            return (record.name, record.levelno, type(error).__name__, str(error))
        return (record.name, record.levelno, "", record.getMessage())

    def admit(self, record: logging.LogRecord) -> tuple[bool, list[logging.LogRecord]]:
        """Whether to write `record`, and the count lines due before it."""
        now = self._clock()
        due = self.due(now)
        if record.levelno < logging.WARNING:
            return True, due
        key = self._key(record)
        held = self._open.get(key)
        if held is None:
            self._open[key] = (now, 0, record)
            return True, due
        since, count, first = held
        self._open[key] = (since, count + 1, first)
        return False, due

    def due(self, now: float | None = None) -> list[logging.LogRecord]:
        """The count lines of the windows that have ended (all of them when `now` is None)."""
        lines = []
        for key, (since, count, first) in list(self._open.items()):
            if now is not None and now - since < self._window:
                continue
            del self._open[key]
            if count:
                lines.append(_count_line(first, count, (now or self._clock()) - since))
        return lines


def _count_line(first: logging.LogRecord, count: int, seconds: float) -> logging.LogRecord:
    """The line saying that `first` came `count` more times."""
    text = first.getMessage().splitlines()[0] if first.getMessage() else ""
    error = first.exc_info[1] if first.exc_info else None
    if error is not None:
        text = f"{text}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    line = logging.LogRecord(
        first.name,
        first.levelno,
        first.pathname,
        first.lineno,
        "%s (repeated %d more times in %.0f s)",
        (text, count, seconds),
        None,
    )
    for name in FIELDS:  # the run fields of the first, when it had them
        if hasattr(first, name):
            setattr(line, name, getattr(first, name))
    return line


class _RootHandler(logging.StreamHandler):
    """The handler :func:`configure_logging` installs. Without a stream of its own it writes
    to whatever ``sys.stderr`` is at each record, so it never holds on to a stream a caller
    (a test runner, an embedding application) swapped in for a while and then closed."""

    def __init__(self, stream: TextIO | None, *, repeat_seconds: float = 0.0) -> None:
        super().__init__(stream if stream is not None else sys.stderr)
        self._follows_stderr = stream is None
        self._repeats = _Repeats(repeat_seconds) if repeat_seconds > 0 else None

    def emit(self, record: logging.LogRecord) -> None:
        if self._follows_stderr:
            self.stream = sys.stderr  # emit runs under the handler's lock
        if self._repeats is None:
            super().emit(record)
            return
        write, due = self._repeats.admit(record)
        for line in due:
            super().emit(line)
        if write:
            super().emit(record)

    def close(self) -> None:
        """Write the counts still held, then close."""
        if self._repeats is not None:
            with self.lock or contextlib.nullcontext():
                for line in self._repeats.due():
                    super().emit(line)
        super().close()


def configure_logging(
    settings: ObservabilitySettings,
    *,
    service: str,
    secrets: BaseModel | None = None,
    stream: TextIO | None = None,
) -> None:
    """Send this process's log records to `stream` in the configured format, redacted.

    Installs one handler on the root logger, replacing the one an earlier call installed
    (calling it twice does not double lines; handlers others added are left alone). Sets
    ``settings.log_level`` on skillweave's own loggers; other libraries log warnings and
    errors (or only errors when ``log_level`` is ``ERROR``).

    Args:
        settings: the format and level.
        service: the process (``skillweave-worker``, ``skillweave-manager``, ...), on every
            JSON line.
        secrets: the settings whose ``SecretStr`` values must never be logged (all of them,
            the per-skill secrets included): the process's full ``Settings``.
        stream: where lines go; default standard error (never stdout, which may carry a
            protocol, as ``skillweave mcp`` does).
    """
    if secrets is not None:
        register_secrets(_secrets_in(secrets))
    handler = _RootHandler(stream, repeat_seconds=settings.log_repeat_seconds)
    match settings.log_format:
        case "text":
            handler.setFormatter(_TextFormatter())
        case "json":
            handler.setFormatter(_JsonFormatter(service))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _RootHandler)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    level = logging.getLevelNamesMapping()[settings.log_level]
    root.setLevel(max(level, logging.WARNING))
    for name in _OWN_LOGGERS:
        logging.getLogger(name).setLevel(level)
