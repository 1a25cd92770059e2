"""A skill's stored versions (issue 45, part 4): pins parse in one place, a version or a unique
prefix names one stored version, and ``StoredSkills.rollback`` makes an earlier one current
again, judged under today's policies and recorded in the audit log before the change; every
refusal changes nothing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillweave.config import Settings
from skillweave.errors import (
    AuditLogError,
    SignatureError,
    SkillNotFoundError,
    SkillScanError,
)
from skillweave.skills import SkillVersionError, build_package, parse_pin
from skillweave.skills.admission import Admissions
from skillweave.skills.library import source_of
from skillweave.skills.stored import (
    SkillOrigin,
    StoredSkill,
    StoredSkills,
    StoredVersion,
    rollback_check,
    uploaded_versions,
)
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.skills.failing_audit import AuditWritesFail

CORPUS = Path(__file__).parents[1] / "data" / "scan" / "malicious"
A, B = "a" * 64, "b" * 64


def settings(**skills: object) -> Settings:
    return Settings(_env_file=None, skills=skills)


def record_of(*versions: str, latest: str | None = None) -> StoredSkill:
    entries = [
        StoredVersion(version=v, created_at=datetime(2030, 1, i + 1, tzinfo=UTC), size=1, sha256=v)
        for i, v in enumerate(versions)
    ]
    return StoredSkill(
        name="notes", description="d", latest=latest or versions[-1], versions=entries
    )


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return AuditWritesFail(tmp_path / "store")


async def two_versions(stored: StoredSkills, tmp_path: Path) -> tuple[str, str]:
    """`notes` stored twice: the older version's description says 'one', the newer 'two'."""
    versions = []
    for word in ("one", "two"):
        folder = write_skill(
            tmp_path / word / "notes", description=f"Notes ({word}). Use for notes."
        )
        record = await stored.add_package(build_package(folder))
        versions.append(record.latest)
    return versions[0], versions[1]


# --- pins -----------------------------------------------------------------------------------


def test_a_pin_is_a_name_and_8_to_64_hex_digits_and_nothing_else() -> None:
    assert parse_pin("notes").version is None
    pin = parse_pin("notes@ABCDEF0123")
    assert (pin.name, pin.version, pin.exact, str(pin)) == (
        "notes",
        "abcdef0123",
        False,
        "notes@abcdef0123",
    )
    assert parse_pin(f"notes@{A}").exact
    for bad in (
        "notes@abc1234",
        "notes@zzzzzzzz",
        "@abcdef0123",
        "web.*@abcdef0123",
        "../etc@abcdef0123",
        "a\\b@abcdef0123",
        f"notes@{A}a",
        "notes@",
    ):
        with pytest.raises(SkillVersionError, match="is not a valid version") as exc:
            parse_pin(bad)
        assert exc.value.problem == "malformed"


def test_a_version_is_found_by_its_whole_or_a_unique_prefix() -> None:
    from skillweave.skills.stored._versions import find_version, previous_version

    record = record_of(A, "a" * 8 + "c" * 56, B)
    assert find_version(record, B).version == B
    assert find_version(record, "BBBBBBBB").version == B
    with pytest.raises(SkillVersionError, match="ambiguous: it begins") as exc:
        find_version(record, "aaaaaaaa")
    assert exc.value.problem == "ambiguous"
    assert len(exc.value.versions) == 2
    with pytest.raises(SkillVersionError, match=r"no stored version 'dddddddd'.*bbbbbbbbbbbb"):
        find_version(record, "dddddddd")
    assert previous_version(record).version == "a" * 8 + "c" * 56
    with pytest.raises(SkillVersionError, match="no earlier stored version") as none:
        previous_version(record_of(A))
    assert none.value.problem == "no_earlier"


# --- rollback -------------------------------------------------------------------------------


async def test_a_rollback_makes_the_version_before_current_and_moves_the_generation(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    older, newer = await two_versions(stored, tmp_path)
    before = await stored.generation()
    audit = AuditLog(store, actor="tester")
    done = await stored.rollback("notes", check=rollback_check(store, settings().skills, audit))
    assert (done.previous, done.version, done.changed, done.held) == (newer, older, True, False)
    record = await stored.get("notes")
    assert record is not None
    assert (record.latest, record.enabled, record.description) == (
        older,
        True,
        "Notes (one). Use for notes.",
    )
    assert await stored.generation() != before
    [entry] = [r async for r in audit.read(event="rollback")]
    assert (entry.version, entry.actor, entry.details["from"], entry.details["to"]) == (
        older,
        "tester",
        newer,
        older,
    )
    # Again, without a version: back to the one current before (the newer).
    again = await stored.rollback("notes", check=rollback_check(store, settings().skills, audit))
    assert again.version == newer


async def test_rolling_back_to_the_current_version_changes_and_records_nothing(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    _, newer = await two_versions(stored, tmp_path)
    before = await stored.generation()
    audit = AuditLog(store)
    done = await stored.rollback(
        "notes", newer[:8], check=rollback_check(store, settings().skills, audit)
    )
    assert not done.changed
    assert await stored.generation() == before
    assert [r async for r in audit.read(event="rollback")] == []


async def test_unknown_skills_and_versions_are_refused_naming_the_versions(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    older, newer = await two_versions(stored, tmp_path)
    with pytest.raises(SkillNotFoundError):
        await stored.rollback("nothing")
    with pytest.raises(SkillVersionError, match=f"no stored version 'deadbeef'.*{older[:12]}"):
        await stored.rollback("notes", "deadbeef")
    assert await stored.resolve("notes", older[:10]) == older
    record = await stored.get("notes")
    assert record is not None
    assert record.latest == newer


async def test_a_record_that_cannot_be_written_rolls_nothing_back(
    store: AuditWritesFail, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    _, newer = await two_versions(stored, tmp_path)
    store.failing = True
    with pytest.raises(AuditLogError):
        await stored.rollback(
            "notes", check=rollback_check(store, settings().skills, AuditLog(store))
        )
    record = await stored.get("notes")
    assert record is not None
    assert record.latest == newer


async def held_case(store: LocalArtifactStore, tmp_path: Path) -> tuple[str, str]:
    """`hosts-manager` (a high finding) stored while high only warned, then a clean version."""
    stored = StoredSkills(store)
    folder = Path(shutil.copytree(CORPUS / "hosts-manager", tmp_path / "hosts-manager"))
    lenient = Admissions(settings(scan={"policy": {"high": "warn"}}).skills, store)
    first = await stored.add_package(build_package(folder), check=lenient.check)
    await lenient.keep("hosts-manager")
    shutil.rmtree(folder / "scripts")
    second = await stored.add_package(build_package(folder), check=lenient.check)
    await lenient.keep("hosts-manager")
    return first.latest, second.latest


async def test_a_version_todays_scan_policy_blocks_is_refused(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    risky, clean = await held_case(store, tmp_path)
    strict = settings(scan={"policy": {"high": "block"}}).skills
    audit = AuditLog(store)
    with pytest.raises(SkillScanError, match=r"fs\.write-outside"):
        await StoredSkills(store).rollback(
            "hosts-manager", risky, check=rollback_check(store, strict, audit)
        )
    record = await StoredSkills(store).get("hosts-manager")
    assert record is not None
    assert record.latest == clean
    assert [r async for r in audit.read(event="rollback")] == []


async def test_a_version_whose_scan_needs_approval_becomes_held(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    risky, _ = await held_case(store, tmp_path)
    done = await StoredSkills(store).rollback(
        "hosts-manager", risky, check=rollback_check(store, settings().skills, AuditLog(store))
    )
    assert done.held
    assert (done.record.latest, done.record.enabled, done.record.held) == (risky, False, True)


async def test_a_version_the_trust_policy_refuses_is_refused(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    older, newer = await two_versions(stored, tmp_path)
    refusing = settings(trust={"unsigned": "refuse"}).skills
    with pytest.raises(SignatureError, match="not signed"):
        await stored.rollback(
            "notes", older, check=rollback_check(store, refusing, AuditLog(store))
        )
    record = await stored.get("notes")
    assert record is not None
    assert record.latest == newer


# --- the listing ----------------------------------------------------------------------------


async def test_the_listing_shows_every_version_newest_first_with_who_brought_it(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    audit = AuditLog(store, actor="api@host")
    versions = []
    for word in ("one", "two"):
        folder = write_skill(tmp_path / word / "notes", description=f"Notes ({word}). Use it.")
        admissions = Admissions(settings().skills, store, audit=audit)
        record = await stored.add_package(build_package(folder), check=admissions.check)
        await audit.record("upload", skill="notes", version=record.latest)
        await admissions.keep("notes")
        versions.append(record.latest)
    await stored.rollback("notes")
    record = await stored.get("notes")
    assert record is not None
    shown = await uploaded_versions(store, settings().skills, record, audit)
    assert [v.version for v in shown.versions] == versions[::-1]
    assert [v.current for v in shown.versions] == [False, True]
    assert {v.actor for v in shown.versions} == {"api@host"}
    assert {v.source for v in shown.versions} == {"uploaded"}
    assert shown.versions[0].scan.summary == "no findings"
    assert shown.versions[0].signature.text == "unsigned"
    assert shown.rollback
    assert shown.note is None
    unknown = await uploaded_versions(store, settings().skills, record, None)
    assert {v.actor for v in unknown.versions} == {"unknown"}
    assert unknown.note is not None
    assert "audit log is off" in unknown.note


async def test_the_library_serves_the_version_rolled_back_to(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    from skillweave.skills import SkillLibrary

    stored = StoredSkills(store)
    older, newer = await two_versions(stored, tmp_path)
    library = SkillLibrary(settings().skills, dirs=[], store=store, folder=tmp_path / "served")
    assert (await library.reload()).get("notes").version == newer
    await stored.rollback("notes")
    served = (await library.reload()).get("notes")
    assert served.version == older
    assert "Notes (one)" in (served.path / "SKILL.md").read_text()


async def test_who_published_or_installed_for_a_run_names_the_run_once(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    older, newer = await two_versions(stored, tmp_path)
    await AuditLog(store, actor="worker@box").record(
        "upload", skill="notes", version=older, run="run-1"
    )
    await AuditLog(store).record(
        "install", skill="notes", version=newer, run="run-2", actor="run run-2"
    )
    record = await stored.get("notes")
    assert record is not None
    shown = await uploaded_versions(store, settings().skills, record, AuditLog(store))
    assert [v.actor for v in shown.versions] == ["run run-2", "worker@box (run run-1)"]


async def test_the_listing_names_where_the_current_version_came_from_as_skills_list_does(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    stored = StoredSkills(store)
    uploaded = await stored.add_package(build_package(write_skill(tmp_path / "u" / "notes")))
    listed = await uploaded_versions(store, settings().skills, uploaded, None)
    assert listed.kind == source_of(uploaded) == "uploaded"
    for kind, expected in (("git", "installed"), ("agent", "agent")):
        origin = SkillOrigin(source=f"https://example.com/{kind}.git", kind=kind)
        folder = write_skill(tmp_path / kind / "notes", description=f"Notes from {kind}. Use it.")
        record = await stored.add_package(build_package(folder), origin=origin)
        listed = await uploaded_versions(store, settings().skills, record, None)
        assert listed.kind == source_of(record) == expected
