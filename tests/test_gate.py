"""The request gate as plain ASGI: the token before the app is called and before a byte of the
body is asked for, declared and streamed bodies capped, refusals as problem+json."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from skillweave import gate
from skillweave.errors import ConfigError
from skillweave.gate import DRAIN_BYTES, Message, RequestGate, Scope, bearer_credentials

TOKEN = "the-token"
OLD = "the-old-token"
BEARER = f"Bearer {TOKEN}".encode()


@dataclass
class Client:
    """The server side of one request: what the app receives, what the client is sent."""

    chunks: Sequence[bytes] = ()
    received: int = 0
    sent: list[Message] = field(default_factory=list)

    async def receive(self) -> Message:
        if self.received >= len(self.chunks):
            return {"type": "http.disconnect"}
        chunk = self.chunks[self.received]
        self.received += 1
        more = self.received < len(self.chunks)
        return {"type": "http.request", "body": chunk, "more_body": more}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        [start] = [m for m in self.sent if m["type"] == "http.response.start"]
        return int(start["status"])

    @property
    def headers(self) -> dict[bytes, bytes]:
        [start] = [m for m in self.sent if m["type"] == "http.response.start"]
        return dict(start["headers"])

    @property
    def problem(self) -> dict[str, Any]:
        assert self.headers[b"content-type"] == b"application/problem+json"
        body = b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")
        assert int(self.headers[b"content-length"]) == len(body)
        return json.loads(body)


@dataclass
class App:
    """An app that reads the whole body (as a framework does) and answers 200 with its size."""

    called: int = 0
    body: bytes = b""
    saw: list[str] = field(default_factory=list)
    fail_on_disconnect: bool = False
    answer_first: bool = False

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        self.called += 1
        if scope["type"] != "http":
            return
        if self.answer_first:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        while True:
            message = await receive()
            self.saw.append(message["type"])
            if message["type"] == "http.disconnect":
                if self.fail_on_disconnect:
                    raise RuntimeError("the client went away")
                break
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if not self.answer_first:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(self.body)).encode()})


def scope(
    path: str = "/things",
    *,
    authorization: bytes | None = BEARER,
    length: int | None = None,
    chunked: bool = False,
    kind: str = "http",
) -> Scope:
    headers = [(b"host", b"example")]
    if authorization is not None:
        headers.append((b"authorization", authorization))
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    if chunked:
        headers.append((b"transfer-encoding", b"chunked"))
    return {"type": kind, "method": "POST", "path": path, "headers": headers}


def gated(app: App, **options: Any) -> RequestGate:
    settings: dict[str, Any] = {
        "tokens": [TOKEN, OLD],
        "open_paths": ["/healthz"],
        "max_body_bytes": 1024,
        "path_limits": {"/upload": 64 * 1024},
    }
    return RequestGate(app, **{**settings, **options})


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        b"",
        b"Bearer",
        b"Bearer ",
        b"Bearer wrong",
        b"Bearer " + TOKEN.encode() + b"x",
        b"Basic " + TOKEN.encode(),
        b"Token " + TOKEN.encode(),
        TOKEN.encode(),
    ],
    ids=["none", "empty", "scheme-only", "blank", "wrong", "longer", "basic", "other", "bare"],
)
async def test_without_an_accepted_token_the_app_is_not_called_nor_the_body_asked_for(
    authorization: bytes | None,
) -> None:
    app = App()
    client = Client(chunks=[b"x" * 10])
    await gated(app)(scope(authorization=authorization, length=10), client.receive, client.send)
    assert app.called == 0
    assert client.received == 0, "receive() was called"
    assert client.status == 401
    assert client.headers[b"www-authenticate"] == b"Bearer"
    assert client.problem == {
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": "missing or wrong bearer token",
    }


@pytest.mark.parametrize(
    "authorization",
    [
        BEARER,
        b"bearer " + TOKEN.encode(),
        b"BEARER  " + TOKEN.encode() + b" ",
        b"Bearer " + OLD.encode(),
    ],
    ids=["bearer", "lower-case", "spaces", "rotation-token"],
)
async def test_an_accepted_token_lets_the_request_through(authorization: bytes) -> None:
    app = App()
    client = Client(chunks=[b"abc"])
    await gated(app)(scope(authorization=authorization, length=3), client.receive, client.send)
    assert (app.called, app.body, client.status) == (1, b"abc", 200)


@pytest.mark.parametrize("path", ["/healthz", "/healthz/"])
async def test_open_paths_need_no_token_but_are_capped(path: str) -> None:
    app = App()
    client = Client(chunks=[b""])
    await gated(app)(scope(path, authorization=None), client.receive, client.send)
    assert client.status == 200
    too_big = Client(chunks=[b"x" * 2048])
    await gated(App())(scope(path, authorization=None, length=2048), too_big.receive, too_big.send)
    assert too_big.status == 413


async def test_only_the_exact_open_path_is_open() -> None:
    for path in ("/healthz/more", "/healthzz", "/", "/other/healthz"):
        client = Client()
        await gated(App())(scope(path, authorization=None), client.receive, client.send)
        assert client.status == 401, path


@pytest.mark.parametrize(
    ("path", "length", "status"),
    [
        ("/things", 1024, 200),
        ("/things", 1025, 413),
        ("/upload", 1025, 200),
        ("/upload/", 64 * 1024, 200),
        ("/upload", 64 * 1024 + 1, 413),
        ("/upload/more", 1025, 413),
    ],
)
async def test_a_declared_length_over_the_path_limit_is_413_unread(
    path: str, length: int, status: int
) -> None:
    app = App()
    client = Client(chunks=[b"x" * length])
    await gated(app)(scope(path, length=length), client.receive, client.send)
    assert client.status == status
    if status == 413:
        assert (app.called, client.received) == (0, 0)
        limit = 1024 if path != "/upload" else 64 * 1024
        assert client.problem["detail"] == f"the request body is over the {limit:,}-byte limit"
        assert client.problem["title"] == "Request too large"


async def test_the_token_is_checked_before_the_declared_length() -> None:
    client = Client()
    await gated(App())(scope(authorization=None, length=10**9), client.receive, client.send)
    assert client.status == 401


@pytest.mark.parametrize(
    ("length", "chunked", "closes"),
    [
        (None, False, False),
        (DRAIN_BYTES, False, False),
        (DRAIN_BYTES + 1, False, True),
        (400 * 1024 * 1024, False, True),
        (None, True, True),
    ],
)
async def test_a_refusal_closes_the_connection_when_the_unread_body_may_be_large(
    length: int | None, chunked: bool, closes: bool
) -> None:
    client = Client()
    request = scope(authorization=None, length=length, chunked=chunked)
    await gated(App())(request, client.receive, client.send)
    assert client.status == 401
    assert (client.headers.get(b"connection") == b"close") is closes


@pytest.mark.parametrize(
    ("path", "authorization", "closes"),
    [
        ("/things", BEARER, False),
        ("/healthz", BEARER, False),
        ("/healthz", None, True),
    ],
    ids=["token", "token-on-open-path", "open-path-without-token"],
)
async def test_a_413_closes_the_connection_only_for_a_client_without_a_token(
    path: str, authorization: bytes | None, closes: bool
) -> None:
    declared = Client()
    request = scope(path, authorization=authorization, length=400 * 1024 * 1024)
    await gated(App())(request, declared.receive, declared.send)
    streamed = Client(chunks=[b"x" * 2000])
    request = scope(path, authorization=authorization, chunked=True)
    await gated(App())(request, streamed.receive, streamed.send)
    for client in (declared, streamed):
        assert client.status == 413
        assert (client.headers.get(b"connection") == b"close") is closes


async def test_a_streamed_body_is_counted_and_cut_at_the_limit() -> None:
    app = App()
    chunks = [b"x" * 400] * 10
    client = Client(chunks=chunks)
    await gated(app)(scope(chunked=True), client.receive, client.send)
    assert client.status == 413  # one answer: the app's own 200 is dropped
    assert [m["type"] for m in client.sent] == ["http.response.start", "http.response.body"]
    assert client.received == 3, "no chunk is asked for after the one over the limit"
    assert app.saw == ["http.request", "http.request", "http.disconnect"]


async def test_a_streamed_body_within_the_limit_is_passed_untouched() -> None:
    app = App()
    client = Client(chunks=[b"a" * 500, b"b" * 524])
    await gated(app)(scope(chunked=True), client.receive, client.send)
    assert (client.status, app.body) == (200, b"a" * 500 + b"b" * 524)


async def test_an_app_that_fails_on_the_cut_does_not_fail_the_refusal() -> None:
    app = App(fail_on_disconnect=True)
    client = Client(chunks=[b"x" * 2000])
    await gated(app)(scope(chunked=True), client.receive, client.send)
    assert client.status == 413


async def test_an_app_that_fails_otherwise_still_fails() -> None:
    class Broken(App):
        async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
            raise RuntimeError("bug")

    client = Client(chunks=[b"x"])
    with pytest.raises(RuntimeError, match="bug"):
        await gated(Broken())(scope(length=1), client.receive, client.send)


async def test_over_the_limit_after_the_app_answered_the_app_is_cut_off_without_a_413() -> None:
    app = App(answer_first=True)
    client = Client(chunks=[b"x" * 800, b"x" * 800, b"x" * 800])
    await gated(app)(scope(chunked=True), client.receive, client.send)
    assert client.status == 200
    assert app.saw == ["http.request", "http.disconnect"]
    assert client.received == 2


async def test_lifespan_passes_and_a_websocket_needs_the_token() -> None:
    app = App()
    client = Client()
    await gated(app)({"type": "lifespan"}, client.receive, client.send)
    assert app.called == 1
    await gated(app)(scope(kind="websocket", authorization=None), client.receive, client.send)
    assert client.sent == [{"type": "websocket.close", "code": 1008}]
    assert app.called == 1
    await gated(app)(scope(kind="websocket"), client.receive, client.send)
    assert app.called == 2


@pytest.mark.parametrize(
    "options",
    [{"tokens": []}, {"tokens": [TOKEN, ""]}, {"tokens": [b""]}, {"max_body_bytes": -1}],
    ids=["no-token", "an-empty-token", "empty-bytes", "negative-limit"],
)
def test_a_gate_that_would_let_anyone_in_is_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        gated(App(), **options)


def test_every_token_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[bytes] = []

    def compare(given: bytes, token: bytes) -> bool:
        compared.append(token)
        return given == token

    monkeypatch.setattr(gate.hmac, "compare_digest", compare)
    tokens = [b"first", b"second", b"third"]
    assert gate.token_accepted(b"first", tokens)
    assert compared == tokens, "a match must not end the comparison early"
    assert not gate.token_accepted(b"", [b"x"])


@pytest.mark.parametrize(
    ("header", "credentials"),
    [
        (None, b""),
        ("Bearer abc", b"abc"),
        (b"bearer  abc ", b"abc"),
        ("Basic abc", b""),
        ("abc", b""),
        ("Bearer", b""),
    ],
)
def test_bearer_credentials(header: str | bytes | None, credentials: bytes) -> None:
    assert bearer_credentials(header) == credentials


@dataclass
class _Documented:
    """The attributes of a FastAPI app that name its documentation pages."""

    openapi_url: str | None = "/openapi.json"
    docs_url: str | None = "/docs"
    swagger_ui_oauth2_redirect_url: str | None = "/docs/oauth2-redirect"
    redoc_url: str | None = None


def test_the_documentation_is_open_only_when_the_service_setting_opens_it() -> None:
    app = _Documented()
    assert gate.open_paths(app, docs_open=False) == ["/healthz"]
    assert gate.open_paths(app, docs_open=True) == [
        "/healthz",
        "/openapi.json",
        "/docs",
        "/docs/oauth2-redirect",
    ]
