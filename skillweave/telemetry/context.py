"""The fields that say what a piece of work is about, for its log lines and its span.

An activity binds the run id, the manager binds the execution id, skill and script: everything
logged inside (and the current span, when tracing) carries them. Values are identifiers the
system made or the skill author chose, never secrets, arguments or outputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from skillweave.telemetry.provider import annotate

__all__ = ["FIELDS", "bound", "current_fields"]

FIELDS: Final = ("run_id", "execution_id", "skill", "script")
"""The fields, in the order a log line shows them."""
_KNOWN: Final = frozenset(FIELDS)

_CURRENT: ContextVar[Mapping[str, str]] = ContextVar("skillweave_fields", default={})  # noqa: B039


def current_fields() -> Mapping[str, str]:
    """The fields bound here (an empty mapping outside any :func:`bound`)."""
    return _CURRENT.get()


@contextmanager
def bound(**fields: str | None) -> Iterator[Mapping[str, str]]:
    """Bind `fields` (some of :data:`FIELDS`; None or '' are left out) within the block, on
    top of those already bound, and set them on the current span when tracing.

    Raises:
        ValueError: a field not in :data:`FIELDS` (a typo would silently never show).
    """
    if not fields.keys() <= _KNOWN:
        unknown = ", ".join(sorted(fields.keys() - _KNOWN))
        raise ValueError(f"unknown telemetry field(s): {unknown}")
    values = {name: str(value) for name, value in fields.items() if value}
    merged = {**_CURRENT.get(), **values}
    token = _CURRENT.set(merged)
    try:
        annotate(values)
        yield merged
    finally:
        _CURRENT.reset(token)
