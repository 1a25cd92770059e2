"""The folder a shell script works in, for judging where a relative write lands:
:class:`WorkingFolder`, kept by ``_writes.ShellWrites`` as the flow walks the commands.

A script starts in the workspace (``""``). ``cd``, ``pushd`` and ``popd`` move it: into a
folder of the workspace (``cd inputs``: a later ``../outputs/x`` stays inside), above it
(``cd ..``: a later ``x`` is outside), to the home folder (``~``), an absolute folder, the
skill's own (``@pkg/scripts`` for ``cd "$(dirname "$0")"``), or a folder not known (``*``,
judged as ``_text.write_target`` judges a path whose start is not known). A change that may
fail without stopping the script (no ``set -e``, or ``cd x && …``, ``if cd x``) leaves both
folders possible, and a write is judged from each: the worse one counts, so a ``cd`` into a
folder that is not there cannot hide a climb. A change inside ``( … )`` ends with it, and
one in a pipeline's stage or a substitution does not reach the script. Candidates are
bounded (:data:`MAX_CANDIDATES`, :data:`MAX_FOLDER`).
"""

from __future__ import annotations

import posixpath
from typing import Final

MAX_CANDIDATES: Final = 8
"""Folders a script may be in at once; past this, the shallowest are kept."""
MAX_FOLDER: Final = 300
"""Characters of a folder kept; a longer one is not known (``*``)."""
_MAX_LEVELS: Final = 32
_ROOTED: Final = ("/", "~", "@pkg", "*")


class WorkingFolder:
    """The folders one script may be working in, per subshell level."""

    def __init__(self) -> None:
        self.levels: list[tuple[str, ...]] = [("",)]  # one entry per open ( … )
        self.previous: tuple[str, ...] = ("",)  # for ``cd -``
        self.pushed: list[tuple[str, ...]] = []  # pushd's stack
        self.chained: tuple[int, tuple[str, ...]] | None = None
        """``cd x && …``: the level and folders the chain left, possible again once it ends."""

    @property
    def current(self) -> tuple[str, ...]:
        return self.levels[-1]

    def subshell(self) -> WorkingFolder:
        """A folder for a subshell (``$( … )``): it starts here, and its moves stay there."""
        inner = WorkingFolder()
        inner.levels = [self.current]
        inner.previous = self.previous
        return inner

    def enter(self, level: int) -> None:
        """The next command runs `level` subshells deep (``( cd x; … )``): the folders of
        closed subshells are dropped, new ones start where their parent is."""
        level = max(0, min(level, _MAX_LEVELS))
        del self.levels[level + 1 :]
        while len(self.levels) < level + 1:
            self.levels.append(self.levels[-1])

    def change(self, target: str | None, *, sure: bool, chained: bool = False) -> None:
        """``cd target`` (None: a folder not known; ``-``: the previous one); `sure` when a
        failing ``cd`` stops the script, otherwise the old folders stay possible; `chained`
        when it is followed by ``&&``: the chain runs in the new folder only."""
        old = self.current
        new = self.previous if target == "-" else tuple(_joined(f, target) for f in old)
        self.previous = old
        if chained and not sure and self.chained is None:
            self.chained = (len(self.levels) - 1, old)
            sure = True
        self._set(new if sure else old + new)

    def ended(self, separator: str) -> None:
        """A command ended by `separator`: past the end of a ``cd x && …`` chain the folders
        it left are possible again (the ``cd`` may have failed)."""
        if separator == "&&" or self.chained is None:
            return
        level, old = self.chained
        self.chained = None
        if level < len(self.levels):
            self.levels[level] = _bounded(self.levels[level] + old)

    def push(self, target: str | None, *, sure: bool) -> None:
        """``pushd target``."""
        if len(self.pushed) < _MAX_LEVELS:
            self.pushed.append(self.current)
        self.change(target, sure=sure)

    def pop(self) -> None:
        """``popd``: back where the last ``pushd`` was made (not known when none was)."""
        back = self.pushed.pop() if self.pushed else ("*",)
        self.previous = self.current
        self._set(back)

    def paths(self, path: str) -> list[str]:
        """`path` as written from each folder the script may be in."""
        if not path or path.startswith(_ROOTED) or path[1:3] == ":/":
            return [path]
        return [_joined(folder, path) if folder else path for folder in self.current]

    def _set(self, folders: tuple[str, ...]) -> None:
        self.levels[-1] = _bounded(folders)


def _bounded(folders: tuple[str, ...]) -> tuple[str, ...]:
    """`folders` once each; past :data:`MAX_CANDIDATES`, the shallowest (from them a
    climb goes furthest)."""
    unique = tuple(dict.fromkeys(folders))
    if len(unique) > MAX_CANDIDATES:
        ranked = sorted(unique, key=lambda f: f.count("/") - 2 * f.count(".."))
        unique = tuple(ranked[:MAX_CANDIDATES])
    return unique


def _joined(folder: str, target: str | None) -> str:
    """The folder `target` names from `folder`, ``..`` resolved where the start is known."""
    if target is None:
        return "*"
    if target.startswith(_ROOTED):
        joined = target
    elif not target:
        return folder
    else:
        joined = f"{folder}/{target}" if folder else target
    if len(joined) > MAX_FOLDER:
        return "*"
    if joined.startswith(("*", "@pkg", "~")):
        return joined  # ``_text.write_target`` reads its climbs where the write is judged
    normal = posixpath.normpath(joined)
    return "" if normal == "." else normal
