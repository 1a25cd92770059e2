"""``skillweave runs artifacts`` (issue 28, part 4) against the store a run ran against: its
files listed and its outputs downloaded at any time, under the names ``--out`` gives them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.cli.artifacts import output_names
from skillweave.config import get_settings
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore


def test_output_names_decode_and_count() -> None:
    paths = [
        "executions/a/outputs/report.md",
        "executions/b/outputs/report.md",
        "executions/c/outputs/" + keys.encode_output_path("weird name.txt"),
    ]
    assert [name for _, name in output_names(paths)] == [
        "report.md",
        "2-report.md",
        "weird name.txt",
    ]


def test_a_finished_runs_files_are_listed_and_its_outputs_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    run = "run-later"

    async def fill() -> None:
        await store.put_bytes(keys.run_input_key(run, "sales.csv"), b"a,b\n1,2\n")
        for execution, text in (("e-1", b"first"), ("e-2", b"second")):
            key = keys.execution_output_key(run, execution, "stats.json")
            await store.put_bytes(key, text)
        await store.put_bytes(f"{keys.run_prefix(run)}transcript/00000001.json", b"{}")

    asyncio.run(fill())
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("SKILLWEAVE_API_URL", raising=False)
    get_settings.cache_clear()
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "artifacts", run, "--json"])
    got = runner.invoke(app, ["runs", "artifacts", run, "--out", str(tmp_path / "out")])
    missing = runner.invoke(app, ["runs", "artifacts", "run-nope"])
    get_settings.cache_clear()

    assert listed.exit_code == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["kind"], r["path"].rsplit("/", 1)[-1]) for r in rows] == [
        ("input", "sales.csv"),
        ("output", "stats.json"),
        ("output", "stats.json"),
    ]  # the transcript is not a file of the run's
    assert got.exit_code == 0, got.stderr
    assert sorted(p.read_text() for p in (tmp_path / "out").iterdir()) == ["first", "second"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["2-stats.json", "stats.json"]
    assert missing.exit_code == 1
    assert "no files of run 'run-nope'" in missing.stderr
