"""A direct run's approval, decided where `skillweave run` runs it (issue 45): on a terminal the
command asks ``approve? [y/N]`` after the approval line and the answer decides (a note after a
space); without one it denies at once, in one line that says what to do instead, rather than
wait out ``approvals.timeout_seconds``. Real subprocesses as a user types them, a terminal
made with a pseudo-terminal, a scripted model, the bundled unit-converter's script."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from skillweave.cli.direct_approvals import NO_TERMINAL, PROMPT

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

MODEL = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: unit-converter}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: unit-converter, script: scripts/convert.py, args: ["3", km, m]}
  - say: "Converted: {{last_result}}"
"""
# Long enough that a run which waited for it would fail the test by its timeout.
AGENT = """
name: careful
skills: [unit-converter]
approvals: {skills: ['*'], timeout_seconds: 600}
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _command(tmp_path: Path, *more: str, agent: str = AGENT) -> tuple[list[str], dict[str, str]]:
    """`skillweave run` of the careful agent on the direct engine, its store in `tmp_path`."""
    (tmp_path / "model.yaml").write_text(MODEL, encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(agent, encoding="utf-8")
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    env = {
        **base,
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": '["bundled"]',
        "COLUMNS": "200",
        "TERM": "xterm",
    }
    args = [sys.executable, "-m", "skillweave.cli", "run", "Convert 3 km to m"]
    args += ["--engine", "direct", "--agent", "agent.yaml", "--model", "scripted:model.yaml"]
    return [*args, *more], env


@dataclass
class Terminal:
    """A command whose stdin and stderr are a pseudo-terminal (stdout a pipe), the terminal's
    output read as it comes (its colours and cursor moves taken out)."""

    process: subprocess.Popen[bytes]
    master: int
    shown: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, args: list[str], *, env: dict[str, str], cwd: Path) -> Terminal:
        master, slave = pty.openpty()
        process = subprocess.Popen(
            args,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        terminal = cls(process, master)
        terminal.reader = threading.Thread(target=terminal._read, daemon=True)
        terminal.reader.start()
        return terminal

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the command has ended: the terminal has no writer
                return
            if not chunk:
                return
            self.shown.append(chunk.decode(errors="replace"))

    @property
    def text(self) -> str:
        return ANSI.sub("", "".join(self.shown))

    def wait_for(self, words: str, *, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while words not in self.text:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"never shown: {words!r}\n{self.text}")
            time.sleep(0.05)

    def answer(self, line: str) -> None:
        os.write(self.master, line.encode())

    def finish(self, timeout: float = 120) -> tuple[int, str]:
        """The exit code and stdout."""
        try:
            stdout, _ = self.process.communicate(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            if self.reader is not None:
                self.reader.join(timeout=5)
            os.close(self.master)
        return self.process.returncode, stdout.decode()


def _asked(tmp_path: Path, answer: str, *, ahead: str = "") -> tuple[int, str, str]:
    """The run on a terminal, `answer` typed at its question (`ahead` typed at once, before
    it): exit code, stdout, terminal."""
    args, env = _command(tmp_path)
    terminal = Terminal.start(args, env=env, cwd=tmp_path)
    try:
        if ahead:
            terminal.answer(ahead)
        terminal.wait_for(PROMPT.strip())
        # The question comes after the approval line it answers.
        before = terminal.text.split(PROMPT.strip())[0]
        assert "approval?  unit-converter/scripts/convert.py 3 km m" in before, terminal.text
        terminal.answer(answer)
    finally:
        code, stdout = terminal.finish()
    return code, stdout, terminal.text


def test_a_person_at_the_terminal_approves_and_the_script_runs(tmp_path: Path) -> None:
    code, stdout, shown = _asked(tmp_path, "y\n")
    assert code == 0, stdout + shown
    assert "approval   unit-converter/scripts/convert.py 3 km m: approved" in shown, shown
    assert "3000 m" in stdout, stdout + shown  # the script's output, in the answer
    assert "completed: answered" in stdout
    assert "1 script run" in stdout


def test_what_was_typed_before_the_question_does_not_answer_it(tmp_path: Path) -> None:
    code, stdout, shown = _asked(tmp_path, "y\n", ahead="n typed too early\n")
    assert code == 0, stdout + shown
    assert "convert.py 3 km m: approved" in shown, shown
    assert "typed too early" not in stdout


def test_a_person_at_the_terminal_denies_with_a_note(tmp_path: Path) -> None:
    code, stdout, shown = _asked(tmp_path, "n nope\n")
    assert code == 0, stdout + shown
    assert "approval   unit-converter/scripts/convert.py 3 km m: denied (nope)" in shown, shown
    assert "3000 m" not in stdout, stdout
    assert "was not approved: nope" in stdout
    assert "0 script runs" in stdout


def test_the_end_of_the_terminal_s_input_denies_saying_so(tmp_path: Path) -> None:
    code, stdout, shown = _asked(tmp_path, "\x04")  # Ctrl-D on an empty line
    assert code == 0, stdout + shown
    assert "denied (no answer: the terminal's input ended (Ctrl-D))" in shown, shown
    assert "0 script runs" in stdout


def test_a_question_nobody_answers_ends_with_the_approval_s_timeout(tmp_path: Path) -> None:
    args, env = _command(tmp_path, agent=AGENT.replace("600", "2"))
    terminal = Terminal.start(args, env=env, cwd=tmp_path)
    try:
        terminal.wait_for(PROMPT.strip())
    finally:
        code, stdout = terminal.finish()  # nobody types: the process ends all the same
    assert code == 0, stdout + terminal.text
    # The decision's line starts a line of its own, after the question.
    after = terminal.text.split(PROMPT.strip(), 1)[1]
    assert after.lstrip(" ").startswith("\nturn  2  approval   "), after[:300]
    assert "convert.py 3 km m: denied (nobody decided within 2 s)" in after
    assert "0 script runs" in stdout


@pytest.mark.parametrize("as_json", [False, True], ids=["live view", "--json"])
def test_without_a_terminal_the_approval_is_denied_at_once_in_one_line(
    tmp_path: Path, as_json: bool
) -> None:
    args, env = _command(tmp_path, *(["--json"] if as_json else []))
    began = time.monotonic()
    done = subprocess.run(
        args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=150,
        check=False,
    )
    took = time.monotonic() - began
    assert done.returncode == 0, done.stdout + done.stderr
    assert took < 60, took  # not the approval's 600 s
    # One line on stderr says why and what to do; nothing asks.
    assert done.stderr.splitlines().count(NO_TERMINAL) == 1, done.stderr
    assert PROMPT.strip() not in done.stdout + done.stderr
    if not as_json:
        assert "was not approved" in done.stdout
        assert "0 script runs" in done.stdout
        return
    # Every stdout line is JSON: the consumer sees the decision.
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    decided = [line for line in lines if line["kind"] == "approval_decided"]
    assert len(decided) == 1, lines
    assert decided[0]["status"] == "denied"
    assert NO_TERMINAL[:60] in decided[0]["detail"]
    assert lines[-1]["kind"] == "result"
    assert lines[-1]["script_runs"] == 0
