"""The executor's errors, a branch under skillweave's one root.

SkillweaveError                    (skillweave.errors)
└── SandboxError                   (skillweave.errors)
    └── ExecutorError              anything the sandbox executor refuses or cannot do
        ├── RequestRejectedError   a bad /execute request: answered 400 or 422, nothing ran
        ├── ExecutorBusyError      the executor is running or has run its one execution: 409
        └── IsolationUnavailableError  bubblewrap was required but does not work here
"""

from __future__ import annotations

from skillweave.errors import SandboxError

__all__ = [
    "ExecutorBusyError",
    "ExecutorError",
    "IsolationUnavailableError",
    "RequestRejectedError",
]


class ExecutorError(SandboxError):
    """Something the sandbox executor refuses or cannot do."""


class RequestRejectedError(ExecutorError):
    """The /execute request cannot be run as sent; `detail` says why, in one line.

    Attributes:
        detail: The reason, safe to return to the manager.
        status_code: 422 for a request body that does not parse, else 400.
    """

    def __init__(self, detail: str, *, status_code: int = 400) -> None:
        self.detail = detail
        self.status_code = status_code
        super().__init__(detail)


class ExecutorBusyError(ExecutorError):
    """The executor is one-shot: it is running, or has run, its execution."""


class IsolationUnavailableError(ExecutorError):
    """``EXECUTOR__ISOLATION=bubblewrap`` but bubblewrap cannot run a sandbox here."""
