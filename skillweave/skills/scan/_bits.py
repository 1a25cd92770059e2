"""Bits in invisible characters: what a run of them spells when some are digits. Called by
``_hidden``, whose decoders for zero-width characters, Unicode spaces and variation selectors
hand it their runs (:func:`decode_bits`) and read bytes as text with :func:`printable`.

Any two of a run's characters may be the binary digits (eight or seven to a byte, high or low
digit first, or groups of any length between separators), the others separators or markers
around the run; four characters alone may be base-4 digits. Every assignment is tried and the
reading with most letters and spaces wins. Every loop is bounded: at most
:data:`_MAX_SYMBOLS` distinct characters, so a few dozen assignments.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Final

__all__ = ["decode_bits", "printable"]

_MAX_SYMBOLS: Final = 6
"""Distinct characters of a run read as digits and separators, at most."""


def decode_bits(run: str) -> str:
    """The text a run of invisible characters spells as digits; "" when none does.

    Any two of its characters may be the binary digits (eight or seven to a byte, high or
    low digit first), the others separators between the digits' groups or markers around
    them (``\u2060`` + bits + ``\u2060``); four characters alone may be base-4 digits."""
    symbols = sorted(set(run))
    if not 2 <= len(symbols) <= _MAX_SYMBOLS:
        return ""
    candidates = [_fixed(run, symbols, base=4, width=4)] if len(symbols) == 4 else []
    for digits in itertools.combinations(symbols, 2):
        others = "".join(s for s in symbols if s not in digits)
        split = f"[{''.join(map(re.escape, others))}]"
        groups = [g for g in re.split(split, run) if g] if others else [run]
        joined = "".join(groups)
        candidates += [_fixed(joined, list(digits), base=2, width=w) for w in (8, 7)]
        if len(groups) >= 2:
            candidates.append(_separated(groups, list(digits)))
    return _best(candidates)


def _fixed(run: str, symbols: list[str], *, base: int, width: int) -> list[str]:
    if len(run) % width or len(run) < 2 * width:
        return []
    found = []
    for digits in itertools.permutations("0123"[:base]):
        table = str.maketrans(dict(zip(symbols, digits, strict=True)))
        number = run.translate(table)
        groups = [number[i : i + width] for i in range(0, len(number), width)]
        found.append(printable(bytes(int(g, base) for g in groups)))
        found.append(printable(bytes(int(g[::-1], base) for g in groups)))  # low digit first
    return found


def _separated(groups: list[str], digits: list[str]) -> list[str]:
    """Groups of binary digits of any length, one character (or byte) each."""
    if any(len(g) > 21 for g in groups):
        return []
    found = []
    for zero, one in ((digits[0], digits[1]), (digits[1], digits[0])):
        table = str.maketrans({zero: "0", one: "1"})
        values = [int(g.translate(table), 2) for g in groups]
        if all(v < 256 for v in values):
            found.append(printable(bytes(values)))
        elif all(v < 0x110000 for v in values):
            found.append(_printable_text("".join(map(chr, values))))
    return found


def printable(data: bytes) -> str:
    try:
        return _printable_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return ""


def _printable_text(text: str) -> str:
    if len(text) < 2 or not all(c.isprintable() or c in "\n\t" for c in text):
        return ""
    return text


def _best(candidates: Iterable[list[str]]) -> str:
    """The candidate with the most letters and spaces (real text), "" when none."""
    texts = [t for group in candidates for t in group if t]
    if not texts:
        return ""
    return max(texts, key=lambda t: sum(c.isalpha() or c == " " for c in t) / len(t))
