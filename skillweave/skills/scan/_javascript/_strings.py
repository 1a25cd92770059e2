"""String and array methods folded on known values (``split('').reverse().join('')``,
``slice``, ``replace``, ``charCodeAt``...), for ``_calls``: what obfuscation uses to build a
name or a payload from pieces. Every result is cut to ``MAX_TEXT`` characters or
``MAX_ITEMS`` items.
"""

from __future__ import annotations

from typing import Final

from skillweave.skills.scan._javascript._values import (
    BUILT,
    DECODED,
    MAX_ITEMS,
    MAX_TEXT,
    Value,
    join_taint,
    replace_text,
    text_of,
)

_CASE: Final = {"toLowerCase": str.lower, "toUpperCase": str.upper, "trim": str.strip,
                "trimStart": str.lstrip, "trimEnd": str.rstrip}  # fmt: skip


def _number(args: list[Value], index: int, default: int | None) -> int | None:
    if index >= len(args):
        return default
    number = args[index].number
    return int(number) if number is not None and abs(number) < 1 << 31 else None


def _slice(text: str, method: str, args: list[Value]) -> str | None:
    start = _number(args, 0, 0)
    if start is None:
        return None
    if method == "substr":
        length = _number(args, 1, len(text))
        if length is None:
            return None
        start = max(0, len(text) + start) if start < 0 else start
        return text[start : start + max(0, length)]
    stop = _number(args, 1, len(text))
    if stop is None:
        return None
    if method == "substring":
        start, stop = sorted((max(0, start), max(0, stop)))
    return text[start:stop]


def string_method(receiver: Value, method: str, args: list[Value]) -> Value | None:
    """``receiver.method(args)`` folded, or None when nothing is known of it."""
    taint = receiver.taint | join_taint(*args)
    if receiver.items is not None:
        return _array_method(receiver, method, args, taint)
    text = receiver.text
    if text is None:
        return None
    if method == "split":
        separator = text_of(args[0]) if args else None
        if separator is None:
            return None
        pieces = list(text) if separator == "" else text.split(separator)
        items = [Value(text=p, taint=receiver.taint) for p in pieces[:MAX_ITEMS]]
        return Value(items=items, taint=taint)
    if method in ("slice", "substring", "substr"):
        part = _slice(text, method, args)
        return None if part is None else Value(text=part, taint=taint | {BUILT}, pieces=2)
    if method in ("replace", "replaceAll") and len(args) > 1:
        replacement = text_of(args[1])
        replaced = replace_text(text, args[0], replacement) if replacement is not None else None
        if replaced is None:
            return None
        if method == "replaceAll" and args[0].text:
            replaced = text.replace(args[0].text, replacement or "")[:MAX_TEXT]
        return Value(text=replaced, taint=taint | {BUILT}, pieces=2)
    if method in _CASE:
        return Value(text=_CASE[method](text), taint=taint, pieces=receiver.pieces)
    if method == "concat":
        texts = [text_of(a) for a in args]
        if None in texts:
            return Value(taint=taint)
        joined = (text + "".join(t for t in texts if t))[:MAX_TEXT]
        return Value(text=joined, taint=taint | {BUILT}, pieces=len(args) + 1)
    if method in ("charAt", "at"):
        index = _number(args, 0, 0)
        if index is None or not -len(text) <= index < len(text):
            return None
        return Value(text=text[index], taint=taint)
    if method in ("charCodeAt", "codePointAt"):
        index = _number(args, 0, 0)
        if index is None or not 0 <= index < len(text):
            return None
        return Value(number=float(ord(text[index])), taint=taint)
    if method in ("toString", "valueOf", "normalize"):
        return receiver
    if method == "repeat":
        count = _number(args, 0, 0)
        if count is None or count * len(text) > MAX_TEXT:
            return None
        return Value(text=text * max(0, count), taint=taint, pieces=receiver.pieces)
    return None


def _array_method(
    receiver: Value, method: str, args: list[Value], taint: frozenset[str]
) -> Value | None:
    items = receiver.items or []
    if method == "reverse":
        return Value(items=items[::-1], taint=taint | {BUILT, DECODED})
    if method == "join":
        separator = text_of(args[0]) if args else ","
        texts = [text_of(i) for i in items]
        every = join_taint(*items)
        if separator is None or None in texts:
            return Value(taint=taint | every)
        joined = separator.join(t for t in texts if t is not None)[:MAX_TEXT]
        pieces = sum(1 for t in texts if t)
        built = {BUILT} if pieces >= 2 else set()
        return Value(text=joined, taint=taint | every | built, pieces=pieces)
    if method in ("slice", "concat", "filter", "flat"):
        extra = [a for a in args if a.items is not None]
        if method == "concat" and len(extra) == len(args):
            merged = items + [i for a in extra for i in a.items or []]
            return Value(items=merged[:MAX_ITEMS], taint=taint)
        if method == "slice":
            start, stop = _number(args, 0, 0), _number(args, 1, len(items))
            if start is not None and stop is not None:
                return Value(items=items[start:stop], taint=taint)
        return Value(taint=taint | join_taint(*items))
    if method in ("toString",):
        texts = [text_of(i) for i in items]
        if None not in texts:
            return Value(text=",".join(t for t in texts if t is not None)[:MAX_TEXT], taint=taint)
    return None
