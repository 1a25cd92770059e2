"""The egress proxy (issue 26), against a real "external API" on loopback that wants a bearer
token: the approved skill gets 200 through the proxy, the token added by the proxy (the client
never has it), by plain HTTP and through a CONNECT tunnel; everything else is refused with its
reason, and every connection and request is audited."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcp_manager.egress import (
    EgressContext,
    EgressGateway,
    EgressProxy,
    EgressRecord,
    EgressService,
)
from skillweave.config import CredentialBinding, EgressApproval, EgressLimits, EgressSettings
from skillweave.errors import EgressPolicyError
from skillweave.sandbox.egress_policy import (
    decide_addresses,
    decide_destination,
    idempotency_key,
    is_public,
    parse_authority,
)
from skillweave.sandbox.models import ExecuteRequest
from skillweave.skills.network import declared_destinations, parse_destination
from skillweave.storage.local import LocalArtifactStore
from tests.mcp_manager.egress_support import external_api

TOKEN = "s3cret-sales-token"
VERSION = "a" * 64


def context(port: int, *, skill: str = "sales", **changes: object) -> EgressContext:
    fields: dict[str, object] = {
        "run_id": "run-1",
        "execution_id": "skillweave-run-run-1/script-4",
        "skill": skill,
        "version": VERSION,
        "declared": declared_destinations(
            {f"127.0.0.1:{port}": "the sales API", f"localhost:{port}": "the same, by name"}
        ),
        "approval": EgressApproval(
            destinations=(f"127.0.0.1:{port}", f"localhost:{port}"),
            private=(f"127.0.0.1:{port}",),  # the test's API is on loopback: approved as such
            version=VERSION,
        ),
        "credentials": (
            CredentialBinding(
                destination=f"127.0.0.1:{port}",
                header="Authorization",
                value="Bearer ${SALES_TOKEN}",
            ),
        ),
        "secrets": {"SALES_TOKEN": TOKEN},
    }
    fields.update(changes)
    return EgressContext(**fields)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def proxy_for(ctx: EgressContext) -> AsyncIterator[tuple[int, list[EgressRecord]]]:
    records: list[EgressRecord] = []
    proxy = EgressProxy(ctx, audit=records.append)
    port = await proxy.serve_tcp()
    try:
        yield port, records
    finally:
        await proxy.aclose()


def get(url: str, proxy_port: int) -> tuple[int, str]:
    """GET `url` with urllib through the proxy, as a script would (HTTP_PROXY)."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{proxy_port}"})
    )
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def test_an_approved_skill_reaches_the_api_with_a_token_it_never_holds() -> None:
    async with external_api(TOKEN) as api, proxy_for(context(api)) as (proxy, records):
        status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{api}/q3?region=eu", proxy)
    assert (status, body) == (200, "figures for /q3?region=eu")
    (record,) = records
    assert (record.kind, record.destination, record.method, record.path) == (
        "request",
        f"127.0.0.1:{api}",
        "GET",
        "/q3?region=eu",
    )
    assert record.allowed
    assert record.reason == "forwarded with a bound credential"
    assert record.bytes_in > 0
    assert TOKEN not in record.model_dump_json()


async def test_a_connect_tunnel_reaches_the_api_and_is_opaque() -> None:
    """A tunnel carries whatever the client sends (TLS in life): no header is added."""
    async with external_api(TOKEN) as api, proxy_for(context(api)) as (proxy, records):

        def tunnel(authorization: str) -> str:
            with socket.create_connection(("127.0.0.1", proxy), timeout=10) as sock:
                # HTTP/1.1 wants a Host header, on CONNECT too (the strict parser holds to it).
                head = f"CONNECT 127.0.0.1:{api} HTTP/1.1\r\nHost: 127.0.0.1:{api}\r\n\r\n"
                sock.sendall(head.encode())
                established = sock.recv(1024).decode()
                assert established.startswith("HTTP/1.1 200"), established
                sock.sendall(f"GET /t HTTP/1.1\r\n{authorization}Host: x\r\n\r\n".encode())
                return b"".join(iter(lambda: sock.recv(4096), b"")).decode()

        assert " 401 " in await asyncio.to_thread(tunnel, "")
        assert "figures for /t" in await asyncio.to_thread(
            tunnel, f"Authorization: Bearer {TOKEN}\r\n"
        )
    assert [(r.kind, r.allowed) for r in records] == [("connect", True), ("connect", True)]


@pytest.mark.parametrize(
    ("target", "ctx_changes", "says"),
    [
        ("http://127.0.0.1:{other}/x", {}, "is not among the destinations 'sales' declares"),
        ("http://localhost:{api}/x", {}, "resolves to 127.0.0.1, a private address"),
        ("http://127.0.0.1:{api}/x", {"skill": "other", "approval": None}, "no network is"),
        (
            "http://127.0.0.1:{api}/x",
            {"approval": EgressApproval(destinations=(), version=VERSION)},
            "is declared by 'sales' but not approved",
        ),
        (
            "http://127.0.0.1:{api}/x",
            {"approval": EgressApproval(destinations=("127.0.0.1",), version="b" * 64)},
            "is for version bbbbbbbbbbbb",
        ),
    ],
    ids=["unapproved-port", "name-to-private", "another-skill", "not-approved", "other-version"],
)
async def test_what_is_not_approved_is_refused_with_its_reason_and_audited(
    target: str, ctx_changes: dict[str, object], says: str
) -> None:
    async with external_api(TOKEN) as api:
        ctx = context(api, **ctx_changes)
        async with proxy_for(ctx) as (proxy, records):
            url = target.format(api=api, other=api + 1 if api < 65535 else api - 1)
            status, body = await asyncio.to_thread(get, url, proxy)
    assert status == 403
    assert says in body, body
    (record,) = records
    assert not record.allowed
    assert says in record.reason


async def test_caps_refuse_with_429_and_say_which() -> None:
    async with external_api(TOKEN) as api:
        ctx = context(api, limits=EgressLimits(max_connections=1))
        async with proxy_for(ctx) as (proxy, records):
            first = await asyncio.to_thread(get, f"http://127.0.0.1:{api}/a", proxy)
            second = await asyncio.to_thread(get, f"http://127.0.0.1:{api}/b", proxy)
    assert first[0] == 200
    assert second[0] == 429
    assert "cap of 1 connections" in second[1]
    assert [r.allowed for r in records] == [True, False]


def test_destinations_are_read_strictly_and_addresses_judged() -> None:
    assert parse_destination("API.example.com:8443").ports == (8443,)
    assert parse_destination("*.example.org").ports == (80, 443)
    assert parse_destination("[::1]:9000").host == "::1"
    for bad in (
        "",
        "under_score",
        "http://x.com",
        "x.com:0",
        "x.com:99999",
        "*.",
        "*.com",
        "a b.com",
    ):
        with pytest.raises(EgressPolicyError):
            parse_destination(bad)
    wildcard = parse_destination("*.example.org")
    assert wildcard.matches("api.example.org", 443)
    assert not wildcard.matches("example.org", 443)
    assert not wildcard.matches("evil-example.org", 443)
    for private in (
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "::1",
        "::ffff:10.0.0.1",
        "0.0.0.0",
    ):
        assert not is_public(private), private
    assert is_public("93.184.216.34")
    declared = declared_destinations(["api.example.com:443"])
    approval = EgressApproval(destinations=("api.example.com:443",))
    named = decide_destination(
        skill="s",
        version=VERSION,
        host="api.example.com",
        port=443,
        declared=declared,
        approval=approval,
    )
    assert named.allowed
    rebinding = decide_addresses(
        named,
        host="api.example.com",
        port=443,
        addresses=["93.184.216.34", "127.0.0.1"],  # one answer is enough to refuse
        approval=approval,
    )
    assert not rebinding.allowed
    assert "private address" in rebinding.reason


def test_an_authority_is_read_strictly() -> None:
    assert parse_authority("API.Example.com", default_port=80) == ("api.example.com", 80)
    assert parse_authority("api.example.com.:8080", default_port=80) == ("api.example.com", 8080)
    assert parse_authority("[::1]:443", default_port=None) == ("::1", 443)
    assert parse_authority("[0:0::1]", default_port=80) == ("::1", 80)
    assert parse_authority("10.0.0.7:9", default_port=None) == ("10.0.0.7", 9)
    for bad in (
        "",
        ":443",
        "host:1:2",
        "[evil.example]:443",
        "[::1",
        "[::1]x",
        "[fe80::1%eth0]:443",
        "::1",
        "ｅｖｉｌ.example",
        "api.example:４４３",
        "api.example:+443",
        "api.example:0",
        "api.example:65536",
        "api.example:99999999999999999999",
        "user@api.example",
        "*.example.org",
        "%65vil.example",
        "a b.example",
        "a..example",
        "-a.example",
        "a\x00.example",
        "a" * 64 + ".example",
    ):
        with pytest.raises(EgressPolicyError):
            parse_authority(bad, default_port=443)
    with pytest.raises(EgressPolicyError, match="a port is required"):
        parse_authority("api.example", default_port=None)
    with pytest.raises(EgressPolicyError):
        parse_destination("x.com:４４３")  # ASCII digits only, in a declaration too


def test_a_name_is_judged_before_any_address_and_a_refusal_stays_one() -> None:
    declared = declared_destinations(["api.example.com:443"])
    approval = EgressApproval(destinations=("api.example.com:443",))
    refused = decide_destination(
        skill="s",
        version=VERSION,
        host="exfil.undeclared.example",
        port=443,
        declared=declared,
        approval=approval,
    )
    assert not refused.allowed
    assert "is not among the destinations" in refused.reason
    # An address check cannot turn a refused name into an allowed one.
    still = decide_addresses(
        refused,
        host="exfil.undeclared.example",
        port=443,
        addresses=["93.184.216.34"],
        approval=approval,
    )
    assert still == refused
    named = decide_destination(
        skill="s",
        version=VERSION,
        host="API.example.com.",
        port=443,
        declared=declared,
        approval=approval,
    )
    assert named.allowed
    unresolved = decide_addresses(
        named, host="api.example.com", port=443, addresses=[], approval=approval
    )
    assert (unresolved.allowed, unresolved.reason) == (False, "api.example.com does not resolve")


async def test_the_gateway_tells_executions_apart_by_their_grants() -> None:
    records: list[EgressRecord] = []
    gateway = EgressGateway(audit=records.append)
    host, port = await gateway.start()

    def get_with(url: str, token: str | None) -> tuple[int, str]:
        request = urllib.request.Request(url)
        if token is not None:
            request.add_header("Proxy-Authorization", f"Bearer {token}")
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"http": f"http://{host}:{port}"})
        )
        try:
            with opener.open(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    try:
        async with external_api(TOKEN) as api:
            sales = gateway.grant(context(api))
            other = gateway.grant(context(api, skill="other", approval=None))
            url = f"http://127.0.0.1:{api}/q"
            assert await asyncio.to_thread(get_with, url, sales) == (200, "figures for /q")
            status, body = await asyncio.to_thread(get_with, url, other)
            assert (status, "no network is approved for skill 'other'" in body) == (403, True)
            for token in (None, "forged"):
                status, body = await asyncio.to_thread(get_with, url, token)
                assert (status, body) == (407, "no egress is granted to this connection\n")
            await gateway.revoke(sales)
            assert (await asyncio.to_thread(get_with, url, sales))[0] == 407
    finally:
        await gateway.aclose()
    # The connections without a grant are recorded too, with no execution (407).
    assert [(r.skill, r.allowed, r.status) for r in records] == [
        ("sales", True, None),
        ("other", False, 403),
        ("", False, 407),
        ("", False, 407),
        ("", False, 407),
    ]


async def test_grants_name_the_address_executors_dial_and_a_wildcard_needs_one(
    tmp_path: Path,
) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    settings = EgressSettings(
        gateway_host="127.0.0.1", gateway_port=port, advertise_host="10.1.2.3"
    )
    service = EgressService(settings, store=LocalArtifactStore(tmp_path))
    await service.start()
    try:
        request = ExecuteRequest(
            execution_id="e-1", run_id="r-1", skill="sales", version=VERSION, script="x.py"
        )
        grant = service.open_grant(
            request,
            declared=declared_destinations(["api.example.com"]),
            approval=EgressApproval(destinations=("api.example.com",)),
            secrets={},
        )
        # What a pod's executor dials: the advertised address, on the fixed port.
        assert (grant.host, grant.port) == ("10.1.2.3", port)
        await service.close_grant(grant.token)
    finally:
        await service.aclose()
    assert EgressSettings().gateway_address == "127.0.0.1"
    with pytest.raises(ValidationError, match="SANDBOX__EGRESS__ADVERTISE_HOST"):
        EgressSettings(gateway_host="0.0.0.0")


async def test_each_request_gets_an_idempotency_key_stable_across_attempts() -> None:
    heads: list[str] = []
    async with external_api(TOKEN, heads=heads) as api:
        url = f"http://127.0.0.1:{api}/orders"
        for _attempt in range(2):  # the run started again: a new proxy, the same execution id
            async with proxy_for(context(api)) as (port, _):
                for _ in range(2):
                    assert (await asyncio.to_thread(get, url, port))[0] == 200
        async with proxy_for(context(api, execution_id="another-run")) as (port, _):
            await asyncio.to_thread(get, url, port)
            request = urllib.request.Request(url, headers={"Idempotency-Key": "mine-1"})
            opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"})
            )
            await asyncio.to_thread(lambda: opener.open(request, timeout=10).close())

    def key_of(head: str) -> str:
        found = [line for line in head.split("\r\n") if line.lower().startswith("idempotency-key:")]
        assert len(found) == 1, head
        return found[0].split(":", 1)[1].strip()

    keys = [key_of(head) for head in heads]
    assert keys[0] == idempotency_key("skillweave-run-run-1/script-4", 1)
    assert keys[:2] == keys[2:4]  # both attempts sent the same keys, in order
    assert keys[0] != keys[1]
    assert keys[4] not in keys[:4]  # another run, other keys
    assert keys[5] == "mine-1"  # the script's own key is kept
