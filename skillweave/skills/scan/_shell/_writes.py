"""Where a shell command writes, judged for the flow: :class:`ShellWrites`, between
``_sinks.ShellSinks`` and ``_calls.ShellCalls`` (the base of ``_flow.ShellFlow``).

A redirection's target, and the file ``tee``, ``cp``, ``mv``, ``ln`` or ``install`` writes,
folded by the flow (``$HOME`` as ``~``, a for-loop variable as each word it takes) and judged
as a place written: persistence (an rc file, cron, autostart), a package manager's
configuration (``_index``), or outside the workspace; a lasting target whose name the script
never spells out is packed code too. A relative target is judged from the folder the
script works in (``_folder``: ``cd inputs`` then ``>> ../outputs/x`` stays inside), from each
folder it may be in. Files that a download or a decoder writes are remembered, so that
running them runs the payload.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Final

from skillweave.skills.scan._shell._folder import WorkingFolder
from skillweave.skills.scan._shell._sinks import ShellSinks
from skillweave.skills.scan._shell._values import (
    FETCHERS,
    PAYLOAD,
    Value,
    unspelled_step,
)
from skillweave.skills.scan._shell._words import Command, Word
from skillweave.skills.scan._text import package_config, write_target

_COPIERS: Final = frozenset({"tee", "cp", "mv", "ln", "install"})
_OUTPUT_FLAG: Final = re.compile(r"-[a-zA-Z]{0,6}[oO]|--output(?:-document)?")
_FOLDER_COMMANDS: Final = frozenset({"cd", "pushd", "popd"})
_CONDITIONS: Final = frozenset({"if", "elif", "while", "until", "!"})
_ERREXIT: Final = re.compile(r"[-+][a-zA-Z]{0,8}e[a-zA-Z]{0,8}")


class ShellWrites(ShellSinks):
    """The places one script's commands write, judged."""

    def __init__(self) -> None:
        super().__init__()
        self.loops: dict[str, list[str]] = {}  # for-loop variables: the words they take
        self.text = ""  # the script: what it spells out
        self.folder = WorkingFolder()
        self.errexit = False  # set -e: a failing command stops the script
        self.judged: set[int] = set()  # offsets of the targets judged folded

    def moves(
        self,
        command: Command,
        words: list[Word],
        values: list[Value],
        *,
        piped: bool,
    ) -> Value | None:
        """``cd``, ``pushd``, ``popd``, ``pwd`` and ``set -e`` read for the folder later
        writes land in: what the command writes, None when it is none of them. `piped`: it
        is a pipeline's stage, which runs in a subshell of its own."""
        name = words[0].literal() if words else None
        literals = [w.literal() or "" for w in words[1:9]]
        if name == "set":
            self._options(literals)
            return Value()
        if name == "pwd":  # $(cd "$(dirname "$0")" && pwd): the skill's folder
            here = self.folder.current  # elsewhere its absolute path is not known
            return Value(text=here[0] if len(here) == 1 and here[0].startswith("@pkg") else None)
        if name not in _FOLDER_COMMANDS:
            return None
        if piped:
            return Value()
        operands = [v for w, v in zip(literals, values[1:9], strict=False)
                    if w == "-" or not w.startswith("-")]  # fmt: skip
        guarded = command.words[0].literal() in _CONDITIONS  # if cd x; then …
        stops = self.errexit and not guarded and command.ended_by not in ("&&", "||")
        sure = stops or command.or_exits
        if name == "popd":
            self.folder.pop()
        elif not operands:
            self.folder.change("~", sure=sure)
        elif name == "pushd":
            self.folder.push(operands[0].text, sure=sure)
        else:
            target = operands[0].text
            own = (target or "").startswith("@pkg")  # the skill's own folder is there
            chained = command.ended_by == "&&"
            self.folder.change(target, sure=sure or own, chained=chained)
        return Value()

    def _options(self, flags: list[str]) -> None:
        """``set -e``/``set -o errexit`` and their ``+`` forms."""
        for flag, following in zip(flags, [*flags[1:], ""], strict=True):
            if _ERREXIT.fullmatch(flag):
                self.errexit = flag.startswith("-")
            elif flag in ("-o", "+o") and following == "errexit":
                self.errexit = flag == "-o"

    def _written(self, command: Command, name: str, words: list[Word], output: Value) -> None:
        """Remember a file that a download or a decoder writes (``> f``, ``-o f``)."""
        targets = [command.stdout_to.literal()] if command.stdout_to is not None else []
        if name in FETCHERS:
            for flag, word in pairwise(words):
                if _OUTPUT_FLAG.fullmatch(flag.literal() or ""):
                    targets.append(word.literal())
        for target in targets:
            if target and output.taint & PAYLOAD and len(self.files) < 1000:
                self.files[target.removeprefix("./")] = output

    def _copied(self, name: str, words: list[Word], *, depth: int) -> None:
        """The files ``tee``, ``cp``, ``mv``, ``ln`` or ``install`` write, judged as a
        redirection's target is."""
        for target in _copy_targets(name, words):
            self._redirected(target, depth=depth)

    def _redirected(self, target: Word, *, depth: int) -> None:
        """A redirection's target folded (a for-loop variable: each word it takes), judged
        as a place written: persistence (an rc file, cron, autostart) or outside the
        workspace."""
        parts = target.parts
        if len(parts) == 1 and parts[0].kind == "var" and not parts[0].op:
            paths = self.loops.get(parts[0].text) or [self.word(target, depth=depth).text]
        else:
            paths = [self.word(target, depth=depth).text]
        if all(paths) and self.anchor is None:  # a sourced script's offsets are not ours
            self.judged.add(target.offset)
        for path in paths[:50]:
            rule = self._landing(path) if path else None
            manager = package_config(path) if rule is not None and path else None
            if manager is not None:
                self._index(f"writes {path}, {manager}'s configuration", target.offset)
            elif rule == "fs.persistence":
                self._report(rule, target.offset, f"writes {path}, which runs again later",
                             "critical")  # fmt: skip
            elif rule == "fs.write-outside":
                self._report(rule, target.offset, f"writes {path}, outside the workspace", "high")
            if path and (rule == "fs.persistence" or manager is not None):
                self._unspelled(path, target.offset)

    def _landing(self, path: str) -> str | None:
        """Which rule writing `path` breaks, judged from every folder the script may be
        working in: the worst."""
        rules = {write_target(p) for p in self.folder.paths(path)}
        return next((r for r in ("fs.persistence", "fs.write-outside") if r in rules), None)

    def _unspelled(self, path: str, offset: int) -> None:
        """A lasting target whose name the script never writes out: hidden."""
        step = unspelled_step(path, self.text)
        if step is not None:
            self._report("obfuscation.packed-code", offset, f"{path} is assembled from "
                         f"pieces: the script never spells {step!r}", "medium")  # fmt: skip

    # Provided by the flow.
    def word(self, word: Word, *, depth: int) -> Value:
        raise NotImplementedError


def _copy_targets(name: str, words: list[Word]) -> list[Word]:
    """The files a command writes by argument: every file of ``tee``, the last of ``cp``,
    ``mv``, ``ln`` and ``install`` (judged folded, as redirections are)."""
    if name not in _COPIERS:
        return []
    files = [w for w in words[:64] if not (w.literal() or "").startswith("-")]
    if name == "tee":
        return files[:8]
    return files[-1:] if len(files) >= 2 else []
