"""The eval gate of an update or a rollback (``evals.gate``), with a fake runner: it passes when
the new version keeps its pass rate (within the tolerance), refuses when it loses it, when the
batch did not complete, when there are no evals (unless allowed) or broken ones; nothing to
compare with passes without a batch; every decision is in the audit log. A gated rollback
holds no lock while its gate runs, and refuses when the current version changed meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.config import Settings
from skillweave.evals.batch import EvalBatch
from skillweave.evals.gate import (
    EvalGateError,
    GateOptions,
    GateVerdict,
    gate_version,
    gated_rollback,
)
from skillweave.evals.report import build_report
from skillweave.evals.results import EvalReport
from skillweave.skills import SkillRegistry, SkillScanner, build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.evals.reports import grade

CURRENT = "c" * 64
EVALS = {
    "evals": [
        {"id": 1, "prompt": "Convert 5 km", "expectations": ["3.11 miles"]},
        {"id": 2, "prompt": "Convert 2 kg", "expectations": ["4.41 pounds"]},
    ]
}


class Runner:
    """Answers each batch with a report: each eval's verdicts passed `new` (the version
    gated) and `old` (the current one) times of 2."""

    def __init__(self, new: int, old: int, *, status: str = "completed") -> None:
        self.new, self.old, self.status = new, old, status
        self.batches: list[EvalBatch] = []

    async def __call__(self, batch: EvalBatch) -> EvalReport:
        self.batches.append(batch)
        grades = [
            grade(case.id, variant, passed=passed, failed=2 - passed)
            for case in batch.cases
            for variant, passed in (("skill", self.new), ("against", self.old))
        ]
        return build_report(
            batch,
            grades,
            status=self.status,  # type: ignore[arg-type]
            finished_at="2026-12-07T05:00:00Z",
            wall_seconds=1.0,
            triggers=None,
        )


def _library(root: Path, evals: object | None = EVALS) -> SkillRegistry:
    files = {"evals/evals.json": json.dumps(evals)} if evals is not None else {}
    write_skill(root / "converter", description="Converts units. Use for units.", files=files)
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


async def _gate(
    tmp_path: Path,
    runner: Runner,
    *,
    evals: object | None = EVALS,
    current: str | None = CURRENT,
    **options: object,
) -> tuple[object, list[dict[str, object]]]:
    registry = _library(tmp_path / "skills", evals)
    store = LocalArtifactStore(tmp_path / "store")
    audit = AuditLog(store, actor="cli:test")
    version = registry.get("converter").version
    try:
        outcome: object = await gate_version(
            registry=registry,
            store=store,
            skill="converter",
            version=version,
            current=current,
            options=GateOptions(**options),  # type: ignore[arg-type]
            run=runner,
            audit=audit,
        )
    except EvalGateError as exc:
        outcome = exc
    await audit.aclose()
    records = [
        record.model_dump(mode="json") async for record in AuditLog(store).read(event="eval_gate")
    ]
    return outcome, records


async def test_a_version_that_keeps_its_pass_rate_passes_and_is_recorded(tmp_path: Path) -> None:
    runner = Runner(new=2, old=2)
    verdict, records = await _gate(tmp_path, runner, model="scripted:x.yaml", repeat=2)

    assert not isinstance(verdict, EvalGateError)
    [batch] = runner.batches
    assert batch.against == CURRENT
    assert batch.version != CURRENT
    assert (batch.repeat, batch.model, batch.baseline) == (2, "scripted:x.yaml", False)
    assert [case.id for case in batch.cases] == ["1", "2"]
    [record] = records
    assert record["details"]["decision"] == "passed"
    assert record["details"]["from"] == CURRENT
    assert record["details"]["pass_rate"] == 1.0
    assert record["details"]["batch"] == batch.batch_id


async def test_a_version_that_loses_pass_rate_is_refused_saying_both_and_where(
    tmp_path: Path,
) -> None:
    runner = Runner(new=1, old=2)
    refused, records = await _gate(tmp_path, runner)

    assert isinstance(refused, EvalGateError)
    batch_id = runner.batches[0].batch_id
    line = str(refused)
    assert "was not made current: its evals pass 50% with " in line
    assert f"against 100% with the current {CURRENT[:12]}" in line
    assert "report: evals/converter/eval-" in line
    assert line.endswith(f"/report.md (skillweave skills eval converter --show {batch_id})")
    assert "\n" not in line
    [record] = records
    assert record["details"]["decision"] == "refused"
    assert record["details"]["current_pass_rate"] == 1.0


async def test_the_tolerance_lets_a_small_loss_through(tmp_path: Path) -> None:
    verdict, _ = await _gate(tmp_path, Runner(new=1, old=2), tolerance=0.5)
    assert not isinstance(verdict, EvalGateError)
    refused, _ = await _gate(tmp_path / "b", Runner(new=1, old=2), tolerance=0.49)
    assert isinstance(refused, EvalGateError)


async def test_a_batch_that_did_not_complete_is_refused(tmp_path: Path) -> None:
    refused, _ = await _gate(tmp_path, Runner(new=2, old=2, status="cancelled"))
    assert isinstance(refused, EvalGateError)
    assert "ended cancelled" in str(refused)


async def test_no_evals_is_refused_unless_allowed_without_a_batch(tmp_path: Path) -> None:
    runner = Runner(new=2, old=2)
    refused, records = await _gate(tmp_path, runner, evals=None)
    assert isinstance(refused, EvalGateError)
    assert "has no evals/evals.json" in str(refused)
    assert "--gate-allow-missing" in str(refused)
    assert records[0]["details"]["decision"] == "refused"

    allowed, _ = await _gate(tmp_path / "b", runner, evals=None, allow_missing=True)
    assert not isinstance(allowed, EvalGateError)
    assert runner.batches == []


async def test_broken_evals_are_refused(tmp_path: Path) -> None:
    refused, _ = await _gate(tmp_path, Runner(new=2, old=2), evals={"evals": []})
    assert isinstance(refused, EvalGateError)
    assert "evals/evals.json" in str(refused)
    assert "broken" in str(refused)


async def test_nothing_to_compare_with_passes_without_a_batch(tmp_path: Path) -> None:
    runner = Runner(new=0, old=2)
    verdict, records = await _gate(tmp_path, runner, current=None)
    assert not isinstance(verdict, EvalGateError)
    assert runner.batches == []
    assert records[0]["details"]["decision"] == "passed"


def test_options_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="tolerance"):
        GateOptions(tolerance=1.5)
    with pytest.raises(ValueError, match="repeat"):
        GateOptions(repeat=0)


async def _two_versions(tmp_path: Path) -> tuple[StoredSkills, list[str]]:
    stored = StoredSkills(LocalArtifactStore(tmp_path / "store"))
    versions = []
    for word in ("one", "two", "three"):
        folder = write_skill(tmp_path / word / "notes", description=f"Notes {word}. Use it.")
        versions.append((await stored.add_package(build_package(folder))).latest)
    return stored, versions


async def _judged(name: str, current: str, version: str, package: bytes) -> bool:
    return False


async def test_a_gated_rollback_gates_with_no_lock_held_and_refuses_a_stale_comparison(
    tmp_path: Path,
) -> None:
    stored, (one, two, three) = await _two_versions(tmp_path)
    asked: list[tuple[str, str | None]] = []

    async def gate(name: str, version: str, current: str | None) -> GateVerdict:
        asked.append((version, current))
        # Another writer rolls back meanwhile: the store is not locked while a batch runs.
        await stored.rollback(name, one, check=_judged)
        return GateVerdict(
            skill=name, version=version, current=current, decision="passed", reason="ok"
        )

    settings = Settings(_env_file=None).skills
    with pytest.raises(EvalGateError, match="the current version changed from"):
        await gated_rollback(
            stored, "notes", two[:12], reserved=(), judged=_judged, gate=gate, settings=settings
        )
    assert asked == [(two, three)]
    record = await stored.get("notes")
    assert record is not None
    assert record.latest == one  # the other writer's, not the stale gate's


async def test_a_gated_rollback_to_the_current_version_runs_no_gate(tmp_path: Path) -> None:
    stored, (_, _, three) = await _two_versions(tmp_path)

    async def gate(name: str, version: str, current: str | None) -> GateVerdict:
        raise AssertionError("no gate: nothing changes")

    done = await gated_rollback(
        stored,
        "notes",
        three,
        reserved=(),
        judged=_judged,
        gate=gate,
        settings=Settings(_env_file=None).skills,
    )
    assert not done.changed
