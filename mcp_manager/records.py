"""What the manager stores per execution, and what makes two requests the same one.

:class:`ExecutionRecord` (defined in ``skillweave.sandbox``, where a run's readers find it too)
is the stored outcome of an execution (``keys.execution_result_key``): the request's
fingerprint and its result; its claim is a ``claims.ClaimRecord``.
:class:`Fingerprint` is the identity of a request, compared when an execution id comes again.
``executions`` writes and reads both; ``executor_client`` builds results with
:func:`result_for`. A stored record must still decode after an upgrade: a new member is
optional.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from skillweave.sandbox import (
    ExecuteRequest,
    ExecutionLimits,
    ExecutionRecord,
    ExecutionResult,
    ExecutionStatus,
)

__all__ = ["ExecutionRecord", "ExecutionState", "Fingerprint", "result_for"]


class ExecutionState(BaseModel):
    """``GET /sandbox/executions/{id}``: running, or finished with its result."""

    execution_id: str
    state: Literal["running", "finished"]
    result: ExecutionResult | None = None


@dataclass(frozen=True)
class Fingerprint:
    """What makes two requests of one execution id the same request.

    `value` (what this manager records) leaves out fields at their defaults, so a field added
    later with a default does not make a repeat of a request look different. `also`: for a
    request without limits, the fingerprint of the same request naming the manager's limits
    (which it runs under), accepted too.
    """

    value: str
    also: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, request: ExecuteRequest, *, default_limits: ExecutionLimits | None = None
    ) -> Fingerprint:
        """The fingerprint of `request`; `default_limits`: the manager's, which a request
        without limits runs under."""
        also: tuple[str, ...] = ()
        if request.limits is None and default_limits is not None:
            also = (cls.of(request.model_copy(update={"limits": default_limits})).value,)
        # The store id says where the request may run, not what it runs: left out.
        return cls(
            value=_digest(
                request.model_dump(mode="json", exclude_defaults=True, exclude={"store_id"})
            ),
            also=also,
        )

    def matches(self, recorded: str | None) -> bool:
        """Whether `recorded` (from a stored result or a claim) is this request's."""
        return recorded is not None and recorded in (self.value, *self.also)


def _digest(data: object) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def result_for(
    request: ExecuteRequest, *, status: ExecutionStatus, error: str | None = None, **ran: Any
) -> ExecutionResult:
    """A result of `request`: how it ended and, in `ran`, the other fields of
    :class:`ExecutionResult` that a run produced (none when it never ran)."""
    return ExecutionResult(
        execution_id=request.execution_id,
        run_id=request.run_id,
        skill=request.skill,
        version=request.version,
        script=request.script,
        status=status,
        error=error,
        **ran,
    )
