"""Commands that write out the whole environment: :func:`environment_dumps`, called by
``_flow`` on each list of commands it splits (the script's, and each substitution's).

A dump is ``env`` or ``printenv`` with no operand, ``export -p``, ``declare -x``/``-p`` and
``typeset -x`` with no name, ``set`` alone, ``compgen -e``/``-v`` or PowerShell's ``gci
env:``, whose output is kept: piped on, redirected to a file, or captured by a substitution.
Ordinary variable use is none of these: ``printenv HOME`` and ``env | grep '^CI='`` look up
one variable, ``env VAR=x cmd`` runs a command, a word ``env`` inside a string or an array
is data, and a dump shown on the terminal is not kept.
"""

from __future__ import annotations

import re
from typing import Final

from skillweave.skills.scan._shell._words import Command, Word

_LISTERS: Final = frozenset({"env", "printenv"})
_DECLARERS: Final = frozenset({"declare", "typeset"})
_POWERSHELL_LISTERS: Final = frozenset({"get-childitem", "gci", "dir", "ls"})
_FILTERS: Final = frozenset({"grep", "egrep", "rg"})
_ONE_VARIABLE: Final = re.compile(r"\^[A-Za-z_][A-Za-z0-9_]*=")
_DISCARDED: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def _literals(words: list[Word]) -> list[str]:
    return [w.literal() or "$" for w in words]


def _lists_everything(words: list[str]) -> bool:
    if not words:
        return False
    name, rest = words[0], words[1:]
    operands = [w for w in rest if not w.startswith("-")]
    flags = "".join(w.lstrip("-") for w in rest if w.startswith("-"))
    if name in _LISTERS:
        return not operands
    if name == "export":
        return rest == ["-p"]
    if name in _DECLARERS:
        return not operands and bool(rest) and bool(set(flags) & {"x", "p"})
    if name == "set":
        return not rest
    if name == "compgen":
        return not operands and bool(set(flags) & {"e", "v"})
    return name.lower() in _POWERSHELL_LISTERS and [w.lower() for w in operands] == ["env:"]


def _one_variable(command: Command) -> bool:
    """Whether a filter keeps one named variable (``grep '^NAME='``)."""
    words = _literals(command.words)
    if not words or words[0] not in _FILTERS:
        return False
    patterns = [w for w in words[1:] if not w.startswith("-")]
    return bool(patterns) and bool(_ONE_VARIABLE.fullmatch(patterns[0]))


def _kept(command: Command, following: Command | None, *, captured: bool) -> bool:
    if command.piped:
        return following is None or not _one_variable(following)
    if command.stdout_to is not None:
        return (command.stdout_to.literal() or "") not in _DISCARDED
    return captured


def environment_dumps(commands: list[Command], *, captured: bool) -> list[int]:
    """The offsets of the commands that write out the whole environment and keep it;
    `captured` when the list's output is a substitution's value."""
    found: list[int] = []
    for index, command in enumerate(commands):
        if not _lists_everything(_literals(command.words[:8])):
            continue
        following = commands[index + 1] if index + 1 < len(commands) else None
        if _kept(command, following, captured=captured):
            found.append(command.offset)
    return found
