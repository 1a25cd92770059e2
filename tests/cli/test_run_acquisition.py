"""``skillweave run`` refuses a spec whose acquisition cannot search where it says, in the one
line the API's agents answer with (``AcquisitionOptions.registries_problem``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.agent import AcquisitionOptions
from skillweave.cli import app
from skillweave.config import get_settings

SPEC = "acquisition: {enabled: true, registries: [acme]}\n"


def test_the_rule_names_what_is_wrong_and_the_labels_there_are() -> None:
    off = AcquisitionOptions()
    assert off.registries_problem([]) is None
    every = AcquisitionOptions(enabled=True)
    assert every.registries_problem(["team"]) is None
    assert "lists no registry" in (every.registries_problem([]) or "")
    named = AcquisitionOptions(enabled=True, registries=("acme",))
    problem = named.registries_problem(["team", "lab"]) or ""
    assert "'acme'" in problem
    assert "configured: 'team', 'lab'" in problem


@pytest.mark.parametrize(
    ("registries", "says"),
    [
        ("[]", "lists no registry"),
        (json.dumps([{"kind": "index", "location": "/x.json", "name": "team"}]), "'acme'"),
    ],
)
def test_run_refuses_the_spec_in_one_line_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: str, says: str
) -> None:
    spec = tmp_path / "agent.yaml"
    spec.write_text(SPEC)
    monkeypatch.setenv("SKILLS__REGISTRIES", registries)
    monkeypatch.setenv("WORKFLOW__EXECUTION_ENGINE", "direct")
    get_settings.cache_clear()
    done = CliRunner().invoke(app, ["run", "say hello", "--agent", str(spec)])
    assert done.exit_code == 2, done.output
    assert says in done.stderr
    assert str(spec) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
