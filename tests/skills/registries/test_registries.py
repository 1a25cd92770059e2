"""Searching skill registries (issue 45): an index built from a folder, found by query and by
name, with the entry's install source; signed indexes and entries verified; a registry that
cannot be read answered around, and from its cache while it may be."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillweave.errors import ConfigError
from skillweave.skills.registries import (
    IndexEntry,
    Listing,
    Registries,
    RegistryHit,
    RegistryIndex,
    ScanSummary,
    build_index,
)
from skillweave.skills.registries._memory import ProcessMemory
from skillweave.skills.registries._ranking import Ranker
from skillweave.skills.versioning import skill_version
from tests.skills.registries.helpers import library, settings, trusting


def built(tmp_path: Path, *, key: Ed25519PrivateKey | None = None) -> Path:
    source = library(tmp_path / "lib")
    index = build_index(
        str(source),
        settings=settings(tmp_path),
        name="team",
        key=key,
        key_id="ops" if key else None,
    ).index
    out = tmp_path / "index.json"
    out.write_bytes(index.to_json())
    return out


async def test_search_finds_the_best_skill_with_what_installs_it(tmp_path: Path) -> None:
    index = built(tmp_path)
    registries = Registries(settings(tmp_path, f"index:{index}"), store=None)
    hits = await registries.search("convert units of temperature", top_k=5)
    assert hits
    assert isinstance(hits[0], RegistryHit)
    best = hits[0]
    assert best.entry.name == "unit-converter"
    assert best.registry == str(index)
    assert best.score > 0
    assert best.verified is False
    assert best.entry.version == skill_version(tmp_path / "lib" / "unit-converter")
    assert isinstance(best.entry.scan, ScanSummary)
    assert best.entry.scan.decision == "clean"
    source = best.entry.install_source()
    assert (source.kind, source.path) == ("folder", "unit-converter")
    assert source.location == str(tmp_path / "lib")


async def test_find_by_exact_name_and_by_registry_label(tmp_path: Path) -> None:
    index = built(tmp_path)
    named = {"kind": "index", "location": str(index), "name": "team"}
    registries = Registries(settings(tmp_path, named))
    hit = await registries.find("pdf-forms")
    assert hit is not None
    assert hit.registry == "team"
    assert hit.entry.name == "pdf-forms"
    assert await registries.find("pdf") is None
    assert await registries.find("pdf-forms", registry="team") is not None
    with pytest.raises(ConfigError, match="no registry labelled 'other'"):
        await registries.find("pdf-forms", registry="other")


async def test_signed_index_and_entries_are_verified(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    index = built(tmp_path, key=key)
    source = {"kind": "index", "location": str(index), "key": "ops"}
    registries = Registries(settings(tmp_path, source, trust=trusting(key)))
    found = await registries.results("forms", top_k=3)
    assert found.problems == []
    assert found.hits[0].entry.name == "pdf-forms"
    assert found.hits[0].verified


async def test_an_unreadable_registry_does_not_break_the_others(tmp_path: Path) -> None:
    index = built(tmp_path)
    registries = Registries(
        settings(tmp_path, f"index:{tmp_path / 'missing.json'}", f"index:{index}")
    )
    found = await registries.results("report totals csv")
    assert found.hits[0].entry.name == "csv-report"
    assert len(found.problems) == 1
    assert "missing.json" in found.problems[0]


async def test_duplicates_across_registries_keep_the_first(tmp_path: Path) -> None:
    index = built(tmp_path)
    copy = tmp_path / "copy.json"
    copy.write_bytes(index.read_bytes())
    registries = Registries(
        settings(
            tmp_path,
            {"kind": "index", "location": str(copy), "name": "first"},
            {"kind": "index", "location": str(index), "name": "second"},
        )
    )
    hits = await registries.search("pdf forms fields", top_k=10)
    names = [(h.entry.name, h.registry) for h in hits]
    assert ("pdf-forms", "first") in names
    assert ("pdf-forms", "second") not in names


async def test_stale_cache_answers_an_unreachable_registry_for_a_day(tmp_path: Path) -> None:
    index = built(tmp_path)
    clock = [datetime(2026, 1, 1, tzinfo=UTC)]
    config = settings(tmp_path, f"index:{index}", registry_cache_seconds=60)
    first = Registries(config, now=lambda: clock[0])
    assert (await first.results("pdf")).hits
    index.unlink()  # the registry goes away
    clock[0] += timedelta(seconds=30)  # fresh: not read at all
    later = Registries(config, now=lambda: clock[0])
    fresh = await later.results("pdf")
    assert fresh.hits
    assert not fresh.hits[0].stale
    assert fresh.problems == []
    clock[0] += timedelta(hours=2)  # stale: read, fails, answered from the cache
    stale = await Registries(config, now=lambda: clock[0]).results("pdf")
    assert stale.hits
    assert stale.hits[0].stale
    assert "stale" in stale.problems[0]
    assert "no index file" in stale.problems[0]
    clock[0] += timedelta(days=1)  # over a day: nothing
    gone = await Registries(config, now=lambda: clock[0]).results("pdf")
    assert gone.hits == []
    assert "no index file" in gone.problems[0]


async def test_a_refused_listing_is_never_cached(tmp_path: Path) -> None:
    index = built(tmp_path)
    key = Ed25519PrivateKey.generate()
    source = {"kind": "index", "location": str(index), "key": "ops"}
    config = settings(tmp_path, source, trust=trusting(key))
    found = await Registries(config).results("pdf")
    assert found.hits == []
    assert "not signed" in found.problems[0]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_entry_round_trip_and_install_source(tmp_path: Path) -> None:
    entry = IndexEntry(
        name="unit-converter",
        description="Convert units.",
        source="https://example.com/acme/skills.git",
        ref="main",
        commit="a" * 40,
        path="skills/unit-converter",
        version="b" * 64,
    )
    index = RegistryIndex.new("acme", [entry])
    assert json.loads(index.to_json())["skills"][0]["commit"] == "a" * 40
    source = entry.install_source()
    assert (source.kind, source.ref, source.path) == ("git", "a" * 40, "skills/unit-converter")


async def test_every_search_of_the_process_shares_what_was_read(tmp_path: Path) -> None:
    index = built(tmp_path)
    config = settings(tmp_path, f"index:{index}", registry_cache_seconds=3600)
    assert (await Registries(config).results("pdf")).hits
    index.unlink()
    shutil.rmtree(tmp_path / "cache")
    again = await Registries(config).results("pdf")  # as the API does: one per request
    assert again.hits
    assert again.problems == []
    other_keys = settings(tmp_path, f"index:{index}", trust=trusting(Ed25519PrivateKey.generate()))
    refused = await Registries(other_keys).results("pdf")  # other keys: read (and fail) anew
    assert refused.hits == []


def test_process_memory_is_bounded() -> None:
    memory = ProcessMemory(listings=2, rankers=1)
    listing = Listing(registry="r", entries=(), trust="unsigned")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for key in ("a", "b", "c"):
        memory.keep(key, now, listing)
    assert memory.listing("a") is None
    assert memory.listing("c") is not None
    made: list[int] = []

    def make() -> Ranker:
        made.append(1)
        return Ranker([], strategy="keyword")

    first = memory.ranker("k", [listing], make)
    assert memory.ranker("k", [listing], make) is first
    memory.ranker("other", [listing], make)
    memory.ranker("k", [listing], make)
    assert len(made) == 3
