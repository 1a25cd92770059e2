"""The request gate: the bearer token and the body cap, checked before a service reads a byte.

Every HTTP service of skillweave (the control API, the MCP manager, the sandbox executor) wraps
its app in :class:`RequestGate`. It runs before the framework reads a byte of the body:

- **Token first.** Unless the path is one the service leaves open (``/healthz``; the API
  documentation only when a setting opens it, see :func:`open_paths`), the
  ``Authorization: Bearer`` header must match one of the accepted tokens (compared in constant
  time, every one of them). Otherwise the answer is 401 problem+json with
  ``WWW-Authenticate: Bearer``; the app is never called and ``receive()`` never is.
- **Then the cap.** A declared ``Content-Length`` over the path's limit is answered 413 at
  once, unread. A body streamed without one (chunked) is counted as the app reads it; the
  chunk that goes over ends it: the client is answered 413 (when the app has not started its
  own answer) and the app is told the client left (``http.disconnect``).

What happens to the unread rest of a refused body depends on who sent it. From a client
without an accepted token (a 401, or a 413 on an open path), a body that may be large (declared
over :data:`DRAIN_BYTES`, or chunked) is dropped with the connection (``Connection: close``):
the server reads no more of it, and a client still sending may see the connection reset
before it reads the answer. A smaller one, and any body of a client with an accepted token, is
left to the server, which reads it off the socket and drops it (never buffered) to keep the
connection: an HTTP client then reads its 401 or 413 instead of a reset (the MCP manager, for
one, tells "the executor refused" from "the sandbox was lost" by it).

Why by hand: FastAPI reads and parses a body before it runs a route's dependencies, so a token
checked there comes after the work it should have prevented, and neither FastAPI nor Starlette
caps bodies before routing. This is plain ASGI with type aliases of its own, so the core
library imports no web framework; each service's ``create_app`` installs it.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Final

from skillweave.errors import ConfigError

__all__ = [
    "DRAIN_BYTES",
    "PROBLEM_JSON",
    "UNAUTHORIZED_DETAIL",
    "ASGIApp",
    "Message",
    "Receive",
    "RequestGate",
    "Scope",
    "Send",
    "bearer_credentials",
    "open_paths",
    "token_accepted",
]

logger = logging.getLogger("skillweave.gate")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PROBLEM_JSON: Final = "application/problem+json"
UNAUTHORIZED_DETAIL: Final = "missing or wrong bearer token"
_POLICY_VIOLATION: Final = 1008  # WebSocket close code of a refused handshake
_DISCONNECT: Final[Message] = {"type": "http.disconnect"}

DRAIN_BYTES: Final = 1024 * 1024
"""The largest unread body of a client without a token that the server may read to the end
(and drop) to keep the connection; refusing a larger one, or a chunked one, closes it."""


def bearer_credentials(authorization: bytes | str | None) -> bytes:
    """The credentials of an ``Authorization: Bearer ...`` header value; ``b""`` for any
    other scheme (``Basic``) or none."""
    if authorization is None:
        return b""
    raw = authorization.encode("latin-1") if isinstance(authorization, str) else authorization
    scheme, _, credentials = raw.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return b""
    return credentials.strip()


def token_accepted(given: bytes, tokens: Sequence[bytes]) -> bool:
    """Whether `given` is one of `tokens`, in constant time: every token is compared, so the
    time taken does not tell which one came close. An empty `given` is never accepted."""
    matches = [hmac.compare_digest(given, token) for token in tokens]
    return bool(given) and any(matches)


def _normalized(path: str) -> str:
    return path.rstrip("/") or "/"


class RequestGate:
    """ASGI middleware: the bearer token, then the body cap, before the app sees a request.

    Args:
        app: the service's app.
        tokens: the accepted bearer tokens (several while one is rotated out); none may be
            empty.
        open_paths: exact paths (a trailing slash aside) that need no token, e.g. ``/healthz``.
        max_body_bytes: the largest body of a path `path_limits` does not name.
        path_limits: larger (or smaller) caps of exact paths, e.g. upload routes.

    Raises:
        ConfigError: no token, an empty one, or a limit below 0.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        tokens: Iterable[bytes | str],
        open_paths: Iterable[str] = (),
        max_body_bytes: int,
        path_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.tokens = tuple(t.encode() if isinstance(t, str) else t for t in tokens)
        if not self.tokens or not all(self.tokens):
            raise ConfigError("the request gate needs at least one token, and no empty one")
        self.open_paths = frozenset(_normalized(path) for path in open_paths)
        self.max_body_bytes = max_body_bytes
        self.path_limits = {_normalized(p): n for p, n in (path_limits or {}).items()}
        if min([max_body_bytes, *self.path_limits.values()]) < 0:
            raise ConfigError("a body limit cannot be negative")

    def limit_for(self, path: str) -> int:
        """The body cap of `path`."""
        return self.path_limits.get(_normalized(path), self.max_body_bytes)

    def authenticated(self, scope: Scope) -> bool:
        """Whether `scope`'s request carries an accepted bearer token."""
        return token_accepted(bearer_credentials(_header(scope, b"authorization")), self.tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        trusted = self.authenticated(scope)
        if not trusted and _normalized(path) not in self.open_paths:
            if kind == "websocket":
                await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
            else:
                await _refuse_unauthorized(send, close=_may_be_large(scope))
            return
        if kind == "websocket":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(path)
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await _refuse_too_large(send, limit, close=not trusted and _may_be_large(scope))
            return
        await _capped(self.app, limit, scope, receive, send, close=not trusted)


async def _capped(
    app: ASGIApp, limit: int, scope: Scope, receive: Receive, send: Send, *, close: bool
) -> None:
    """Run `app` on a body counted as it arrives; over `limit`, the client gets a 413 (that
    closes the connection if `close`) and the app an ``http.disconnect``."""
    seen = 0
    started = refused = cut = False

    async def counting_receive() -> Message:
        nonlocal seen, refused, cut
        if cut:
            return dict(_DISCONNECT)
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                cut = True
                if not started:
                    refused = True  # before the await: the app's own answer is dropped
                    await _refuse_too_large(send, limit, close=close)
                return dict(_DISCONNECT)
        return message

    async def guarded_send(message: Message) -> None:
        nonlocal started
        if refused:
            return  # the client has its 413
        if message["type"] == "http.response.start":
            started = True
        await send(message)

    try:
        await app(scope, counting_receive, guarded_send)
    except Exception:
        if not refused:
            raise
        # The app failed on the disconnect it was given; the client already has its 413.
        logger.debug("app failed after a body over the limit was refused", exc_info=True)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


def _declared_length(scope: Scope) -> int | None:
    """The largest ``Content-Length`` the request declares (the server refuses one that does
    not parse, or several that disagree, before the app is called)."""
    declared: int | None = None
    for key, value in scope.get("headers", ()):
        if key.lower() == b"content-length":
            try:
                length = int(value)
            except ValueError:
                continue
            declared = length if declared is None else max(declared, length)
    return declared


def _may_be_large(scope: Scope) -> bool:
    """Whether the request's unread body may be over :data:`DRAIN_BYTES`."""
    declared = _declared_length(scope)
    if declared is not None:
        return declared > DRAIN_BYTES
    return _header(scope, b"transfer-encoding") is not None


async def _refuse_unauthorized(send: Send, *, close: bool) -> None:
    await _refuse(
        send,
        401,
        "Unauthorized",
        UNAUTHORIZED_DETAIL,
        headers=[(b"www-authenticate", b"Bearer")],
        close=close,
    )


async def _refuse_too_large(send: Send, limit: int, *, close: bool) -> None:
    detail = f"the request body is over the {limit:,}-byte limit"
    await _refuse(send, 413, "Request too large", detail, close=close)


async def _refuse(
    send: Send,
    status: int,
    title: str,
    detail: str,
    *,
    headers: Sequence[tuple[bytes, bytes]] = (),
    close: bool,
) -> None:
    """A problem+json answer (RFC 9457); `close` asks the server to drop the connection with
    the body the client may still be sending."""
    body = json.dumps(
        {"type": "about:blank", "title": title, "status": status, "detail": detail},
        separators=(",", ":"),
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                *([(b"connection", b"close")] if close else []),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def open_paths(app: object, *, docs_open: bool) -> list[str]:
    """The paths of a FastAPI `app` that need no token: ``/healthz``, and the OpenAPI document
    and its pages (``/openapi.json``, ``/docs``, ``/redoc``) only when `docs_open` (a service's
    setting: ``API__DOCS_OPEN``, ``SANDBOX__MANAGER_DOCS_OPEN``). By default the document needs
    the token: it maps every route and model of the service for whoever asks. Read by
    attribute: this module imports no web framework."""
    pages = ("openapi_url", "docs_url", "swagger_ui_oauth2_redirect_url", "redoc_url")
    documents = [getattr(app, name, None) for name in pages] if docs_open else []
    found = ["/healthz", *documents]
    return [path for path in found if isinstance(path, str) and path]
