"""Text that is safe to show on a terminal: the one escaping rule for script and model text.

Script output, model replies, tool results, skill names and descriptions from third-party
libraries and error messages that quote any of them are attacker-controlled. Written to a
terminal as they are, their escape sequences move the cursor, clear the screen, set the
clipboard (OSC 52), plant hyperlinks (OSC 8) or retitle the window, and bidi controls reorder
what the reader sees. The CLI passes every such text through :func:`terminal_safe` before it
prints it, and through :func:`terminal_safe_json` when it prints JSON.

The rule: newlines and tabs are kept, and so is ``\\r\\n`` (as ``\\n``); every other
character that controls rather than shows is replaced by its Python escape, as ``repr``
writes it (``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``, ``\\U000e0041``), so that it is visible
and the terminal never receives it:

- the C0 controls (U+0000-U+001F) but tab and newline, ESC, BEL, BS and a lone CR included
  (a lone CR returns to the start of the line and lets the rest overwrite it);
- DEL (U+007F) and the C1 controls (U+0080-U+009F: ``\\x9b`` is CSI to some terminals);
- format characters (category Cf: bidi embeddings, overrides and isolates U+202A-U+202E and
  U+2066-U+2069, the marks U+200E, U+200F, U+061C, zero-width spaces, the invisible tag
  characters U+E0000-U+E007F...), except the zero-width joiner and non-joiner U+200C/U+200D,
  which emoji sequences and several scripts need and which reorder and hide nothing;
- the line and paragraph separators U+2028/U+2029 and lone surrogates (which a stream
  decoded with ``surrogateescape`` can hold and which no terminal encoding can write).

A backslash is not doubled: ``\\x1b`` in the output may be an escaped ESC or those four
characters, an ambiguity that is harmless on a terminal and keeps paths and regexes readable.
Rich markup is a separate matter: text shown with rich goes in a ``rich.text.Text``, which
is never read as markup (see :mod:`skillweave.cli.console`).

Written by hand: no library escapes for terminals with this rule (``repr`` quotes and escapes
every non-ASCII-printable character and newline, ``rich`` drops only some C0 controls).

The module also holds the one rule for a count a person reads, :func:`counted` (``1 turn``,
``2 turns``, ``1,024 bytes``): every count the CLI prints with its noun goes through it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Final

__all__ = ["counted", "terminal_safe", "terminal_safe_json"]

_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_KEPT: Final = frozenset({"\t", "\n", "\u200c", "\u200d"})
_SUSPECT: Final = re.compile(r"\r\n|[^\t\n\x20-\x7e]")
"""Every character that is not printable ASCII may need a look; most of them do not."""

_decided: dict[str, str] = {}
"""What each suspect character becomes (itself, or its escape), decided once."""


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\r":
        return "\\r"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    return char not in _KEPT and unicodedata.category(char) in _UNSAFE_CATEGORIES


def _shown(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return "\n"
    shown = _decided.get(found)
    if shown is None:
        shown = _decided[found] = _escape(found) if _unsafe(found) else found
    return shown


def terminal_safe(text: str) -> str:
    """`text` with every control and format character shown as its escape.

    Newlines and tabs are kept (``\\r\\n`` becomes ``\\n``); ESC becomes the four characters
    ``\\x1b``, a lone CR ``\\r``, CSI as a C1 control ``\\x9b``, a right-to-left override
    ``\\u202e``, and so on (the module docstring has the full rule). Printable text, in any
    script and with emoji, is unchanged.
    """
    return _SUSPECT.sub(_shown, text)


_JSON_SUSPECT: Final = re.compile(r"[^\x00-\x7e]")


def _json_escaped(match: re.Match[str]) -> str:
    char = match.group()
    # json.dumps writes a \\u escape (a surrogate pair above U+FFFF) that decodes to `char`.
    return json.dumps(char)[1:-1] if _unsafe(char) else char


def terminal_safe_json(text: str) -> str:
    """A JSON document with the characters :func:`terminal_safe` escapes written as JSON
    ``\\u`` escapes: the same values to any JSON parser, safe on a terminal.

    JSON encoders escape the C0 controls already, but write DEL, the C1 controls and the
    format characters as they are when they keep non-ASCII text readable
    (``ensure_ascii=False``, pydantic's ``model_dump_json``). Outside strings a JSON
    document is ASCII, so every such character is inside a string, where its escape means
    the same character.
    """
    return _JSON_SUSPECT.sub(_json_escaped, text)


_SIBILANT_END: Final = re.compile(r"(s|x|z|ch|sh)$")
_CONSONANT_Y_END: Final = re.compile(r"[^aeiou]y$")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun` in the number the count asks for: ``1 turn``, ``0 turns``,
    ``2 script runs``, ``1 dependency``, ``3 dependencies``, ``1,024 bytes``.

    Args:
        count: how many; written with thousands separators.
        noun: the singular, one word or several (the last one is made plural).
        plural: the plural when the English rule (``-s``, ``-es`` after a sibilant,
            ``-ies`` after a consonant and ``y``) does not make it.
    """
    if count == 1:
        return f"{count:,} {noun}"
    if plural is None:
        if _CONSONANT_Y_END.search(noun):
            plural = noun[:-1] + "ies"
        elif _SIBILANT_END.search(noun):
            plural = noun + "es"
        else:
            plural = noun + "s"
    return f"{count:,} {plural}"
