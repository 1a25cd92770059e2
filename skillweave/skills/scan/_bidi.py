"""The order a reader sees a line of bidirectional text in (:func:`visual_order`). Called by
``_hidden``, which judges a line holding bidi controls both as a model reads it (logical
order) and as a reader sees it.

Written by hand: python-bidi is not a dependency, and only an approximation of the Unicode
bidi algorithm (no bracket pairs, digits read as left-to-right) is needed to show an operator
what the reordering does. Bounded: at most :data:`_MAX_LINE` characters of a line are
reordered, nested at most :data:`_MAX_DEPTH` levels.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["visual_order"]

_MAX_LINE: Final = 800  # characters of a line reordered (twice the window _hidden keeps)
_OPENERS: Final = {
    "\u202a": ("L", None, False),  # LRE
    "\u202b": ("R", None, False),  # RLE
    "\u202d": ("L", "L", False),  # LRO
    "\u202e": ("R", "R", False),  # RLO
    "\u2066": ("L", None, True),  # LRI
    "\u2067": ("R", None, True),  # RLI
    "\u2068": ("L", None, True),  # FSI (read as LRI)
}
_MAX_DEPTH: Final = 125
_MIRRORED: Final = dict(zip("()[]{}<>", ")(][}{><", strict=True))


def visual_order(line: str) -> str:
    """`line` in the order a reader sees it (an approximation of the Unicode bidi algorithm:
    explicit embeddings, overrides and isolates, strong types, neutrals between runs, and the
    reversal of levels; bidi controls are kept in place as neutrals)."""
    first = next((d for c in line if (d := _strong(c)) is not None), "L")
    stack: list[tuple[int, str | None, bool]] = [(1 if first == "R" else 0, None, False)]
    chars: list[str] = []
    levels: list[int] = []
    kinds: list[str | None] = []
    for char in line[:_MAX_LINE]:
        level, override, _ = stack[-1]
        if char in _OPENERS:
            direction, forced, isolate = _OPENERS[char]
            new = (level + 1) | 1 if direction == "R" else (level + 2) & ~1
            if new <= _MAX_DEPTH:
                stack.append((new, forced, isolate))
        elif char == "\u202c" and len(stack) > 1 and not stack[-1][2]:
            stack.pop()
        elif char == "\u2069":
            while len(stack) > 1 and not stack.pop()[2]:
                pass
        chars.append(char)
        levels.append(level)
        control = char in _OPENERS or char in "\u202c\u2069"
        kinds.append(None if control else override or _strong(char))
    _resolve(levels, kinds)
    order = list(range(len(chars)))
    top = max(levels, default=0)
    lowest_odd = min((lv for lv in levels if lv % 2), default=top + 1)
    for level in range(top, lowest_odd - 1, -1):
        i = 0
        while i < len(order):
            if levels[order[i]] < level:
                i += 1
                continue
            j = i
            while j < len(order) and levels[order[j]] >= level:
                j += 1
            order[i:j] = order[i:j][::-1]
            i = j
    return "".join(_MIRRORED.get(chars[i], chars[i]) if levels[i] % 2 else chars[i] for i in order)


def _strong(char: str) -> str | None:
    kind = unicodedata.bidirectional(char)
    if kind in ("R", "AL"):
        return "R"
    if kind in ("L", "EN", "AN"):
        return "L"
    return None


def _resolve(levels: list[int], kinds: list[str | None]) -> None:
    """Neutrals take the direction of the strong types around them when both agree, else
    their embedding's; then a character whose direction differs from its level's goes up."""
    i = 0
    while i < len(kinds):
        if kinds[i] is not None:
            i += 1
            continue
        j = i
        while j < len(kinds) and kinds[j] is None:
            j += 1
        before = kinds[i - 1] if i else None
        after = kinds[j] if j < len(kinds) else None
        for k in range(i, j):
            embedding = "R" if levels[k] % 2 else "L"
            kinds[k] = before if before is not None and before == after else embedding
        i = j
    for k, kind in enumerate(kinds):
        if (levels[k] % 2 == 0 and kind == "R") or (levels[k] % 2 and kind == "L"):
            levels[k] += 1
