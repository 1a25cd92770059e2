"""What the shell flow knows of a value (:class:`Value`: its text, where its data came
from, how many pieces built it) and how commands transform values: :func:`command_output` (what a
command writes from its name, arguments and input: downloads, ``echo -e``/``printf``
escapes, ``rev``, ``tr`` ciphers, ``base64``/``xxd``/``openssl`` decoders), :func:`expand`
(``${var<op>}`` folded) and the judgements of a command's name (:func:`is_disguised`,
:func:`split_name`). Used by ``_flow``, ``_sinks`` and ``_indirection``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import posixpath
import re
from dataclasses import dataclass
from typing import Final

from skillweave.skills.scan._shell._words import Word

FETCHED: Final = "fetched"
DECODED: Final = "decoded"
BUILT: Final = "built"
LAYERED: Final = "layered"  # decoded from data that was itself decoded
PAYLOAD: Final = frozenset({FETCHED, DECODED})
MAX_TEXT: Final = 4096
FETCHERS: Final = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "http", "lynx"})
_ESCAPES: Final = re.compile(r"\\(?:x([0-9a-fA-F]{1,2})|([0-7]{1,3})|u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "e": "\x1b", "a": "\a", "\\": "\\"}
_ROT13_SETS: Final = re.compile(r"[A-Za-z-]{3,}")


@dataclass(slots=True)
class Value:
    """What is known of a shell value: its text, where its data came from, how many pieces
    built it."""

    text: str | None = None
    taint: frozenset[str] = frozenset()
    pieces: int = 0
    chunks: tuple[str, ...] | None = None  # the literal pieces joined into it (None: transformed)


def unescape(text: str) -> str:
    """The text with its backslash escapes (``\\x41``, ``\\101``, ``\\n``) decoded."""

    def one(match: re.Match[str]) -> str:
        hexadecimal, octal, unicode, other = match.groups()
        if hexadecimal or unicode:
            return chr(int(hexadecimal or unicode, 16))
        if octal:
            return chr(int(octal, 8))
        return _SIMPLE.get(other, "\\" + other)

    return _ESCAPES.sub(one, text)


def join(values: list[Value], separator: str = "") -> Value:
    """The values joined: taint and pieces summed, text known when every text is."""
    taint: frozenset[str] = frozenset()
    for value in values:
        taint |= value.taint
    texts = [v.text for v in values]
    pieces = sum(max(v.pieces, 1) for v in values if v.text != "")
    if None in texts:
        return Value(taint=taint, pieces=pieces)
    text = separator.join(t for t in texts if t is not None)
    chunks: tuple[str, ...] | None = ()
    for value in values:
        chunks = None if chunks is None or value.chunks is None else (chunks + value.chunks)[:50]
    return Value(text=text[:MAX_TEXT], taint=taint, pieces=pieces, chunks=chunks)


def command_output(name: str, args: list[Value], words: list[Word], stdin: Value | None) -> Value:
    """What a command writes to its output, from its name, arguments and input."""
    flags = {w.literal() for w in words if (w.literal() or "").startswith("-")}
    plain = [a for a, w in zip(args, words, strict=True) if not (w.literal() or "").startswith("-")]
    incoming = stdin or Value()
    if name in FETCHERS:
        return Value(taint=frozenset({FETCHED}))
    if name == "echo":
        joined = join(plain, " ")
        if "-e" in flags and joined.text is not None and "\\" in joined.text:
            return Value(text=unescape(joined.text), taint=joined.taint | {DECODED}, pieces=2)
        return joined
    if name == "printf" and plain:
        return _printf(plain)
    if name == "dirname" and len(plain) == 1 and plain[0].text:  # cd "$(dirname "$0")"
        return Value(text=posixpath.dirname(plain[0].text.rstrip("/")) or ".")
    if (name == "cat" and not plain) or name in ("tee", "sed", "awk", "head", "tail"):
        return Value(text=incoming.text if name in ("cat", "tee") else None, taint=incoming.taint)
    if name == "rev":
        text = incoming.text[::-1] if incoming.text is not None else None
        return Value(text=text, taint=decoded_taint(incoming), pieces=2)
    if name == "tr":
        return _tr(incoming, plain, flags)
    if name in ("base64", "base32", "xxd", "openssl", "gunzip", "zcat", "gzip", "bzip2",
                "xz", "uudecode", "brotli", "zstd", "basenc"):  # fmt: skip
        return _decoder(name, incoming, flags, plain)
    return Value(taint=incoming.taint & PAYLOAD)


def expand(text: str, op: str) -> str | None:
    """``${var<op>}`` on a known value: substitutions, substrings, case changes."""
    if op.startswith(("//", "/")):
        every = op.startswith("//")
        pattern, _, replacement = op[2 if every else 1 :].partition("/")
        if any(c in pattern for c in "*?[") or not pattern:
            return None
        return (
            text.replace(pattern, replacement) if every else text.replace(pattern, replacement, 1)
        )
    match = re.fullmatch(r":(-?\d{1,6})(?::(-?\d{1,6}))?", op.replace(" ", ""))
    if match:
        start = int(match.group(1))
        start = max(0, len(text) + start) if start < 0 else start
        if match.group(2) is None:
            return text[start:]
        length = int(match.group(2))
        return text[start : start + length] if length >= 0 else text[start:length]
    cases = {"^^": str.upper, ",,": str.lower}
    if op in cases:
        return cases[op](text)
    if op.startswith((":-", "-", ":=", "=")):
        return text
    return None


def _printf(plain: list[Value]) -> Value:
    fmt = plain[0]
    if fmt.text is None:
        return Value(taint=fmt.taint)
    joins = fmt.text in ("%s", "%b") or re.fullmatch(r"(?:%s){2,8}", fmt.text) is not None
    if joins and len(plain) > 1:  # printf %s%s ev al
        rest = join(plain[1:])
        if fmt.text == "%b" and rest.text is not None and "\\" in rest.text:
            return Value(text=unescape(rest.text), taint=rest.taint | {DECODED}, pieces=2)
        return rest
    if len(plain) > 1:  # printf '%s/.%s' "$HOME" bashrc
        return _formatted(fmt.text, plain[1:])
    if "\\" in fmt.text:
        return Value(text=unescape(fmt.text)[:MAX_TEXT], taint=fmt.taint | {DECODED}, pieces=2)
    return Value(text=fmt.text if "%" not in fmt.text else None, taint=fmt.taint)


_DIRECTIVE: Final = re.compile(r"%[sbd%]|%")
_CODED: Final = re.compile(r"\\(?:[0-7]|x[0-9a-fA-F]|u[0-9a-fA-F])")


def _formatted(fmt: str, args: list[Value]) -> Value:
    """A printf format with ``%s``/``%b``/``%d`` filled from its arguments, in order (any
    other directive, or a format used more than once, is not folded)."""
    taint = join(args).taint | ({DECODED} if _CODED.search(fmt) else frozenset())
    pieces: list[str] = []
    position, used = 0, 0
    for match in _DIRECTIVE.finditer(fmt[:MAX_TEXT]):
        pieces.append(unescape(fmt[position : match.start()]))
        position = match.end()
        directive = match.group()
        if directive == "%%":
            pieces.append("%")
            continue
        if directive == "%" or used >= len(args) or args[used].text is None:
            return Value(taint=taint | {BUILT})
        text = args[used].text or ""
        pieces.append(unescape(text) if directive == "%b" else text)
        used += 1
    if used != len(args):
        return Value(taint=taint | {BUILT})
    pieces.append(unescape(fmt[position:]))
    return Value(text="".join(pieces)[:MAX_TEXT], taint=taint | {BUILT}, pieces=max(2, used))


_CASES: Final = {
    ("A-Z", "a-z"): str.lower, (":upper:", ":lower:"): str.lower,
    ("a-z", "A-Z"): str.upper, (":lower:", ":upper:"): str.upper,
}  # fmt: skip


def _tr(incoming: Value, plain: list[Value], flags: set[str | None]) -> Value:
    sets = [p.text for p in plain]
    if "-d" in flags:
        if incoming.text is not None and sets and sets[0] is not None and len(sets[0]) < 40:
            kept = "".join(c for c in incoming.text if c not in sets[0])
            return Value(text=kept, taint=incoming.taint | {BUILT}, pieces=2)
        return Value(taint=incoming.taint | {BUILT})
    if len(sets) < 2 or not sets[0] or not sets[1]:
        return Value(taint=incoming.taint)
    first, second = sets[0], sets[1]
    case = _CASES.get((first.strip("[]"), second.strip("[]")))
    if case is not None and incoming.text is not None:  # SH | tr A-Z a-z: a name hidden
        return Value(text=case(incoming.text), taint=incoming.taint | {BUILT}, pieces=2)
    if not (_ROT13_SETS.fullmatch(first) and _ROT13_SETS.fullmatch(second)):
        return Value(taint=incoming.taint)  # classes, case changes, separators
    if first.lower() == second.lower():
        return Value(text=None, taint=incoming.taint)
    if second.startswith(("N", "n")) and incoming.text is not None:
        rotated = codecs.encode(incoming.text, "rot13")
        return Value(text=rotated, taint=decoded_taint(incoming), pieces=2)
    return Value(taint=decoded_taint(incoming))  # a substitution cipher


def _decoder(name: str, incoming: Value, flags: set[str | None], plain: list[Value]) -> Value:
    words = {p.text for p in plain}
    decoding = bool(flags & {"-d", "--decode", "-D", "-r", "-dc", "-cd"}) or name in (
        "gunzip", "zcat", "uudecode"
    )  # fmt: skip
    if name == "openssl":
        decoding = "-d" in flags and bool(words & {"enc", "base64"} or flags & {"-base64", "-a"})
    if not decoding:
        return Value(taint=incoming.taint & PAYLOAD)
    text: str | None = None
    if incoming.text is not None:
        try:
            if name in ("base64", "openssl", "basenc"):
                data = re.sub(r"\s", "", incoming.text)
                raw = base64.b64decode(data + "=" * (-len(data) % 4))
                text = raw.decode("utf-8", "replace")
            elif name == "xxd":
                text = bytes.fromhex(re.sub(r"\s", "", incoming.text)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            text = None
    return Value(text=text[:MAX_TEXT] if text else None, taint=decoded_taint(incoming), pieces=2)


def decoded_taint(incoming: Value) -> frozenset[str]:
    """The taint of data a decoder makes: layered when its input was decoded already."""
    layered = {LAYERED} if DECODED in incoming.taint else set()
    return incoming.taint | {DECODED} | layered


def is_disguised(word: Word, value: Value, name: str) -> bool:
    """Whether a command's own name was cut into pieces, by variables (``"$a$b"``) or quotes
    (``c""url``), not merely placed in a folder (``"$HOME/bin/python"``)."""
    if not name:
        return False
    if word.literal() is not None:
        return len(word.parts) > 1 and not any(name in p.text for p in word.parts)
    return split_name(value)


def split_name(value: Value) -> bool:
    """Whether a command's name was cut into pieces (``$a$b``, ``${s//X/}``), not merely
    placed in a folder or given arguments by a variable (``"$ROOT/bin/tool"``)."""
    if value.pieces < 2 and BUILT not in value.taint:
        return False
    words = (value.text or "").split()
    name = words[0].rsplit("/", 1)[-1] if words else ""
    return bool(name) and (value.chunks is None or not any(name in c for c in value.chunks))


def where(value: Value) -> str:
    return "fetched" if FETCHED in value.taint else "decoded"


def reveal(value: Value) -> str:
    if not value.text:
        return ""
    flat = " ".join(value.text.split())
    return f": {flat[:80] + ('…' if len(flat) > 80 else '')!r}"


def unspelled_step(path: str, spelled: str) -> str | None:
    """The first of the last three steps of a path (``.ssh``, ``authorized_keys``) that the
    script's text `spelled` never writes out: the name was assembled from pieces so that no
    reader (or rule on the text) sees it. None when every step is written somewhere."""
    steps = [s for s in path.split("/") if s and s not in ("~", "*", ".", "..")]
    for step in steps[-3:]:
        if not step.startswith("@") and "*" not in step and step not in spelled:
            return step
    return None
