"""Errors on the wire: the problem+json answer (RFC 9457) and the manager's code vocabulary.

One module, imported by every side of an HTTP seam: the MCP manager (``mcp_manager.app``)
answers its errors with :class:`Problem` bodies typed by a :class:`ProblemCode`, the sandbox
client (``skillweave.sandbox.client``) reads them back with :func:`read_problem` and matches on
the code, never on a free string; the control API (``skillweave.api.problems``) answers with the
same model. It imports no web framework, so the core library may hold it.

A problem's ``type`` is ``urn:skillweave:problem:<code>`` (RFC 9457 allows a URI that does not
resolve). Two extension members travel beside the standard ones: ``error``, the bare code
that managers sent before they spoke problem+json (kept, so clients of that time still
understand a newer manager), and ``retry_after``, the seconds of the ``Retry-After`` header.
:func:`read_problem` reads both shapes, so a client also understands a manager not yet
upgraded (``{"detail": ..., "error": "in_progress"}``).

:func:`audit_refusal` is the one line of every ``audit_unavailable`` answer: the manager's
refused runs and activations, the API's refused changes.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from skillweave.errors import AuditLogError
from skillweave.gate import PROBLEM_JSON

__all__ = [
    "AUDIT_RETRY_SECONDS",
    "PROBLEM_JSON",
    "PROBLEM_TYPE_PREFIX",
    "FieldProblem",
    "Problem",
    "ProblemCode",
    "audit_refusal",
    "media_type_refusal",
    "read_problem",
]

PROBLEM_TYPE_PREFIX: Final = "urn:skillweave:problem:"
AUDIT_RETRY_SECONDS: Final = 2
"""The Retry-After of every ``audit_unavailable`` answer (the manager's refused runs, the
API's refused changes): the log has retried its write already, and a store that failed may
be back soon."""
_MAX_TEXT_DETAIL: Final = 500  # of a body that is not JSON (a proxy's HTML page, say)


class ProblemCode(StrEnum):
    """What went wrong, as the manager says it and the sandbox client matches it.

    The values are the bare strings managers sent in ``error`` before problem+json; they
    must not change (clients of that time match on them).
    """

    INVALID_REQUEST = "invalid_request"
    """422: the body does not decode as the endpoint's model; nothing ran."""
    REJECTED = "rejected"
    """4xx (400, 403, 404, 409, 422): a request that cannot run as asked; nothing ran."""
    CONFLICT = "conflict"
    """409: the execution id was used with another request, or its run cannot be repeated."""
    IN_PROGRESS = "in_progress"
    """409 + Retry-After: another manager holds a live claim on the execution."""
    POOL_EXHAUSTED = "pool_exhausted"
    """503 + Retry-After: no sandbox became free in time; nothing ran."""
    NOT_READY = "not_ready"
    """503 + Retry-After: the manager is starting and waits for what it needs (its store; its
    ``/healthz`` says what, and since when); nothing ran. Newer than problem+json: a manager
    before it answered this 503 without a code."""
    AUDIT_UNAVAILABLE = "audit_unavailable"
    """503 + Retry-After: the audit record of a run (the manager) or a change (the API)
    cannot be stored (the store failed), so nothing was started or changed (a run's id stays
    free); ask again after the Retry-After (the detail names the store's error)."""
    SANDBOX_LOST = "sandbox_lost"
    """502: the sandbox died mid-run; the id was freed, the same request may run again."""
    SANDBOX_REFUSED = "sandbox_refused"
    """500: sandboxes refuse to start here (a setting or a requirement an operator must fix)."""
    STORE_MISMATCH = "store_mismatch"
    """409: the caller works on another artifact store than this manager (an operator must
    give both the same ``STORAGE__`` settings); nothing ran."""

    @property
    def type(self) -> str:
        """The problem ``type`` URI of this code."""
        return f"{PROBLEM_TYPE_PREFIX}{self.value}"

    @classmethod
    def of_type(cls, type_uri: object) -> ProblemCode | None:
        """The code a problem ``type`` names; None for ``about:blank`` or a foreign type."""
        if not isinstance(type_uri, str) or not type_uri.startswith(PROBLEM_TYPE_PREFIX):
            return None
        return cls.of(type_uri.removeprefix(PROBLEM_TYPE_PREFIX))

    @classmethod
    def of(cls, value: object) -> ProblemCode | None:
        """The code `value` spells; None for anything else (a code this side does not know)."""
        try:
            return cls(value)
        except ValueError:
            return None


class FieldProblem(BaseModel):
    """One field of a refused request: where (``loc``) and why (``msg``); a service may add
    members that carry the refusal's data (the control API names the skill that was taken)."""

    model_config = ConfigDict(extra="allow")

    loc: list[str]
    msg: str


class Problem(BaseModel):
    """An error answer (RFC 9457), with skillweave's extension members.

    Attributes:
        type: ``urn:skillweave:problem:<code>`` for a coded problem, else ``about:blank``.
        title: a short summary of the kind of problem (the same for every one of its kind).
        status: the HTTP status, repeated.
        detail: what happened this time, in one line.
        errors: the fields of a request that did not validate (422).
        error: the bare code (what managers sent before problem+json).
        retry_after: seconds to wait before asking again (also the ``Retry-After`` header).
    """

    model_config = ConfigDict(extra="ignore")

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    errors: list[FieldProblem] | None = None
    error: str | None = Field(
        default=None, description="The problem's code alone (for clients before problem+json)."
    )
    retry_after: float | None = Field(default=None, description="Seconds; as Retry-After.")

    @classmethod
    def coded(
        cls,
        code: ProblemCode,
        *,
        status: int,
        title: str,
        detail: str,
        retry_after: float | None = None,
        errors: list[FieldProblem] | None = None,
    ) -> Problem:
        """A problem of `code` (its ``type`` and its legacy ``error`` member both set)."""
        return cls(
            type=code.type,
            title=title,
            status=status,
            detail=detail,
            errors=errors,
            error=code.value,
            retry_after=retry_after,
        )

    @property
    def code(self) -> ProblemCode | None:
        """The code this problem carries: by its ``type``, else by its bare ``error`` (a
        manager before problem+json); None when it names none this side knows."""
        return ProblemCode.of_type(self.type) or ProblemCode.of(self.error)

    def body(self) -> dict[str, object]:
        """The JSON body: the members that are set."""
        return self.model_dump(mode="json", exclude_none=True)


def audit_refusal(exc: AuditLogError, *, what: str, so: str) -> str:
    """The one line of a request refused because its audit record cannot be stored.

    It names the store's error by its code, never by its message (which names the server's
    keys; the refusing side logs it whole), and says when to ask again.

    Args:
        exc: the audit log's error.
        what: what could not be recorded (``"this change"``, ``"this run"``).
        so: what was therefore not done (``"nothing was changed"``).
    """
    cause = f"the artifact store answered {exc.code}" if exc.code else "the artifact store failed"
    return (
        f"the audit log cannot record {what} ({cause}), so {so}; "
        f"try again in {AUDIT_RETRY_SECONDS} s, or once the store takes writes again"
    )


def media_type_refusal(content_type: str | None, body: object) -> str | None:
    """Why a JSON endpoint refuses a body for its media type (a 415), or None.

    A JSON endpoint reads a body sent with another ``Content-Type`` (``curl -d`` sends
    ``application/x-www-form-urlencoded``) as bytes, and the model then refuses it; this says
    which header to send instead. `body` is what the endpoint read: bytes when the media type
    was not JSON. With no ``Content-Type`` at all the body is read as JSON.
    """
    if not isinstance(body, bytes | bytearray) or not content_type:
        return None
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return None
    return (
        f"this endpoint takes JSON, and the body came as {media!r}: send it with the header"
        " 'Content-Type: application/json' (curl: -H 'Content-Type: application/json')"
    )


def read_problem(status: int, content: bytes) -> Problem:
    """The problem an error answer of `status` carries, whatever its shape.

    Reads a problem+json body, the ``{"detail": ..., "error": ...}`` of a manager before
    problem+json, and anything else (a non-JSON body becomes the detail, clipped). Never
    raises: an answer that cannot be read is still an answer with a status.
    """
    try:
        found = json.loads(content)
    except ValueError:
        found = None
    text = content.decode("utf-8", "replace")
    if not isinstance(found, dict):
        return Problem(title="Error", status=status, detail=text[:_MAX_TEXT_DETAIL])
    detail = found.get("detail", text)
    error = found.get("error")
    retry_after = found.get("retry_after")
    return Problem(
        type=found["type"] if isinstance(found.get("type"), str) else "about:blank",
        title=found["title"] if isinstance(found.get("title"), str) else "Error",
        status=status,
        detail=str(detail),
        error=error if isinstance(error, str) else None,
        retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
    )
