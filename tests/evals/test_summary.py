"""The eval summary an approval shows (``evals.summary``): a version with no evals, broken
evals, evals never run, a stored report of this version (and one of another, not shown), a
draft known only by its package in the store, and hostile files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.config import Settings, SkillsSettings
from skillweave.evals.report import build_report
from skillweave.evals.store import save_report
from skillweave.evals.suite import EvalSuiteError
from skillweave.evals.summary import (
    MAX_LINE_CHARS,
    EvalSummary,
    draft_line,
    eval_summary,
    version_suite,
)
from skillweave.skills import SkillRegistry, SkillScanner, build_package
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.evals.reports import batch, grade

CONVERTER = "Converts units of length and weight. Use when a length or weight must be converted."
EVALS = {
    "skill_name": "converter",
    "evals": [
        {
            "id": 1,
            "prompt": "Convert 5 km to miles for a length",
            "expectations": ["The answer gives 3.11 miles"],
            "checks": [{"type": "answer_contains", "text": "3.11"}],
        },
        {
            "id": 2,
            "prompt": "Convert 2 kg weight to pounds",
            "expectations": ["The answer gives 4.41 pounds", "It names the factor"],
        },
    ],
}
TRIGGERS = [
    {"query": "Write a poem about the sea", "should_trigger": False},
    {"query": "Summarise this meeting transcript", "should_trigger": False},
]


def _settings(tmp_path: Path) -> SkillsSettings:
    skills = {"uploaded_dir": str(tmp_path / "uploaded"), "catalog_top_k": 1}
    return Settings(_env_file=None, skills=skills).skills


def _library(root: Path, **files: str | bytes) -> SkillRegistry:
    write_skill(root / "converter", description=CONVERTER, files=dict(files))
    write_skill(root / "poet", description="Writes poems. Use when a poem is asked for.")
    write_skill(root / "notes", description="Summarises meetings. Use for meeting notes.")
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def _evals(data: object = EVALS) -> dict[str, str | bytes]:
    return {"evals/evals.json": json.dumps(data), "evals/triggers.json": json.dumps(TRIGGERS)}


async def _summary(tmp_path: Path, registry: SkillRegistry, **kw: object) -> EvalSummary | None:
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    return await eval_summary(registry, store, "converter", version, settings=_settings(tmp_path))


async def test_a_version_without_evals_has_no_summary(tmp_path: Path) -> None:
    registry = _library(tmp_path / "skills")
    assert await _summary(tmp_path, registry) is None


async def test_evals_never_run_say_so_with_counts_and_triggers(tmp_path: Path) -> None:
    registry = _library(tmp_path / "skills", **_evals())

    summary = await _summary(tmp_path, registry)

    assert summary is not None
    assert (summary.evals, summary.checks, summary.expectations) == (2, 1, 3)
    assert summary.last_run is None
    assert summary.problem is None
    assert summary.trigger_counts == (2, 2, 0, 2)
    assert summary.line() == (
        "evals: 2 (4 checks and expectations), never run "
        "(skillweave skills eval converter, once approved);"
        " triggers: recall 2/2, false 0/2"
    )


async def test_broken_evals_are_a_line_saying_so_never_an_error(tmp_path: Path) -> None:
    broken = {"evals": [{"id": 1, "prompt": "x"}]}  # nothing to grade
    registry = _library(tmp_path / "skills", **_evals(broken))

    summary = await _summary(tmp_path, registry)

    assert summary is not None
    assert summary.evals == 0
    assert summary.line().startswith(
        "evals: broken (converter/evals/evals.json: eval 1: no expectations and no checks)"
    )
    assert "docs/EVALS.md" in summary.line()


async def test_hostile_evals_are_clipped_to_one_printable_line(tmp_path: Path) -> None:
    hostile = {"evals": [{"id": "\x1b[2J" + "x" * 5000, "prompt": "p", "expectations": ["e"]}]}
    registry = _library(tmp_path / "skills", **_evals(hostile))

    summary = await _summary(tmp_path, registry)

    assert summary is not None
    assert summary.problem is not None
    assert "\x1b" not in summary.line()
    assert "\n" not in summary.line()
    assert len(summary.problem) <= 160


async def test_a_huge_or_non_json_suite_is_broken(tmp_path: Path) -> None:
    registry = _library(tmp_path / "skills", **{"evals/evals.json": b"\xff{" + b" " * 1_100_000})
    summary = await _summary(tmp_path, registry)
    assert summary is not None
    assert summary.problem == "converter/evals/evals.json: larger than 1000000 bytes"


async def test_a_suite_linked_outside_the_skill_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps(EVALS))
    registry = _library(tmp_path / "skills")
    folder = registry.get("converter").path
    (folder / "evals").mkdir()
    (folder / "evals" / "evals.json").symlink_to(outside)

    summary = await _summary(tmp_path, registry)

    assert summary is not None
    assert summary.evals == 0
    assert "outside the skill folder" in summary.line()


async def test_the_latest_report_of_this_version_is_shown_not_another_versions(
    tmp_path: Path,
) -> None:
    registry = _library(tmp_path / "skills", **_evals())
    version = registry.get("converter").version
    store = LocalArtifactStore(tmp_path / "store")
    ours = batch(("1", "2")).model_copy(update={"skill": "converter", "version": version})
    grades = [
        grade("1", "skill"),
        grade("2", "skill"),
        grade("1", "baseline", passed=0, failed=1),
        grade("2", "baseline", passed=1, failed=1),
    ]
    report = build_report(
        ours,
        grades,
        status="completed",
        finished_at="2026-12-07T04:10:00Z",
        wall_seconds=3.0,
        triggers=None,
    )
    await save_report(store, report, markdown="# r", html="<p>r</p>")
    other = ours.model_copy(
        update={"batch_id": "eval-20261208-000000-ffffff", "version": "ab" * 32}
    )
    newer = build_report(
        other,
        [grade("1", "skill", passed=0, failed=1)],
        status="completed",
        finished_at="2026-12-08T00:00:00Z",
        wall_seconds=1.0,
        triggers=None,
    )
    await save_report(store, newer, markdown="# r", html="<p>r</p>")

    summary = await eval_summary(
        registry, store, "converter", version, settings=_settings(tmp_path)
    )

    assert summary is not None
    assert summary.last_run is not None
    assert summary.last_run.batch_id == ours.batch_id
    assert summary.line().startswith(
        "evals: 2 (4 checks and expectations); last run 2026-12-07: 100% with the skill,"
        " 25% without; triggers: recall 2/2"
    )


async def test_a_draft_is_read_from_its_package_in_the_store(tmp_path: Path) -> None:
    """A run's draft (or an install waiting at its gate) is not in the library: its package
    at ``keys.skill_package_key`` is what is read, and it is ranked in the library."""
    registry = _library(tmp_path / "skills")
    draft = write_skill(
        tmp_path / "drafts" / "miles",
        description="Converts kilometres to miles. Use when a length in km is given.",
        files=_evals({**EVALS, "skill_name": "miles"}),
    )
    version = SkillRegistry.from_scan(SkillScanner([draft.parent]).scan()).get("miles").version
    store = LocalArtifactStore(tmp_path / "store")
    await store.put_bytes(keys.skill_package_key("miles", version), build_package(draft))

    summary = await eval_summary(registry, store, "miles", version, settings=_settings(tmp_path))

    assert summary is not None
    assert summary.evals == 2
    assert summary.triggers is not None
    assert summary.triggers.positives == 2
    line = draft_line(lambda: registry, store, settings=_settings(tmp_path))
    assert (await line("miles", version)).startswith("evals: 2 (4 checks")
    assert await line("miles", "cd" * 32) == ""  # no package of that version: no evals


async def test_a_summary_that_fails_is_left_out_of_a_drafts_approval(tmp_path: Path) -> None:
    class Broken:
        async def stat(self, key: str) -> None:
            raise OSError("the store is down")

    line = draft_line(lambda: SkillRegistry({}), Broken(), settings=_settings(tmp_path))  # type: ignore[arg-type]
    assert await line("miles", "cd" * 32) == ""


async def test_a_drafts_line_fits_the_approval_request(tmp_path: Path) -> None:
    long_name = {**EVALS, "skill_name": None}
    registry = _library(tmp_path / "skills", **_evals(long_name))
    store = LocalArtifactStore(tmp_path / "store")
    line = draft_line(lambda: registry, store, settings=_settings(tmp_path))
    text = await line("converter", registry.get("converter").version)
    assert 0 < len(text) <= MAX_LINE_CHARS


async def test_version_suite_raises_for_a_broken_suite_and_none_for_none(tmp_path: Path) -> None:
    registry = _library(tmp_path / "skills", **{"evals/evals.json": "[]"})
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    with pytest.raises(EvalSuiteError, match="an object"):
        await version_suite(registry, store, "converter", version)
    empty = _library(tmp_path / "other")
    assert await version_suite(empty, store, "converter", empty.get("converter").version) is None
    assert await version_suite(empty, store, "converter", "cd" * 32) is None
