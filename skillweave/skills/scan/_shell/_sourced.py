"""What a shell script takes from the skill's other scripts it sources (``source ./lib.sh``,
``. "$(dirname "$0")/lib/common.sh"``, ``. "${BASH_SOURCE%/*}/x.sh"``), for ``_flow``: their
functions, walked at each call with its arguments as the script's own are (``run "$(… |
base64 -d)"`` with ``run() { eval "$1"; }`` in a sibling is judged where it is called), and
their top-level commands, walked where the ``source`` is (the variables they set, such as a
runner or a target path, are the script's from there on). A script of the skill run as a
program (``bash lib/step.sh "$x"``, ``./step.sh "$x"``) is walked where it is run, with its
arguments as its positional parameters.

A sourced path is matched by its literal tail (what follows the last expansion) against the
skill's files: beside the script first, then from the package's root, then any file ending
so. Bounded: :data:`MAX_SOURCED` files a script, each split once a skill from its first
:data:`MAX_SOURCED_TEXT` characters, one level (what a sourced file sources is not
followed).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from skillweave.skills.scan._shell._words import Command, Part, Splitter, Word, function_bodies

MAX_SOURCED: Final = 4
MAX_SOURCED_TEXT: Final = 131_072
_TOP_COMMANDS: Final = 500
_SOURCE: Final = frozenset({"source", "."})
_SHELLS: Final = re.compile(r"(?:ba|z|da|k)?sh")
_CODE_FLAGS: Final = frozenset({"-c", "-i"})
_SCRIPT_SUFFIXES: Final = (".sh", ".bash", ".zsh")


@dataclass(frozen=True, slots=True)
class Sourced:
    """What sourcing one of the skill's scripts brings: its functions, and the commands it
    runs at its top level (function bodies left out)."""

    functions: dict[str, list[Command]]
    commands: list[Command]


class ShellScripts:
    """The skill's files as the scripts that source them see them: each sourced script
    split once a skill (:class:`Sourced`), made once by ``scanner``."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = files
        self._split: dict[str, Sourced] = {}

    def sourced(self, path: str, commands: list[Command]) -> dict[int, Sourced]:
        """The skill's scripts that `commands` (of the script at `path`) source, by the
        offset of the ``source`` command."""
        found: dict[int, Sourced] = {}
        seen: set[str] = {path}
        for command in commands:
            if len(seen) > MAX_SOURCED:
                break
            words = command.words
            if len(words) < 2 or words[0].literal() not in _SOURCE:
                continue
            sibling = _resolve(path, _tail(words[1].parts), self._files)
            if sibling is None or sibling in seen:
                continue
            seen.add(sibling)
            found[command.offset] = self._sourced(sibling)
        return found

    def run(self, path: str, words: list[Word]) -> tuple[Sourced, int] | None:
        """The skill's script that `words` (of the script at `path`) run as a program
        (``bash lib/step.sh a``, ``./step.sh a``), and the index of its first argument."""
        index = 1 if _SHELLS.fullmatch((words[0].literal() or "").rsplit("/", 1)[-1]) else 0
        while index and index < len(words) and (words[index].literal() or "").startswith("-"):
            if words[index].literal() in _CODE_FLAGS:
                return None
            index += 1
        if index >= len(words):
            return None
        tail = _tail(words[index].parts)
        if not tail.endswith(_SCRIPT_SUFFIXES) or (index == 0 and "/" not in tail):
            return None
        script = _resolve(path, tail, self._files)
        if script is None or script == path:
            return None
        return self._sourced(script), index + 1

    def _sourced(self, path: str) -> Sourced:
        if path not in self._split:
            text = self._files[path][:MAX_SOURCED_TEXT].decode("utf-8", "replace")
            inner = Splitter(text).split()
            functions, definitions = function_bodies(text, inner)
            bodies = {id(c) for body in functions.values() for c in body}
            top = [c for c in inner if id(c) not in bodies and c.offset not in definitions]
            self._split[path] = Sourced(functions, top[:_TOP_COMMANDS])
        return self._split[path]


def _tail(parts: list[Part]) -> str:
    """The literal text after a word's last expansion (``/lib.sh`` of ``$DIR/lib.sh``)."""
    tail: list[str] = []
    for part in reversed(parts):
        if part.kind != "lit":
            break
        tail.append(part.text)
    return "".join(reversed(tail)).strip()


def _resolve(path: str, tail: str, files: Mapping[str, bytes]) -> str | None:
    relative = tail.lstrip("/")
    if not relative or len(relative) > 300 or relative.startswith("/"):
        return None
    here = posixpath.dirname(path)
    for candidate in (
        posixpath.normpath(posixpath.join(here, relative)),
        posixpath.normpath(relative),
    ):
        if candidate in files:
            return candidate
    ending = "/" + posixpath.normpath(relative)
    return next((p for p in sorted(files)[:1000] if p.endswith(ending)), None)
