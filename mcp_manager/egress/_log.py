"""The egress log: :class:`EgressRecord`, one line per request the proxy saw, the
:class:`Entry` a proxy fills in as it serves one, and :func:`emit`, which logs a record and
hands it to the audit.

Called by the proxy (``_proxy``) and the gateway (``_gateway``), which write records, and the
service (``_service``), which stores each execution's records beside its outputs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EgressRecord", "Entry", "emit"]

logger = logging.getLogger("skillweave.egress")


class EgressRecord(BaseModel):
    """One connection or request the proxy saw (the audit log's line)."""

    model_config = ConfigDict(frozen=True)

    at: float = Field(description="Seconds since the epoch.")
    run_id: str
    execution_id: str
    skill: str
    kind: str = Field(description="connect (a CONNECT tunnel) or request (plain HTTP)")
    destination: str
    method: str = ""
    path: str = ""
    bytes_out: int = 0
    bytes_in: int = 0
    allowed: bool
    reason: str
    status: int | None = Field(
        default=None,
        description="The status the proxy answered itself (a refusal); none when relayed.",
    )


@dataclass(slots=True)
class Entry:
    """The audit record of one request, filled in as it is served (one per request)."""

    kind: str = "request"
    destination: str = ""
    method: str = ""
    path: str = ""
    bytes_out: int = 0
    bytes_in: int = 0
    allowed: bool = False
    reason: str = "the connection closed before an answer"
    status: int | None = None
    answered: bool = False  # response bytes reached the client: no refusal can follow


def emit(audit: Callable[[EgressRecord], None], record: EgressRecord) -> None:
    """Log `record` in one line, then give it to `audit`."""
    logger.info(
        "egress %s %s %s %s: %s",
        record.skill or "-",
        record.kind,
        record.destination or "-",
        "allowed" if record.allowed else "refused",
        record.reason,
    )
    audit(record)
