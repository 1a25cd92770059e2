"""The demo's closing lines: the command a hint points to is the command printed below it, and
each names its engine, so both stay right whatever WORKFLOW__EXECUTION_ENGINE's default is."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from skillweave.cli import demo
from skillweave.engines.base import RunResult

FOLDER = demo.demo_folder()


def _concluded(
    monkeypatch: pytest.MonkeyPatch, engine: demo.DemoEngine, *, kept: bool = False
) -> str:
    buffer = io.StringIO()
    monkeypatch.setattr(demo, "out", Console(file=buffer, color_system=None, width=400))
    demo._conclude(FOLDER, RunResult(run_id="run-1", status="completed"), engine, kept=kept)
    return buffer.getvalue()


@pytest.mark.parametrize("kept", [False, True])
def test_on_temporal_the_hint_names_the_commands_printed_below_it(
    monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    printed = _concluded(monkeypatch, "temporal", kept=kept)
    lines = printed.splitlines()
    hint = next(line for line in lines if "To keep runs and the UI" in line)
    commands = [line.strip() for line in lines if line.startswith("  ")]
    assert lines.index(hint) < lines.index("  " + commands[0])  # "below"
    assert "`skillweave run --engine temporal …`" in hint
    assert "`skillweave dev`" in hint
    dev, run = commands
    assert dev.startswith("MODEL__PROVIDER=openai ")
    assert dev.endswith(" skillweave dev")
    assert run.startswith(f'skillweave run --engine temporal "{demo.DEMO_TASK}" --agent ')
    assert ("--keep" in hint) is not kept


def test_direct_prints_a_run_on_the_direct_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = _concluded(monkeypatch, "direct")
    assert "To keep runs" not in printed
    [command] = [line.strip() for line in printed.splitlines() if line.startswith("  ")]
    assert command.startswith("MODEL__PROVIDER=openai ")
    assert f' skillweave run --engine direct "{demo.DEMO_TASK}" --agent ' in command
    assert "--model openai:gpt-4o-mini" in printed  # the other way to name a real model


@pytest.mark.parametrize("engine", ["temporal", "direct"])
def test_every_run_command_names_its_engine(engine: demo.DemoEngine) -> None:
    runs = [c for c in demo.real_model_commands(FOLDER, engine) if "skillweave run " in c]
    assert runs
    assert all(f"skillweave run --engine {engine} " in command for command in runs)
