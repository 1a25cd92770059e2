"""What the two HTTP providers share: one httpx client, one POST that maps every failure to a
:class:`ModelError` through :mod:`skillweave.llm.retry`, and the malformed-answer error."""

from __future__ import annotations

from typing import Any, Final

import httpx
from pydantic import ValidationError

from skillweave.closable import Closable
from skillweave.errors import ModelError
from skillweave.llm.retry import error_from_response, error_from_transport

__all__ = ["HttpProvider"]


_SNIPPET_CHARS: Final = 200


class HttpProvider(Closable):
    """Base of the HTTP providers: holds the client, the provider's name and its endpoint.

    `headers` may carry credentials; they are never part of ``repr`` or error messages.
    """

    def __init__(
        self,
        *,
        name: str,
        model: str,
        url: str,
        headers: dict[str, str],
        timeout: float,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self._name = name
        self.model = model
        self.url = url
        self._client = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(timeout), transport=transport
        )

    @property
    def name(self) -> str:
        """``provider:model``."""
        return self._name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r}, url={self.url!r})"

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def post_json(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """POST `body` to the endpoint; the status and raw body of a 2xx answer.

        Raises:
            ModelError: no answer (retryable) or a non-2xx answer (classified).
        """
        try:
            response = await self._client.post(self.url, json=body)
        except httpx.TransportError as exc:
            raise error_from_transport(self._name, exc) from exc
        if not response.is_success:
            raise error_from_response(self._name, response)
        return response.status_code, response.content

    def malformed(self, status: int, content: bytes, problem: str | ValidationError) -> ModelError:
        """The non-retryable error for a 2xx answer that is not what the API documents."""
        if isinstance(problem, ValidationError):
            first = problem.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            problem = f"{where}: {first['msg']}"
        snippet = content[:_SNIPPET_CHARS].decode("utf-8", "replace").replace("\n", " ")
        if len(content) > _SNIPPET_CHARS:
            snippet += "…"
        return ModelError(
            f"{self._name}: malformed answer (HTTP {status}): {problem}; body starts {snippet!r}",
            status=status,
        )
