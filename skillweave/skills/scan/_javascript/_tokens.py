"""JavaScript split into tokens for the flow rules (``_flow``): names, numbers, string,
template and regex literals (string contents decoded), punctuation; comments dropped.

One linear pass: every pattern below matches in time linear in what it consumes (no two
adjacent quantified parts can match the same character), a regex literal is told from a
division by the token before it, and at most :data:`MAX_TOKENS` tokens are kept (what
follows is left to the text rules). Brackets are matched once, with a stack, so that the
parser never searches for a closing bracket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

MAX_TOKENS: Final = 400_000

_TOKEN: Final = re.compile(
    r"\s*(?:"
    r"(?P<comment>//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))"
    r"|(?P<str>'(?:[^'\\\n]|\\.)*(?:'|$)|\"(?:[^\"\\\n]|\\.)*(?:\"|$))"
    r"|(?P<tpl>`(?:[^`\\]|\\.)*(?:`|\Z))"
    r"|(?P<name>[A-Za-z_$][\w$]*)"
    r"|(?P<num>0[xXoObB][0-9a-fA-F_]+n?|(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?n?)"
    r"|(?P<punct>=>|\.\.\.|\?\.(?!\d)|[=!]==?|\*\*=?|<<=?|>>>?=?|&&=?|\|\|=?|\?\?=?|\+\+|--"
    r"|[-+*/%&|^<>]=|.)"
    r")",
    re.MULTILINE | re.DOTALL,
)
_REGEX: Final = re.compile(r"/(?![*/])(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-z]{0,8}")
_BEFORE_REGEX: Final = frozenset(
    [
        "(",
        ",",
        "=",
        ":",
        "[",
        "!",
        "&",
        "|",
        "?",
        "{",
        "}",
        ";",
        "+",
        "-",
        "*",
        "%",
        "<",
        ">",
        "~",
        "^",
        "=>",
        "==",
        "===",
        "!=",
        "!==",
        "&&",
        "||",
        "??",
        "+=",
        "-=",
        "return",
        "typeof",
        "case",
        "do",
        "else",
        "in",
        "of",
        "new",
        "delete",
        "void",
        "throw",
        "yield",
        "await",
    ]
)
_ESCAPE: Final = re.compile(
    r"\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|([0-7]{1,3})|(\r?\n)|(.))",
    re.DOTALL,
)
_SIMPLE_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_OPENING: Final = {"(": ")", "[": "]", "{": "}"}


def unescape(content: str) -> str:
    """A JavaScript string literal's content with its escapes decoded."""
    if "\\" not in content:
        return content

    def one(match: re.Match[str]) -> str:
        hex2, braced, hex4, octal, newline, other = match.groups()
        number = hex2 or braced or hex4
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8))
        if newline:
            return ""
        return _SIMPLE_ESCAPES.get(other, other)

    return _ESCAPE.sub(one, content)


@dataclass(slots=True)
class Tokens:
    """The tokens of one file: kind (``name``, ``num``, ``str``, ``tpl``, ``regex``,
    ``punct``), text (a string literal's decoded content, a template's raw content), offset
    in the file, and for each bracket the index of its partner (-1 when unbalanced)."""

    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    partner: list[int] = field(default_factory=list)
    rest: int = -1  # where the text left untokenized starts (-1: none)

    def __len__(self) -> int:
        return len(self.kinds)


def tokenize(text: str, base: int = 0) -> Tokens:
    """The tokens of `text` (offsets shifted by `base`), at most :data:`MAX_TOKENS`."""
    tokens = Tokens()
    kinds, texts, starts = tokens.kinds, tokens.texts, tokens.starts
    position = 0
    end = len(text)
    previous = ";"
    while position < end and len(kinds) < MAX_TOKENS:
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            break
        kind = match.lastgroup or "punct"
        start = match.start(kind)
        position = match.end()
        if kind == "comment":
            continue
        value = match.group(kind)
        if value == "/" and (previous in _BEFORE_REGEX):
            regex = _REGEX.match(text, start)
            if regex is not None:
                kind, value, position = "regex", regex.group(), regex.end()
        if kind == "str":
            closed = len(value) > 1 and value[-1] == value[0]
            value = unescape(value[1 : -1 if closed else None])
        elif kind == "tpl":
            value = value[1:-1] if len(value) > 1 and value.endswith("`") else value[1:]
        kinds.append(kind)
        texts.append(value)
        starts.append(base + start + (1 if kind in ("str", "tpl") else 0))
        previous = value if kind in ("punct", "name") else "x"
    if position < end and len(kinds) >= MAX_TOKENS:
        tokens.rest = base + position
    tokens.partner = _partners(kinds, texts)
    return tokens


def _partners(kinds: list[str], texts: list[str]) -> list[int]:
    partner = [-1] * len(kinds)
    stack: list[int] = []
    for index, (kind, text) in enumerate(zip(kinds, texts, strict=True)):
        if kind != "punct":
            continue
        if text in _OPENING:
            stack.append(index)
        elif text in (")", "]", "}"):
            # Pop to the nearest opener of this kind; unbalanced ones stay -1.
            for depth in range(len(stack) - 1, max(-1, len(stack) - 9), -1):
                if _OPENING[texts[stack[depth]]] == text:
                    opener = stack[depth]
                    del stack[depth:]
                    partner[opener] = index
                    partner[index] = opener
                    break
    return partner


_TEMPLATE_PART: Final = re.compile(r"\$\{|\\.|[^$\\]+|\$", re.DOTALL)


def template_parts(raw: str) -> list[tuple[bool, str, int]]:
    """A template literal's raw content as ``(is_expression, text, offset)`` parts; literal
    parts unescaped. Braces inside an expression are counted (strings in it are not: a brace in a
    string inside ``${}`` may end the part early, never make it slow)."""
    parts: list[tuple[bool, str, int]] = []
    literal: list[str] = []
    position = 0
    end = len(raw)
    while position < end:
        match = _TEMPLATE_PART.match(raw, position)
        if match is None:
            break
        piece = match.group()
        if piece != "${":
            literal.append(piece)
            position = match.end()
            continue
        depth = 1
        scan = match.end()
        while scan < end and depth:
            char = raw[scan]
            depth += 1 if char == "{" else -1 if char == "}" else 0
            scan += 1
        if literal:
            parts.append((False, unescape("".join(literal)), 0))
            literal = []
        parts.append((True, raw[match.end() : scan - 1 if depth == 0 else scan], match.end()))
        position = scan
    if literal:
        parts.append((False, unescape("".join(literal)), 0))
    return parts
