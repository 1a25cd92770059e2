"""Registry reads over HTTP (issue 45): https anywhere and http only to loopback, a size cap
whatever the headers say, redirects only to such URLs, and a token never sent to another
origin. A fake transport stands in for the network (unit tests: no socket)."""

from __future__ import annotations

import httpx
import pytest

from skillweave.errors import RegistryError
from skillweave.skills.registries._transport import checked_url, fetch_bytes


def client(handler) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    return httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/index.json",
        "file:///etc/passwd",
        "ftp://example.com/x",
        "https://user:pw@example.com/x",
        "https:///nohost",
    ],
)
def test_urls_that_are_refused(url: str) -> None:
    with pytest.raises(RegistryError):
        checked_url(url, registry="r")


@pytest.mark.parametrize(
    "url", ["https://example.com/i.json", "http://127.0.0.1:8000/x", "http://[::1]/x"]
)
def test_urls_that_are_read(url: str) -> None:
    assert checked_url(url, registry="r") == url


async def test_the_body_is_capped_whatever_the_headers_say() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 2000, headers={"content-length": "10"})

    async with client(handler) as http:
        with pytest.raises(RegistryError, match="over 1000 bytes"):
            await fetch_bytes("https://e.com/i", registry="r", max_bytes=1000, client=http)


@pytest.mark.parametrize(
    ("target", "problem"),
    [("file:///etc/passwd", "not an https"), ("http://evil.example/i", "plain http")],
)
async def test_redirects_to_other_schemes_are_refused(target: str, problem: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": target})

    async with client(handler) as http:
        with pytest.raises(RegistryError, match=problem):
            await fetch_bytes("https://e.com/i", registry="r", max_bytes=100, client=http)


async def test_a_token_goes_only_to_its_own_origin() -> None:
    seen: list[tuple[str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.headers.get("authorization")))
        if request.url.host == "api.example":
            return httpx.Response(307, headers={"location": "https://mirror.example/i"})
        return httpx.Response(200, content=b"{}")

    async with client(handler) as http:
        body = await fetch_bytes(
            "https://api.example/i",
            registry="r",
            max_bytes=100,
            headers={"Authorization": "Bearer s3cret"},
            client=http,
        )
    assert body == b"{}"
    assert seen == [("api.example", "Bearer s3cret"), ("mirror.example", None)]


async def test_errors_and_loops_are_one_line() -> None:
    def refusing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403)

    def looping(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "https://e.com/again"})

    def failing(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    for handler, problem in (
        (refusing, "HTTP 403"),
        (looping, "redirects"),
        (failing, "ConnectError"),
    ):
        async with client(handler) as http:
            with pytest.raises(RegistryError, match=problem) as caught:
                await fetch_bytes("https://e.com/i", registry="r", max_bytes=100, client=http)
        assert "\n" not in str(caught.value)
