"""Request size limits, before a route reads a byte: a declared ``Content-Length`` over the
limit is refused at once, and a body streamed without one is counted as it arrives."""

from __future__ import annotations

import json
from typing import Final

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillweave.api.problems import PROBLEM_JSON

__all__ = ["BodyLimit"]

_DEFAULT_LIMIT: Final = 1024 * 1024


def _too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"the request body is over the {limit:,}-byte limit")


class BodyLimit:
    """ASGI middleware: bodies over `default` bytes (or the limit `limits` gives that exact
    path, a trailing slash aside) are answered 413 problem+json."""

    def __init__(
        self, app: ASGIApp, *, default: int = _DEFAULT_LIMIT, limits: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.default = default
        self.limits = {path.rstrip("/"): limit for path, limit in (limits or {}).items()}

    def limit_for(self, path: str) -> int:
        return self.limits.get(path.rstrip("/"), self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _refuse(send, limit)
                    return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _too_large(limit)  # the app's handlers answer it as problem+json
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except HTTPException as exc:
            if exc.status_code != 413 or started:
                raise
            await _refuse(send, limit)


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps(
        {
            "type": "about:blank",
            "title": "Request too large",
            "status": 413,
            "detail": _too_large(limit).detail,
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
