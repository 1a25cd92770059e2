"""``GET /v1/registry/search`` (issue 45) on a real loopback server: the hits of the
configured registries with their entries and the registries that could not be read,
problem+json refusals, an ``api`` registry reading it, and two APIs listing each other
without looping."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api, registry
from skillweave.config import Settings
from skillweave.skills.registries import Registries, build_index
from skillweave.storage.local import LocalArtifactStore
from tests.skills.registries.helpers import library, settings, trusting


def index_file(tmp_path: Path, *, key: Ed25519PrivateKey | None = None) -> Path:
    built = build_index(
        str(library(tmp_path / "lib")),
        settings=settings(tmp_path),
        name="team",
        key=key,
        key_id="ops" if key else None,
    )
    out = tmp_path / "index.json"
    out.write_bytes(built.index.to_json())
    return out


@asynccontextmanager
async def serving(
    tmp_path: Path, registries: list[object], *, trust: dict[str, object] | None = None
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    resolved = [
        r.replace("{self}", url)
        if isinstance(r, str)
        else {**r, "location": r["location"].replace("{self}", url)}  # type: ignore[index]
        for r in registries
    ]
    config = Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={
            "dirs": [],
            "uploaded_dir": str(tmp_path / "uploaded"),
            "registries": resolved,
            "registry_cache_dir": str(tmp_path / "api-cache"),
            "selection": "bm25",
            "trust": trust or {},
        },
    )
    app = create_api(
        config, store=LocalArtifactStore(tmp_path / "store"), routers=[registry.router]
    )
    async with (
        LoopbackServer(app, listener=listener) as server,
        httpx.AsyncClient(base_url=server.url, headers={"Authorization": "Bearer t"}) as client,
    ):
        yield client, server.url


async def test_search_answers_hits_and_unreadable_registries(tmp_path: Path) -> None:
    index = index_file(tmp_path)
    missing = tmp_path / "gone.json"
    async with serving(tmp_path, [f"index:{missing}", f"index:{index}"]) as (client, _):
        answer = await client.get("/v1/registry/search", params={"q": "pdf forms", "k": 2})
        assert answer.status_code == 200
        body = answer.json()
        assert body["query"] == "pdf forms"
        assert body["hits"][0]["entry"]["name"] == "pdf-forms"
        assert body["hits"][0]["registry"] == str(index)
        assert len(body["hits"][0]["entry"]["version"]) == 64
        assert len(body["hits"]) <= 2
        assert len(body["problems"]) == 1
        assert "gone.json" in body["problems"][0]


async def test_refusals_are_problem_json(tmp_path: Path) -> None:
    index = index_file(tmp_path)
    async with serving(tmp_path, [f"index:{index}"]) as (client, url):
        async with httpx.AsyncClient(base_url=url) as anonymous:
            refused = await anonymous.get("/v1/registry/search", params={"q": "pdf"})
        assert refused.status_code == 401
        assert refused.headers["content-type"].startswith("application/problem+json")
        for params in ({"q": ""}, {"q": "pdf", "k": 0}, {"q": "pdf", "k": 101}, {}):
            bad = await client.get("/v1/registry/search", params=params)
            assert bad.status_code == 422, params
            assert bad.headers["content-type"].startswith("application/problem+json")
        unknown = await client.get("/v1/registry/search", params={"q": "pdf", "registry": "x"})
        assert unknown.status_code == 404
        assert "no registry labelled 'x'" in unknown.json()["detail"]


async def test_an_api_registry_relays_the_served_search(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    index = index_file(tmp_path, key=key)
    async with serving(tmp_path, [f"index:{index}"], trust=trusting(key)) as (_, url):
        wrong = {"kind": "api", "location": url, "name": "wrong", "token": "nope"}
        remote = {"kind": "api", "location": url, "name": "remote", "token": "t"}
        here = tmp_path / "here"
        # This side trusts the key too: the relayed entries are verified here.
        trusted = Registries(settings(here, wrong, remote, trust=trusting(key)))
        found = await trusted.results("convert temperature units", top_k=3)
        assert found.hits[0].entry.name == "unit-converter"
        assert found.hits[0].registry == "remote"
        assert found.hits[0].verified
        assert len(found.problems) == 1
        assert "'wrong'" in found.problems[0]
        assert "HTTP 401" in found.problems[0]
        # This side does not: the same entries, unverified.
        untrusting = Registries(settings(here, remote))
        hit = await untrusting.find("csv-report")
        assert hit is not None
        assert hit.registry == "remote"
        assert not hit.verified


async def test_an_api_listing_itself_does_not_loop(tmp_path: Path) -> None:
    index = index_file(tmp_path)
    loop = {"kind": "api", "location": "{self}", "name": "self", "token": "t"}
    async with serving(tmp_path, [f"index:{index}", loop]) as (client, _):
        answer = await client.get("/v1/registry/search", params={"q": "csv report"})
        body = answer.json()
        assert answer.status_code == 200
        assert body["problems"] == []  # the relay was asked, and answered
        # The relay answered from its index only (no second hop); its hits are the same
        # versions as the index's, so the first registry's are kept.
        assert [hit["registry"] for hit in body["hits"]][:1] == [str(index)]
        assert [h["entry"]["name"] for h in body["hits"]].count("csv-report") == 1


@pytest.mark.parametrize("location", ["http://example.com/index.json", "ftp://x/y.json"])
async def test_insecure_index_urls_are_refused(tmp_path: Path, location: str) -> None:
    found = await Registries(settings(tmp_path, f"index:{location}")).results("pdf")
    assert found.hits == []
    assert "https" in found.problems[0]
