"""Escape sequences a script or a model writes never reach the user's terminal, the way a
user runs the commands: `skillweave sandbox run` on a skill whose script prints them, and
`skillweave run` with a scripted model that calls a hostile tool name and answers with the
script's output and escapes of its own. Each command runs as a subprocess with its stdout and
stderr captured, and once more on a pseudo-terminal, where rich draws its spinner and the
output is exactly what a terminal would receive. `skillweave demo` prints through the same
code as `run` (the live view and the result), with a script we ship.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.cli.test_terminal_output import (
    HOSTILE,
    SHOWN,
    assert_shown,
    assert_terminal_safe,
    without_rich_live_controls,
)
from tests.conftest import write_skill

pytestmark = pytest.mark.timeout(180)

DIRECT = ("--engine", "direct")
"""The runs here run in the CLI's process (no Temporal server in these tests)."""

PRINTED = HOSTILE
"""What the script prints: every class of sequence, and rich markup."""
NOISY = f"""import sys

PRINTED = {PRINTED!r}
print(PRINTED)
print(PRINTED, file=sys.stderr)
sys.stdout.flush()
sys.stdout.buffer.write(b"an 8-bit CSI byte: \\x9b6n\\n")
"""
# The model's turns: a tool named with an OSC 52 write, the script, then an answer that
# quotes the script's output (as a model would) with escapes of its own.
SCRIPT = r"""
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: noisy}}]
  - tool_calls: [{name: "evil\e]52;c;dG9vbA==\a", arguments: {}}]
  - tool_calls: [{name: run_skill_script, arguments: {skill: noisy, script: scripts/noisy.py}}]
  - say: "Model \e]0;retitled\a says \x9b2J and \u202eright-to-left:\n{{last_result}}"
"""
SAID = ("\\x1b]0;retitled\\x07 says \\x9b2J", "\\u202eright-to-left:")


def _env(tmp_path: Path) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    return {
        **base,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "skills")]),
        "PYTHONIOENCODING": "utf-8",
    }


@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    write_skill(
        tmp_path / "skills" / "noisy",
        description="Prints what a hostile script prints. Use to test terminal output.",
        files={"scripts/noisy.py": NOISY},
    )
    model = tmp_path / "model.yaml"
    model.write_text(SCRIPT, encoding="utf-8")
    return model


def _captured(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",  # a raw 8-bit byte shows up as a lone surrogate: not safe
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=150,
        check=False,
    )


def _on_a_terminal(tmp_path: Path, *args: str) -> tuple[int, str]:
    """`skillweave ARGS` with stdin, stdout and stderr on a pseudo-terminal of 160 columns:
    its exit code and every byte the terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "skillweave.cli", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=tmp_path,
        env={**_env(tmp_path), "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(follower)
    received = bytearray()
    deadline = time.monotonic() + 150
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not chunk:
                break
            received += chunk
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    return code, received.decode("utf-8", errors="surrogateescape")


def _without_rich_styles(text: str) -> str:
    """`text` without rich's own colours (SGR); the script's sequences are none of these."""
    return re.sub(r"\x1b\[[0-9;]*m", "", without_rich_live_controls(text))


def test_sandbox_run_shows_a_scripts_escape_sequences_without_sending_them(
    tmp_path: Path, noisy: Path
) -> None:
    done = _captured(tmp_path, "sandbox", "run", "noisy", "scripts/noisy.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    stdout_panel, _, stderr_panel = done.stdout.partition(" stderr ")
    assert_shown(stdout_panel, parts=SHOWN)
    assert_shown(stderr_panel, parts=SHOWN)
    assert "an 8-bit CSI byte: \ufffd6n" in done.stdout  # the executor decoded it: harmless


def test_sandbox_run_on_a_terminal_receives_no_sequence_of_the_script(
    tmp_path: Path, noisy: Path
) -> None:
    code, received = _on_a_terminal(tmp_path, "sandbox", "run", "noisy", "scripts/noisy.py")
    assert code == 0, received
    assert "Running noisy/scripts/noisy.py" in received  # the spinner was drawn
    assert_terminal_safe(_without_rich_styles(received))
    assert_shown(received, parts=SHOWN)


def test_sandbox_run_json_keeps_the_exact_output(tmp_path: Path, noisy: Path) -> None:
    done = _captured(tmp_path, "sandbox", "run", "noisy", "scripts/noisy.py", "--json")
    assert done.returncode == 0, done.stderr
    assert_terminal_safe(done.stdout.replace("\n", ""))
    result = json.loads(done.stdout)
    assert result["stderr"] == PRINTED + "\n"
    assert result["stdout"].startswith(PRINTED + "\n")


def test_run_shows_model_and_script_text_escaped(tmp_path: Path, noisy: Path) -> None:
    done = _captured(tmp_path, "run", "Run noisy", *DIRECT, "--model", f"scripted:{noisy}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    # The live view (stderr): the tool's hostile name, refused, shown escaped.
    assert "refused    evil\\x1b]52;c;dG9vbA==\\x07: There is no tool named" in done.stderr
    # The answer (stdout): the model's own escapes and the script's output it quoted.
    assert_shown(done.stdout, parts=SAID + SHOWN)


def test_run_on_a_terminal_receives_no_sequence_of_the_model_or_script(
    tmp_path: Path, noisy: Path
) -> None:
    code, received = _on_a_terminal(
        tmp_path, "run", "Run noisy", *DIRECT, "--model", f"scripted:{noisy}"
    )
    assert code == 0, received
    assert "waiting for the model" in received  # the live view's spinner was drawn
    assert_terminal_safe(_without_rich_styles(received))
    assert_shown(received, parts=SAID + SHOWN)


def test_run_json_lines_keep_the_exact_answer(tmp_path: Path, noisy: Path) -> None:
    done = _captured(
        tmp_path, "run", "Run noisy", *DIRECT, "--model", f"scripted:{noisy}", "--json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for line in lines:
        assert_terminal_safe(line)
    events = [json.loads(line) for line in lines]
    refused = next(e for e in events if e["kind"] == "tool_refused")
    assert refused["tool"] == "evil\x1b]52;c;dG9vbA==\x07"
    answer = events[-1]["answer"]
    assert answer.startswith("Model \x1b]0;retitled\x07 says \x9b2J and \u202eright-to-left:\n")
    assert PRINTED in answer
