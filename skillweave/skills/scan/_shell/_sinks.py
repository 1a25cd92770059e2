"""Where shell values end up run: :class:`ShellSinks`, the base of ``_flow.ShellFlow``, judges
code handed to ``eval``, an interpreter's code flag, its input or a script file the flow saw
written, a command named at run time, a ``git config --global`` that makes git run a
program in every repository, and a package manager's configuration changed; and keeps the
findings (rule, offset, message, severity) for ``_scan`` to report.
"""

from __future__ import annotations

import re
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._python import git_config
from skillweave.skills.scan._shell._values import (
    BUILT,
    DECODED,
    FETCHED,
    FETCHERS,
    LAYERED,
    PAYLOAD,
    Value,
    reveal,
    split_name,
    where,
)
from skillweave.skills.scan._shell._words import Word

INTERPRETERS: Final = re.compile(
    r"(?:(?:ba|z|da|k|c|tc|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|lua|source|\.)"
)
CODE_FLAGS: Final = frozenset({"-c", "-e", "-E", "--eval", "-r"})


class ShellSinks:
    """The sinks of the shell flow and the findings they make; :attr:`found` holds (rule,
    offset, message, severity) for the caller to report."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, str, Severity]] = []
        self.fetchers: list[tuple[int, str]] = []  # commands named at run time that fetch
        self.files: dict[str, Value] = {}  # files written with fetched or decoded data
        self.embedded: list[tuple[int, str]] = []  # Python here-documents: (start, text)
        self.anchor: int | None = None  # inside a sourced script's function: the call's offset

    def _git_config(self, name: str, args: list[Value], offset: int) -> None:
        key = git_config([name, *(a.text or "" for a in args[:15])])
        if key is not None:
            self._report("fs.persistence", offset, f"sets git's {key} for every repository "
                         "of the user: what it names runs in later git commands",
                         "critical")  # fmt: skip

    def _index(self, what: str, offset: int) -> None:
        """A package manager's configuration changed for every later install."""
        self._report("dependencies.index-config", offset, f"{what}: later installs use the "
                     "index or the checks it sets", "high")  # fmt: skip
        self._report("fs.persistence", offset, f"{what}, outside the workspace: it outlives "
                     "the run", "critical")  # fmt: skip

    def _run_file(self, head: Value, offset: int) -> None:
        path = (head.text or "").removeprefix("./")
        if path in self.files:
            self._code(self.files[path], offset, f"{path} runs")

    def _named_at_run_time(self, word: Word, value: Value, offset: int) -> None:
        if all(p.kind == "lit" for p in word.parts):
            return
        if value.taint & PAYLOAD:
            self._report("exec.decoded-payload", offset,
                         f"runs a command taken from {where(value)} data{reveal(value)}",
                         "critical")  # fmt: skip
        elif value.text and split_name(value):
            self._report("obfuscation.dynamic-lookup", offset,
                         f"runs a command whose name is built at run time{reveal(value)}",
                         "high")  # fmt: skip
            if value.text.rsplit("/", 1)[-1] in FETCHERS:
                self.fetchers.append((offset, value.text))

    def _interpreter(
        self,
        name: str,
        words: list[Word],
        args: list[Value],
        stdin: Value | None,
        offset: int,
        *,
        body: tuple[int, str] | None = None,
    ) -> None:
        """An interpreter's code: a code flag's argument, a process substitution, a script
        file the flow saw written, or its input; a Python here-document's `body` (where it
        starts, its text) is kept in :attr:`embedded` for the Python rules."""
        for index, word in enumerate(words):
            if word.literal() in CODE_FLAGS and index + 1 < len(args):
                self._code(args[index + 1], offset, f"{name} {word.literal()} runs")
                return
        for word, value in zip(words, args, strict=True):
            if any(p.kind == "proc" for p in word.parts):
                self._code(value, offset, f"{name} runs")
                return
        files = [w.literal() for w in words if not (w.literal() or "").startswith("-")]
        script = (files[0] or "").removeprefix("./") if files else ""
        if script in self.files:
            self._code(self.files[script], offset, f"{name} {script} runs")
            return
        reads_stdin = not files or files[0] in ("-", "/dev/stdin")
        reads_stdin = reads_stdin or any(w.literal() in ("-", "-s") for w in words)
        if stdin is not None and reads_stdin:
            if body is not None and name.startswith("python") and len(self.embedded) < 5:
                self.embedded.append(body)
            self._code(stdin, offset, f"{name} runs what is piped into it:", piped=True)
            if FETCHED in stdin.taint:
                self._report("exec.remote-pipe", offset,
                             f"a download piped into {name}", "critical")  # fmt: skip

    def _code(self, value: Value, offset: int, what: str, *, piped: bool = False) -> None:
        if LAYERED in value.taint:
            self._report("obfuscation.packed-code", offset,
                         f"{what} code decoded through more than one layer{reveal(value)}",
                         "high")  # fmt: skip
        elif DECODED in value.taint and FETCHED not in value.taint:
            self._report("obfuscation.packed-code", offset,
                         f"{what} code the script carries encoded{reveal(value)}",
                         "high")  # fmt: skip
        if value.taint & PAYLOAD:
            self._report("exec.decoded-payload", offset,
                         f"{what} code from {where(value)} data{reveal(value)}",
                         "critical")  # fmt: skip
        elif value.text is not None and (value.pieces >= 2 or BUILT in value.taint):
            self._report("exec.shell", offset,
                         f"{what} code built from pieces{reveal(value)}", "high")  # fmt: skip
        elif piped and value.text is None:
            self._report("exec.shell", offset, f"{what} text built at run time", "medium")

    def _report(self, rule: str, offset: int, message: str, severity: Severity) -> None:
        if len(self.found) < 200:
            where = offset if self.anchor is None else self.anchor
            self.found.append((rule, where, message, severity))
