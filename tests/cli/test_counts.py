"""Counts the CLI prints read as English: ``1 turn``, ``2 turns``, never ``1 turns``.

One rule (:func:`skillweave.terminal.counted`) for every count with its noun; the run's result,
``runs show``, ``skills validate`` and the install table are checked through it, and the CLI's
sources are searched for a count written the old way."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from skillweave.cli import app, run_report
from skillweave.cli.agent_run import FinishedRun
from skillweave.cli.view import print_result
from skillweave.config import get_settings
from skillweave.engines.base import RunResult
from skillweave.engines.contract import RunView
from skillweave.llm.messages import Usage
from skillweave.storage.base import ArtifactRef
from skillweave.terminal import counted
from tests.conftest import REPO, write_skill

runner = CliRunner()


@pytest.mark.parametrize(
    ("count", "noun", "shown"),
    [
        (1, "turn", "1 turn"),
        (0, "turn", "0 turns"),
        (2, "script run", "2 script runs"),
        (1, "Node dependency", "1 Node dependency"),
        (3, "dependency", "3 dependencies"),
        (2, "key", "2 keys"),
        (2, "match", "2 matches"),
        (1_024, "byte", "1,024 bytes"),
        (2, "child", "2 children"),
    ],
)
def test_counted(count: int, noun: str, shown: str) -> None:
    plural = "children" if noun == "child" else None
    assert counted(count, noun, plural) == shown


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, color_system=None, width=200), buffer


def test_the_result_of_a_one_turn_run_says_one_turn() -> None:
    console, buffer = _console()
    result = RunResult(
        run_id="run-1",
        status="completed",
        turns=1,
        script_runs=1,
        usage=Usage(input_tokens=1, output_tokens=1),
        outputs=(ArtifactRef(key="runs/run-1/outputs/a.txt", size=1, sha256="0" * 64),),
    )
    print_result(FinishedRun(result=result, model="scripted:demo"), out=console)
    printed = buffer.getvalue()
    assert "1 turn · 1 token in / 1 out · 1 script run · model scripted:demo" in printed
    assert "runs/run-1/outputs/a.txt (1 byte)" in printed


def test_runs_show_of_a_run_with_one_of_each(monkeypatch: pytest.MonkeyPatch) -> None:
    console, buffer = _console()
    monkeypatch.setattr(run_report, "out", console)
    view = RunView(
        run_id="run-1",
        agent="a",
        task="t",
        phase="completed",
        status="completed",
        turn=1,
        script_runs=1,
        usage=Usage(input_tokens=1),
        outputs=1,
        events_total=1,
    )
    run_report.print_view(view, "http://ui/run-1")
    assert "turn 1 · 1 script run · 1 token in / 0 out · 1 output · 1 event" in buffer.getvalue()


def test_validate_and_install_count_one_skill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = write_skill(tmp_path / "lib" / "solo")
    get_settings.cache_clear()
    result = runner.invoke(app, ["skills", "validate", str(skill)])
    assert "1 skill folder checked: 0 errors, 0 warnings" in result.stdout

    monkeypatch.setenv("STORAGE__BACKEND", "local")
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "store"))
    (tmp_path / "none").mkdir()  # an empty library (a SKILLS__DIRS root must exist)
    monkeypatch.setenv("SKILLS__DIRS", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, ["skills", "install", str(skill)])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "installed 1 skill\n" in result.stdout


# A count written into an f-string right before a plural noun: `{n} turns`, `{len(x)} skills`,
# or a `(s)` suffix. Units (ms, s) and ordinals (`turn {n}`) are not counts of a noun.
_OLD_WAY = re.compile(r"\{[^{}]+\} (?!ms\b|s\b)[a-z]+(?: [a-z]+)?s\b|[a-z]\(s\)")


def test_no_cli_module_writes_a_count_the_old_way() -> None:
    """Nor the texts the Temporal UI shows for a run (its summary and details) or the loop's
    budget reasons."""
    found = []
    shown_elsewhere = (
        "workflows/agent.py",
        "skillweave/engines/temporal/_ui.py",
        "skillweave/agent/loop.py",
        "skillweave/agent/refusals.py",
    )
    for path in [
        *sorted((REPO / "skillweave" / "cli").glob("*.py")),
        *(REPO / name for name in shown_elsewhere),
    ]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if ('f"' in code or "f'" in code or code.strip().startswith(("f", '"'))) and (
                _OLD_WAY.search(code)
            ):
                found.append(f"{path.name}:{number}: {line.strip()}")
    assert not [line for line in found if _is_count(line)], found


def _is_count(line: str) -> bool:
    """A hit of `_OLD_WAY` that counts something (not `{run_id} keeps running`, `{url} refuses`).
    A count's placeholder is a number: `len(…)`, or a name that says it is one; a count over a
    limit is never one."""
    if "the limit is" in line:
        return False
    return bool(
        re.search(
            r"\{(len\([^)]*\)|[a-z_.]*(count|total|runs|turns|records|outputs|dropped|size|"
            r"shortened|checked|bytes)[a-z_]*(:,)?)\} [a-z]",
            line,
        )
        or re.search(r"[a-z]\(s\)", line)
    )
