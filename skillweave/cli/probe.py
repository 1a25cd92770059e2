"""What the checks of ``skillweave doctor`` and of the long-running commands' start-up share:
the line each answers with (:class:`Check`), what they share while they run (:class:`Probe`),
and who asks (:data:`Role`). The checks are :mod:`skillweave.cli.service_checks` (Temporal,
store, workers, manager, agreement, isolation) and :mod:`skillweave.cli.model_checks` (models,
agents); :mod:`skillweave.cli.checks` runs those each role needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from skillweave.config import Settings

__all__ = ["TIMEOUT", "Check", "Probe", "Role", "Status", "first_line"]

Status = Literal["ok", "warn", "fail"]
Role = Literal["doctor", "worker", "dev", "api", "manager", "mcp", "run"]
TIMEOUT: Final = 5.0
"""How long a check waits for a service to answer."""


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the answer. `transient`: a failure that may pass by itself (something not
    reachable yet), which does not stop a service from starting."""

    name: str
    status: Status
    detail: str
    transient: bool = False


@dataclass(slots=True)
class Probe:
    """What the checks share while they run: the settings, the role asking, what was found.

    Attributes:
        store_id: the store's id, once read.
        store_asked: the store was asked (found or not): a check that only compares its id
            does not ask it again.
        manager: the manager's health answer, once it took this process's token.
        manager_refused: the manager answered, and refused this process's token (401).
    """

    settings: Settings
    role: Role
    store_id: str | None = None
    store_asked: bool = False
    manager: dict[str, object] | None = field(default=None)
    manager_refused: bool = False


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message, or its class name."""
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
