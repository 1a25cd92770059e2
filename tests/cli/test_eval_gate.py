"""The CLI's side of ``--gate`` (``cli.eval_gate``): its options go with ``--gate`` only, and an
update's admissions gate each new version after its scan and before it is stored, its package
put where a pinned run reads it first, the same version again not gated."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from skillweave.cli.eval_gate import GatedAdmissions, gate_options
from skillweave.config import Settings
from skillweave.errors import SkillweaveError
from skillweave.skills import build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


def test_gate_options_go_with_the_gate() -> None:
    assert (
        gate_options(
            gate=False, model=None, grader=None, repeat=1, tolerance=0.0, allow_missing=False
        )
        is None
    )
    with pytest.raises(typer.Exit) as refused:
        gate_options(
            gate=False, model="m", grader=None, repeat=1, tolerance=0.0, allow_missing=False
        )
    assert refused.value.exit_code == 2
    options = gate_options(
        gate=True, model="m", grader="g", repeat=3, tolerance=0.1, allow_missing=True
    )
    assert options is not None
    assert (options.model, options.grader, options.repeat) == ("m", "g", 3)
    assert (options.tolerance, options.allow_missing) == (0.1, True)


class Refusing:
    """A gate that records what it was asked and refuses."""

    def __init__(self, store: LocalArtifactStore) -> None:
        self.store = store
        self.asked: list[tuple[str, str, str | None, bool]] = []

    async def check(self, name: str, version: str, current: str | None) -> None:
        stored = await self.store.stat(keys.skill_package_key(name, version)) is not None
        report = await self.store.stat(keys.skill_scan_key(name, version)) is not None
        self.asked.append((name, version, current, stored and report))
        raise SkillweaveError("refused by its evals")


async def test_an_updates_new_version_is_gated_before_it_is_stored(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    first = await stored.add_package(
        build_package(write_skill(tmp_path / "a" / "notes", description="Notes. Use it."))
    )
    gate = Refusing(store)

    async def current(name: str) -> str | None:
        record = await stored.get(name)
        return record.latest if record is not None else None

    admissions = GatedAdmissions(
        Settings(_env_file=None).skills,
        store,
        gate=gate,  # type: ignore[arg-type]
        current=current,
    )
    newer = write_skill(tmp_path / "b" / "notes", description="Notes, better. Use it.")

    with pytest.raises(SkillweaveError, match="refused by its evals"):
        await stored.add_package(build_package(newer), check=admissions.check)

    [(name, version, was, readable)] = gate.asked
    assert (name, was) == ("notes", first.latest)
    assert version != first.latest
    assert readable  # its package and scan where a pinned eval run reads them
    record = await stored.get("notes")
    assert record is not None
    assert record.latest == first.latest  # not current
    assert [v.version for v in record.versions] == [first.latest]

    again = build_package(tmp_path / "a" / "notes")
    await stored.add_package(again, check=admissions.check)  # the same version: not gated
    assert len(gate.asked) == 1
