"""The functions a shell script takes from the skill's other scripts it sources (``source
./lib.sh``, ``. "$(dirname "$0")/lib/common.sh"``, ``. "${BASH_SOURCE%/*}/x.sh"``), for
``_flow``: a call of one is walked with its arguments as the script's own functions are, so
``run "$(… | base64 -d)"`` with ``run() { eval "$1"; }`` in a sibling is judged where it is
called.

A sourced path is matched by its literal tail (what follows the last expansion) against the
skill's files: beside the script first, then from the package's root, then any file ending
so. Bounded: :data:`MAX_SOURCED` files a script, each read up to :data:`MAX_SOURCED_TEXT`
characters, one level (what a sourced file sources is not followed).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Final

from skillweave.skills.scan._shell._words import Command, Part, Splitter, function_bodies

MAX_SOURCED: Final = 4
MAX_SOURCED_TEXT: Final = 131_072
_SOURCE: Final = frozenset({"source", "."})


def sourced_functions(
    path: str, commands: list[Command], files: Mapping[str, bytes]
) -> dict[str, list[Command]]:
    """The functions defined in the skill's scripts that `commands` (of the script at
    `path`) source, by name."""
    found: dict[str, list[Command]] = {}
    seen: set[str] = {path}
    for command in commands:
        if len(seen) > MAX_SOURCED:
            break
        words = command.words
        if len(words) < 2 or words[0].literal() not in _SOURCE:
            continue
        sibling = _resolve(path, _tail(words[1].parts), files)
        if sibling is None or sibling in seen:
            continue
        seen.add(sibling)
        text = files[sibling][:MAX_SOURCED_TEXT].decode("utf-8", "replace")
        bodies, _ = function_bodies(text, Splitter(text).split())
        for name, body in bodies.items():
            found.setdefault(name, body)
    return found


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
