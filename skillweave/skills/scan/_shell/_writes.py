"""Where a shell command writes, judged for the flow: :class:`ShellWrites`, between
``_sinks.ShellSinks`` and ``_flow.ShellFlow``.

A redirection's target, and the file ``tee``, ``cp``, ``mv``, ``ln`` or ``install`` writes,
folded by the flow (``$HOME`` as ``~``, a for-loop variable as each word it takes) and judged
as a place written: persistence (an rc file, cron, autostart), a package manager's
configuration (``_index``), or outside the workspace; a lasting target whose name the script
never spells out is packed code too. Files that a download or a decoder writes are
remembered, so that running them runs the payload.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Final

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


class ShellWrites(ShellSinks):
    """The places one script's commands write, judged."""

    def __init__(self) -> None:
        super().__init__()
        self.loops: dict[str, list[str]] = {}  # for-loop variables: the words they take
        self.text = ""  # the script: what it spells out

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
        for path in paths[:50]:
            rule = write_target(path) if path else None
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
