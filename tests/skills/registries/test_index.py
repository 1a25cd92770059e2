"""The index format read as hostile input (issue 45): caps, names, fields, duplicate keys,
index signatures (tampered, wrong key, required key) and entry signatures that do not verify."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillweave.config import RegistrySource, ScanSettings, TrustSettings
from skillweave.errors import PackageError, RegistryError
from skillweave.skills.registries import (
    MAX_INDEX_BYTES,
    MAX_INDEX_ENTRIES,
    IndexEntry,
    RegistryIndex,
    ScanSummary,
    index_trust,
    parse_index,
    sign_index,
    verified_listing,
)
from skillweave.skills.signing import sign_version, trusted_keys
from tests.skills.registries.helpers import trusting

VERSION = "c" * 64


def entry(**fields: Any) -> dict[str, Any]:
    return {
        "name": "unit-converter",
        "description": "Convert units.",
        "source": "https://example.com/acme/skills.git",
        "version": VERSION,
        **fields,
    }


def document(*entries: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "format": 1,
        "name": "acme",
        "generated_at": "2026-01-01T00:00:00Z",
        "skills": list(entries) or [entry()],
        **fields,
    }


def raw(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def test_a_well_formed_index_is_read() -> None:
    index, doc = parse_index(raw(document()), registry="r")
    assert index.skills[0].name == "unit-converter"
    assert doc["name"] == "acme"


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        (document(format=2), "format"),
        (document(format=True), "format"),
        (document(extra=1), "extra"),
        (document(entry(name="Unit_Converter")), "not a skill name"),
        (document(entry(name="-x")), "not a skill name"),
        (document(entry(description="d" * 1025)), "description"),
        (document(entry(description="")), "description"),
        (document(entry(version="abc")), "version"),
        (document(entry(commit="zz")), "commit"),
        (document(entry(path="../up")), "relative path"),
        (document(entry(path="/abs")), "relative path"),
        (document(entry(source="x\x1b[2Jy")), "control"),
        (document(entry(ref="-bad")), "ref"),
        (document(entry(unknown="x")), "unknown"),
        (document(entry(scan={"summary": "s", "decision": "fine"})), "decision"),
        (
            document(entry(scan={"summary": "s", "decision": "warn", "counts": {"low": -1}})),
            "count",
        ),
        (document(entry(), entry()), "listed twice"),
        (document(generated_at="yesterday"), "generated_at"),
        (document(generated_at="2026-01-01T00:00:00"), "generated_at"),
    ],
)
def test_malformed_indexes_are_refused_in_one_line(doc: dict[str, Any], problem: str) -> None:
    with pytest.raises(RegistryError, match=problem) as refused:
        parse_index(raw(doc), registry="acme")
    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith("registry 'acme': ")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"format": 1, "format": 1}', "appears twice"),
        (b"[" * 100_000, "not JSON"),
        (b" " * (MAX_INDEX_BYTES + 1), "over"),
    ],
)
def test_hostile_bytes_are_refused(data: bytes, problem: str) -> None:
    with pytest.raises(RegistryError, match=problem):
        parse_index(data, registry="r")


def test_too_many_entries_are_refused_before_validation() -> None:
    many = [entry(name=f"s-{i}") for i in range(MAX_INDEX_ENTRIES + 1)]
    with pytest.raises(RegistryError, match="over 20000 skills"):
        parse_index(raw(document(*many)), registry="r")


def test_an_install_source_is_checked_only_when_installed() -> None:
    index, _ = parse_index(raw(document(entry(source="http://example.com/x.git"))), registry="r")
    with pytest.raises(PackageError, match="no integrity"):
        index.skills[0].install_source()


def signed(key: Ed25519PrivateKey, key_id: str = "ops") -> bytes:
    index = RegistryIndex.new("acme", [IndexEntry.model_validate(entry())])
    return sign_index(index, key, key_id=key_id).to_json()


def source(**fields: Any) -> RegistrySource:
    return RegistrySource(kind="index", location="/srv/index.json", **fields)


def keys(key: Ed25519PrivateKey) -> dict[str, Any]:
    return trusted_keys(TrustSettings.model_validate(trusting(key)))


def test_a_signed_index_verifies_and_a_changed_one_does_not() -> None:
    key = Ed25519PrivateKey.generate()
    data = signed(key)
    assert verified_listing(data, source(), trusted=keys(key)).trust == "signed"
    tampered = json.loads(data)
    tampered["skills"][0]["source"] = "https://evil.example.com/x.git"
    with pytest.raises(RegistryError, match="does not verify under trusted key 'ops'"):
        verified_listing(raw(tampered), source(), trusted=keys(key))
    reordered = json.dumps(json.loads(data), indent=None, sort_keys=True).encode()
    assert verified_listing(reordered, source(), trusted=keys(key)).trust == "signed"


def test_an_index_signed_by_an_unknown_key_is_read_unverified_unless_required() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    data = signed(other, key_id="stranger")
    assert verified_listing(data, source(), trusted=keys(key)).trust == "untrusted"
    with pytest.raises(RegistryError, match="signed by key 'stranger', not by 'ops'"):
        verified_listing(data, source(key="ops"), trusted=keys(key))
    with pytest.raises(RegistryError, match="not signed"):
        verified_listing(raw(document()), source(key="ops"), trusted=keys(key))
    with pytest.raises(RegistryError, match="not in SKILLS__TRUST__KEYS"):
        verified_listing(data, source(key="missing"), trusted=keys(key))


def test_a_same_key_id_with_another_key_is_refused() -> None:
    key, impostor = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    with pytest.raises(RegistryError, match="does not verify"):
        verified_listing(signed(impostor), source(), trusted=keys(key))


def test_a_skill_signature_is_not_an_index_signature() -> None:
    key = Ed25519PrivateKey.generate()
    document_ = json.loads(signed(key))
    skill = sign_version(key, name="unit-converter", version=VERSION, key_id="ops")
    document_["signature"]["signature"] = skill.signature
    with pytest.raises(RegistryError, match="does not verify"):
        verified_listing(raw(document_), source(), trusted=keys(key))


def test_entries_whose_signature_fails_are_dropped_and_named() -> None:
    key, impostor = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    good = sign_version(key, name="unit-converter", version=VERSION, key_id="ops")
    forged = sign_version(impostor, name="pdf-forms", version=VERSION, key_id="ops")
    moved = sign_version(key, name="unit-converter", version=VERSION, key_id="ops")
    stranger = sign_version(impostor, name="csv-report", version=VERSION, key_id="x")
    doc = document(
        entry(signature=json.loads(good.model_dump_json())),
        entry(name="pdf-forms", signature=json.loads(forged.model_dump_json())),
        entry(name="other", signature=json.loads(moved.model_dump_json())),
        entry(name="csv-report", signature=json.loads(stranger.model_dump_json())),
        entry(name="plain"),
    )
    listing = verified_listing(raw(doc), source(), trusted=keys(key))
    kept = {listed.entry.name: listed.verified for listed in listing.entries}
    assert kept == {"unit-converter": True, "csv-report": False, "plain": False}
    assert len(listing.problems) == 2
    assert any("pdf-forms" in p and "does not verify" in p for p in listing.problems)
    assert any("'other'" in p and "does not match" in p for p in listing.problems)


def test_scan_summary_is_judged_again_under_the_readers_policy() -> None:
    summary = ScanSummary(summary="1 finding (1 high)", decision="warn", counts={"high": 1})
    assert summary.decision_under(ScanSettings()) == "approve"
    assert summary.decision_under(ScanSettings(policy={"high": "block"})) == "block"
    assert ScanSummary(summary="none", decision="clean").decision_under(ScanSettings()) == "clean"


def test_index_trust_reads_the_signature_from_the_document_as_parsed() -> None:
    key = Ed25519PrivateKey.generate()
    index, doc = parse_index(signed(key), registry="r")
    assert index_trust(index, doc, registry="r", trusted=keys(key)) == "signed"
    doc["name"] = "other"
    with pytest.raises(RegistryError):
        index_trust(index, doc, registry="r", trusted=keys(key))
    assert base64.b64decode(index.signature.signature)  # type: ignore[union-attr]


def test_an_entry_source_is_never_a_relative_path() -> None:
    def install(source: str, **host: str) -> Any:
        return IndexEntry.model_validate(entry(source=source)).install_source(**host)

    with pytest.raises(PackageError, match="relative path in a registry entry"):
        install("vendor")
    with pytest.raises(PackageError, match="needs a git host"):
        install("acme/skills")
    shorthand = install("acme/skills", git_host="https://git.example.com")
    assert shorthand.location == "https://git.example.com/acme/skills.git"
