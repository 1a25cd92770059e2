"""A client for the MCP manager's sandbox API, used by the engines' services and the CLI.

Errors are mapped once here to the error tree, by one rule: **what the model can fix is a
rejection, what an operator must fix is an infrastructure error.** A rejection
(:class:`ExecutionRejectedError`) becomes a tool result the model reads (bad arguments, an
input it named that does not exist or is not its run's, a script that is not in the skill, a
body over the manager's cap that shorter arguments fit, a version that is not published in the
store both sides share); every other answer is raised and never reaches the model as a script's
outcome, and the caller waits for it or retries it (``skillweave.sandbox.queue``,
``skillweave.engines.retries``):

- a refused token, a 401, or a 403 that is not one of the manager's coded rejections (a proxy
  in between) → :class:`ManagerRefusedError` (``refused="token"``), one line naming
  ``SANDBOX__MANAGER_TOKEN``;
- ``store_mismatch`` (the manager works on another store than the request names) →
  :class:`ManagerRefusedError` (``refused="store"``);
- no connection taken → :class:`ManagerUnreachableError`; ``not_ready`` (the manager is
  starting, waiting for its store) → :class:`ManagerNotReadyError`, one of those, its line
  naming what the manager waits for: a step waits for it as for a manager that is down;
- ``audit_unavailable`` (the manager cannot store the run's audit record, so it refused the
  run before anything ran; the id is free) → :class:`AuditUnavailableError` with its
  Retry-After, its line naming the manager and the store's error: a step waits for the
  store, then the same request runs once;
- ``pool_exhausted`` → :class:`PoolExhaustedError` carrying the server's Retry-After;
  ``in_progress`` → :class:`ExecutionInProgressError` (with its Retry-After); ``sandbox_lost``
  → :class:`SandboxLostError` (the sandbox died mid-run; the same request may run again);
  ``sandbox_refused`` → a permanent :class:`SandboxStartError`; 5xx and anything else →
  :class:`SandboxError`;
- ``rejected``/``invalid_request`` with a 4xx → :class:`ExecutionRejectedError` (with the
  status), ``conflict`` → :class:`ExecutionConflictError`.

An answer without a code (a manager before problem+json sent none for these, or a proxy in
between) is read by its status: 401 and 403 a refused token, 503 a full pool (a manager before
``not_ready`` answered its start-up so too), 409 a conflict, another 4xx a rejection. The
client does not retry on its own; whether to retry is decided at the activity boundary.
"""

from __future__ import annotations

import json
import math
from typing import Final

import httpx

from skillweave.closable import Closable
from skillweave.errors import (
    AuditUnavailableError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    ManagerNotReadyError,
    ManagerRefusedError,
    ManagerUnreachableError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
    SandboxStartError,
)
from skillweave.retry_after import parse_retry_after
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.problems import AUDIT_RETRY_SECONDS, Problem, ProblemCode, read_problem
from skillweave.telemetry import inject

__all__ = ["SandboxClient"]

_HTTP_GRACE_SECONDS = 30.0


_BUILD_WAIT_SECONDS: Final = 600.0 + 60.0
"""The default build timeout of an environment, and a minute for the manager to answer."""
_QUICK_SECONDS: Final = 30.0
"""A question the manager answers from memory, with room for a loaded host."""


class SandboxClient(Closable):
    """Talks to one MCP manager.

    Args:
        base_url: the manager, e.g. ``http://127.0.0.1:8090``.
        token: its bearer token.
        transport: an httpx transport (tests may pass an ASGI one).
    """

    def __init__(
        self, base_url: str, *, token: str, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            transport=transport,
        )
        self._url = base_url.rstrip("/")

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        """Run a script (or get the stored outcome of an earlier run of the same id)."""
        timeout = request.limits.timeout_seconds if request.limits else 3600.0
        # ASCII JSON: text a model produced may hold a lone surrogate, which UTF-8 cannot
        # carry; escaped, it reaches the manager, which refuses it with a clear 400.
        response = await self._request(
            "POST",
            "/sandbox/execute",
            content=json.dumps(request.model_dump(mode="json")).encode("ascii"),
            content_type="application/json",
            timeout=timeout + _HTTP_GRACE_SECONDS,
            execution_id=request.execution_id,
        )
        return ExecutionResult.model_validate_json(response.content)

    async def cancel(self, execution_id: str) -> bool:
        """Cancel a running execution; False when it is not running."""
        response = await self._client.delete(
            f"/sandbox/executions/{execution_id}", headers=inject({})
        )
        if response.status_code in (404, 409):
            return False
        _raise_for(response, execution_id, url=self._url)
        return True

    async def prepare_environment(
        self, skill: str, version: str, *, timeout: float = _BUILD_WAIT_SECONDS
    ) -> dict[str, object]:
        """Build (once) a published skill version's environment of dependencies; the answer
        says whether it needs one, its size and how long preparing took.

        Args:
            timeout: How long to wait for the answer: a first build runs pip or npm (the
                manager's ``SANDBOX__ENVIRONMENTS__BUILD_TIMEOUT_SECONDS``, 600 s by default).
        """
        body = {"skill": skill, "version": version}
        response = await self._request("POST", "/sandbox/environments", json=body, timeout=timeout)
        return response.json()

    async def pool(self) -> dict[str, object]:
        """The warm pool's state."""
        return (await self._request("GET", "/sandbox/pool", timeout=_QUICK_SECONDS)).json()

    async def _request(
        self, method: str, url: str, *, execution_id: str = "", **kwargs: object
    ) -> httpx.Response:
        headers = inject({})
        content_type = kwargs.pop("content_type", None)
        if content_type is not None:
            headers["Content-Type"] = str(content_type)
        try:
            response = await self._client.request(  # type: ignore[arg-type]
                method, url, headers=headers, **kwargs
            )
        except httpx.HTTPError as exc:
            why = str(exc).splitlines()[0] if str(exc) else "no answer"
            unreached = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
            error = ManagerUnreachableError if unreached else SandboxError  # nothing was sent
            raise error(
                f"cannot reach the MCP manager at {self._url}: {type(exc).__name__}: {why}"
            ) from exc
        _raise_for(response, execution_id, url=self._url)
        return response


def _raise_for(response: httpx.Response, execution_id: str, *, url: str) -> None:
    """Raise the error `response` answers, if any (the rule in the module docstring)."""
    status = response.status_code
    if status < 400:
        return
    problem = read_problem(status, response.content)
    detail = problem.detail or ""
    uncoded = problem.type == "about:blank" and problem.error is None
    if status == 401 or (status == 403 and uncoded):
        # The gate's answer (or a proxy's): this caller's token, not its request.
        raise ManagerRefusedError(detail, refused="token", status=status, url=url)
    match problem.code or _implied_code(status):
        case ProblemCode.STORE_MISMATCH:
            raise ManagerRefusedError(detail, refused="store", status=status, url=url)
        case ProblemCode.SANDBOX_LOST:
            raise SandboxLostError(execution_id, detail)
        case ProblemCode.NOT_READY:
            waits = detail or "waiting for what it needs"
            raise ManagerNotReadyError(
                f"the MCP manager at {url} is starting: {waits} (its /healthz says)"
            )
        case ProblemCode.AUDIT_UNAVAILABLE:
            retry_after = _retry_after(response, problem, default=AUDIT_RETRY_SECONDS)
            why = detail or "the audit log cannot record this run, so the script was not started"
            raise AuditUnavailableError(f"the MCP manager at {url}: {why}", retry_after=retry_after)
        case ProblemCode.POOL_EXHAUSTED:
            retry_after = _retry_after(response, problem, default=5.0)
            raise PoolExhaustedError(detail, retry_after=math.ceil(retry_after))
        case ProblemCode.IN_PROGRESS:
            retry_after = _retry_after(response, problem, default=5.0)
            raise ExecutionInProgressError(execution_id, retry_after=retry_after)
        case ProblemCode.CONFLICT:
            raise ExecutionConflictError(execution_id, detail)
        case ProblemCode.SANDBOX_REFUSED:
            # An operator must act (a setting, a missing requirement): retrying cannot help,
            # so the run fails at once instead of after every attempt of its retry policy.
            raise SandboxStartError(detail, permanent=True)
        case ProblemCode.REJECTED | ProblemCode.INVALID_REQUEST if status < 500:
            raise ExecutionRejectedError(status, detail)
        case _:
            raise SandboxError(f"MCP manager error {status}: {detail}")


def _implied_code(status: int) -> ProblemCode | None:
    """What an answer without a code means, by its status alone."""
    if status == 503:
        return ProblemCode.POOL_EXHAUSTED
    if status == 409:
        return ProblemCode.CONFLICT
    if 400 <= status < 500:
        return ProblemCode.REJECTED
    return None


def _retry_after(response: httpx.Response, problem: Problem, *, default: float) -> float:
    """Seconds to wait: the Retry-After header, else the problem's ``retry_after``."""
    seconds = parse_retry_after(response.headers)
    if seconds is not None:
        return seconds
    after = problem.retry_after
    if after is not None and math.isfinite(after) and after >= 0:
        return after
    return default
