"""The embedded stack's parts that need no server: finding the `temporal` binary, ports, the
dev server's command line; and the argument errors of the Temporal commands (exit 2 before
anything connects). The dev server itself runs in tests/integration/cli/test_stack.py."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.cli.temporal_server import (
    DEV_SERVER_TUNING,
    INSTALL_HINT,
    _choose_port,
    _server_command,
    free_port,
    port_is_free,
    port_or_free,
    temporal_binary,
)
from skillweave.config import get_settings
from skillweave.engines.contract import SEARCH_ATTRIBUTES
from skillweave.errors import ConfigError

runner = CliRunner()


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


# --- temporal_binary -------------------------------------------------------------------------


def test_the_binary_next_to_python_comes_first(tmp_path: Path) -> None:
    beside = _executable(tmp_path / "venv" / "bin" / "temporal")
    on_path = _executable(tmp_path / "elsewhere" / "temporal")
    found = temporal_binary(
        executable=str(tmp_path / "venv" / "bin" / "python"), path=str(on_path.parent)
    )
    assert found == beside


def test_the_binary_on_path_is_the_fallback(tmp_path: Path) -> None:
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "temporal").write_text("not executable", encoding="utf-8")
    on_path = _executable(tmp_path / "elsewhere" / "temporal")
    found = temporal_binary(
        executable=str(tmp_path / "venv" / "bin" / "python"), path=str(on_path.parent)
    )
    assert found == on_path


def test_no_binary_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=INSTALL_HINT):
        temporal_binary(executable=str(tmp_path / "python"), path=str(tmp_path))


def test_this_environment_has_the_pinned_binary() -> None:
    assert temporal_binary() == Path(sys.executable).parent / "temporal"


# --- ports -----------------------------------------------------------------------------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_listening_port_is_not_free(busy_port: int) -> None:
    assert not port_is_free("127.0.0.1", busy_port)
    assert port_is_free("127.0.0.1", free_port())


def test_a_busy_port_fails_clearly_unless_any_port_will_do(busy_port: int) -> None:
    with pytest.raises(ConfigError, match=f"port {busy_port} on 127.0.0.1 is in use.*--port"):
        _choose_port("127.0.0.1", busy_port, what="the Temporal", option="--port")
    other = port_or_free(busy_port)
    assert other != busy_port
    assert port_is_free("127.0.0.1", other)
    free = free_port()
    assert port_or_free(free) == free


def test_port_zero_is_a_free_port() -> None:
    assert _choose_port("127.0.0.1", 0, what="x", option="--port") > 0


# --- the dev server's command line -----------------------------------------------------------


def test_the_command_registers_every_search_attribute(tmp_path: Path) -> None:
    command = _server_command(
        Path("/bin/temporal"),
        ip="127.0.0.1",
        port=7233,
        ui_port=8233,
        namespace="default",
        db_file=tmp_path / "t.db",
        dynamic_config={"limit.x": 5, "flag": True, "name": "a"},
    )
    assert command[:8] == [
        "/bin/temporal",
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        "7233",
        "--ui-port",
    ]
    pairs = {command[i + 1] for i, arg in enumerate(command) if arg == "--search-attribute"}
    assert pairs == {
        "SkillweaveAgent=Keyword",
        "SkillweavePhase=Keyword",
        "SkillweaveActiveSkills=KeywordList",
        "SkillweaveTurns=Int",
        "SkillweaveTokens=Int",
    }
    assert len(pairs) == len(SEARCH_ATTRIBUTES)
    assert command[command.index("--db-filename") + 1] == str(tmp_path / "t.db")
    values = [command[i + 1] for i, arg in enumerate(command) if arg == "--dynamic-config-value"]
    assert values == ["limit.x=5", "flag=true", 'name="a"']
    assert command[command.index("--namespace") + 1] == "default"


def test_an_in_memory_headless_server() -> None:
    command = _server_command(
        Path("temporal"),
        ip="127.0.0.1",
        port=1,
        ui_port=None,
        namespace="default",
        db_file=None,
        dynamic_config={},
    )
    assert "--headless" in command
    assert "--ui-port" not in command
    assert "--db-filename" not in command


def test_the_dev_server_tuning_is_valid_dynamic_config() -> None:
    assert all(isinstance(key, str) and "." in key for key in DEV_SERVER_TUNING)


# --- argument errors (nothing connects) ------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__")):
            monkeypatch.delenv(key)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("runs", "list", "--phase", "sleeping"), "--phase: 'sleeping' is not a phase"),
        (("runs", "list", "--agent", "x' OR 'a'='a"), "is not a name"),
        (("runs", "list", "--skill", "two words"), "--skill: 'two words' is not a name"),
        (("dev", "--ephemeral", "--db-file", "x.db"), "--ephemeral and --db-file"),
        # A run's model is checked when it starts, on Temporal too (its worker resolves it).
        (
            ("run", "task", "--engine", "temporal", "--model", "openai:gpt-4o"),
            "model 'openai:gpt-4o' needs an API key at api.openai.com",
        ),
        (("run", "task", "--engine", "temporal", "--model", "nosuch"), "unknown model profile"),
        # A worker starts without a default model, not with a --model it cannot run.
        (("worker", "--model", "scripted:nosuch.yaml"), "model script 'nosuch.yaml' not found"),
    ],
)
def test_temporal_commands_refuse_bad_arguments(args: tuple[str, ...], message: str) -> None:
    code, output = _run(*args)
    assert code == 2, output
    assert message in " ".join(output.split())


@pytest.mark.parametrize(
    "args",
    [("demo", "--engine", "sideways"), ("runs", "show"), ("runs", "list", "--limit", "0")],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    assert _run(*args)[0] == 2


def test_runs_is_a_command_group() -> None:
    code, output = _run("runs", "--help")
    assert code == 0
    for command in ("list", "show", "logs", "send", "approve", "cancel"):
        assert command in output
