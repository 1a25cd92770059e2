"""A client for the MCP manager's sandbox API, used by the CLI now and the activities later.

Errors are mapped once here to the error tree: 4xx → :class:`ExecutionRejectedError` (or
:class:`ExecutionConflictError` for 409), 503 → :class:`PoolExhaustedError` carrying the
server's Retry-After, 409 with ``"error": "in_progress"`` → :class:`ExecutionInProgressError`
(with its Retry-After), 502 with ``"error": "sandbox_lost"`` → :class:`SandboxLostError` (the
sandbox died mid-run; the same request may run again), other failures → :class:`SandboxError`.
The client does not retry on its own; whether to retry is decided at the activity boundary.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Final, Self

import httpx

from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
)
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.telemetry.tracing import inject

__all__ = ["SandboxClient"]

_HTTP_GRACE_SECONDS = 30.0


_BUILD_WAIT_SECONDS: Final = 600.0 + 60.0
"""The default build timeout of an environment, and a minute for the manager to answer."""
_QUICK_SECONDS: Final = 30.0
"""A question the manager answers from memory, with room for a loaded host."""


class SandboxClient:
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

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

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
        _raise_for(response, execution_id)
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
            raise SandboxError(f"cannot reach the MCP manager: {exc!r}") from exc
        _raise_for(response, execution_id)
        return response


def _raise_for(response: httpx.Response, execution_id: str) -> None:
    if response.status_code < 400:
        return
    try:
        body = response.json()
        detail = str(body.get("detail", response.text))
    except (ValueError, AttributeError):
        body, detail = {}, response.text[:500]
    if response.status_code == 502 and body.get("error") == "sandbox_lost":
        raise SandboxLostError(execution_id, detail)
    if response.status_code == 503:
        retry_after = int(response.headers.get("Retry-After", "5") or 5)
        raise PoolExhaustedError(detail, retry_after=retry_after)
    if response.status_code == 409 and body.get("error") == "in_progress":
        retry_after = float(response.headers.get("Retry-After", "5") or 5)
        raise ExecutionInProgressError(execution_id, retry_after=retry_after)
    if response.status_code == 409:
        raise ExecutionConflictError(execution_id, detail)
    if 400 <= response.status_code < 500:
        raise ExecutionRejectedError(response.status_code, detail)
    raise SandboxError(f"MCP manager error {response.status_code}: {detail}")
