"""The operations a fold re-implements on plain values, each bounded: :data:`Folded`.

Once :class:`~skillweave.skills.scan._python._fold.Folder` has folded an expression's pieces
to plain ``str``/``bytes``/``int`` values (lists and dicts of them), the operation that joins
them is evaluated here, never by running the scanned code: ``+``, ``*``, ``%`` and the integer
operators (:func:`binop`), the builtins ``chr``, ``ord``, ``str``, ``int``, ``bytes``,
``reversed`` (:func:`builtin_call`), the string and bytes methods ``join``, ``format``,
``replace``, ``split``, ``translate``, ``encode``, ``decode`` (:func:`method_call`) and the
decoders of ``base64``, ``binascii``, ``codecs``, ``zlib``, ``gzip``, ``bz2`` and ``lzma``
(:func:`module_call`). Every result is capped (:data:`MAX_LENGTH`), integers are bounded and
decompression stops at the cap, so a hostile constant cannot make a fold slow or large; an
operation that cannot be evaluated raises :class:`Unfoldable`.

Read by ``_fold`` only (and ``_callees`` for the fold's types and depth).
"""

from __future__ import annotations

import ast
import base64
import bz2
import codecs
import lzma
import re
import zlib
from typing import Final

__all__ = [
    "DECODING_MODULES",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Folded",
    "Unfoldable",
    "binop",
    "builtin_call",
    "capped",
    "dict_key",
    "method_call",
    "module_call",
    "sequence",
]

MAX_LENGTH: Final = 4096
"""The longest string, bytes or list a fold may produce."""
MAX_DEPTH: Final = 24
"""How deep a fold recurses into an expression (and the names it resolves)."""
_INT_BOUND: Final = 1 << 32
_TEXT_CODECS: Final = frozenset(
    {"rot13", "rot_13", "rot-13", "hex", "hex_codec", "base64", "base64_codec", "base_64"}
)
_PLAIN_ENCODINGS: Final = frozenset(
    {"utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1", "utf_8", "us-ascii"}
)
_COMPRESSION_CODECS: Final = {"zlib": "zlib", "zlib_codec": "zlib", "bz2": "bz2",
                               "bz2_codec": "bz2"}  # fmt: skip
_FORMAT_FIELD: Final = re.compile(r"\{(\w*)\}")
_PERCENT: Final = re.compile(r"%(.)", re.DOTALL)
_STR_METHODS: Final = frozenset(
    {"upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "swapcase", "casefold"}
)
DECODING_MODULES: Final = frozenset(
    {"base64", "binascii", "codecs", "zlib", "gzip", "bz2", "lzma", "bytes", "str", "bytearray"}
)
"""Modules whose decoding functions a fold evaluates (each bounded by :data:`MAX_LENGTH`)."""
_B64: Final = frozenset(
    {"b64decode", "standard_b64decode", "urlsafe_b64decode", "decodebytes", "a2b_base64"}
)
_DIGITS: Final = 32
"""The longest digit string ``int()`` is folded from."""

Folded = str | bytes | int | bool | list | dict | None
"""What a fold yields: a plain value (lists and dicts of them), or None when unknown."""


class Unfoldable(Exception):
    """The expression cannot be evaluated statically (raised inside a fold only)."""


def builtin_call(name: str, args: list[Folded]) -> Folded:
    if name == "chr" and len(args) == 1 and isinstance(args[0], int):
        return chr(args[0])
    if name == "ord" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) == 1:
        return ord(args[0])
    if name == "str" and len(args) == 1 and isinstance(args[0], str | int):
        return str(args[0])
    if name == "str" and len(args) == 2 and isinstance(args[0], bytes):
        return args[0].decode(_encoding(args[1]))  # str(b"...", "ascii")
    if name == "int" and 1 <= len(args) <= 2:
        return _integer(*args)
    if name in ("list", "tuple") and len(args) == 1:
        return capped(list(sequence(args[0])))
    if name == "reversed" and len(args) == 1:
        return list(reversed(sequence(args[0])))
    if name in ("bytes", "bytearray") and len(args) == 1 and isinstance(args[0], list):
        return capped(bytes(args[0]))  # type: ignore[arg-type]
    if name in ("bytes", "bytearray") and len(args) == 2 and isinstance(args[0], str):
        return capped(args[0].encode(_encoding(args[1])))
    raise Unfoldable


def _integer(text: Folded, base: Folded = 10) -> int:
    """``int("6c", 16)``, ``int("101")``, ``int(7)``: short digit strings only."""
    if isinstance(text, int) and not isinstance(text, bool) and base == 10:
        return text
    if not isinstance(text, str) or len(text) > _DIGITS or not isinstance(base, int):
        raise Unfoldable
    if base != 0 and not 2 <= base <= 36:
        raise Unfoldable
    return _bounded(int(text, base))


def module_call(owner: str, method: str, args: list[Folded]) -> Folded:
    data = args[0] if args else None
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not isinstance(data, bytes) or len(data) > MAX_LENGTH * 2:
        raise Unfoldable
    if owner in ("base64", "binascii") and method in _B64:
        return base64.b64decode(data)
    if owner == "base64" and method == "b32decode":
        return base64.b32decode(data)
    if owner == "base64" and method == "b16decode":
        return base64.b16decode(data, casefold=True)
    if owner == "base64" and method in ("b85decode", "a85decode"):
        return getattr(base64, method)(data)
    if (owner == "binascii" and method in ("unhexlify", "a2b_hex")) or (
        owner in ("bytes", "bytearray") and method == "fromhex"
    ):
        return bytes.fromhex(data.decode("latin-1"))
    if method == "decompress" and owner in ("zlib", "gzip", "bz2", "lzma"):
        return _decompressed(owner, data)
    if owner == "codecs" and method in ("decode", "encode") and len(args) == 2:
        codec = args[1]
        text = args[0]
        if isinstance(text, str) and codec in ("rot13", "rot_13", "rot-13"):
            return codecs.decode(text, "rot13")
        if codec in _TEXT_CODECS and method == "decode":
            return codecs.decode(data, str(codec))
        if codec in _COMPRESSION_CODECS and method == "decode":
            return _decompressed(_COMPRESSION_CODECS[codec], data)
        if isinstance(text, bytes) and isinstance(codec, str) and codec in _PLAIN_ENCODINGS:
            return text.decode(codec)
    if owner in ("str", "bytes") and method == "maketrans":
        return _maketrans(str if owner == "str" else bytes, args)
    if owner == "str" and method == "join" and len(args) == 2 and isinstance(args[0], str):
        return _joined(args[0], args[1])
    if owner in ("bytes", "str") and method in ("decode", "encode") and args:
        return method_call(args[0], method, args[1:])  # bytes.decode(data, "utf-8")
    raise Unfoldable


def _maketrans(kind: type, args: list[Folded]) -> Folded:
    """``str.maketrans(a, b[, gone])`` or ``bytes.maketrans(a, b)``, for ``translate``."""
    if kind is bytes and len(args) == 2 and all(isinstance(a, bytes) for a in args):
        return bytes.maketrans(args[0], args[1])  # type: ignore[arg-type]
    if kind is str and 2 <= len(args) <= 3 and all(isinstance(a, str) for a in args):
        if len(args[0]) > MAX_LENGTH or len(args[-1]) > MAX_LENGTH:  # type: ignore[arg-type]
            raise Unfoldable
        return dict(str.maketrans(*args))  # type: ignore[arg-type]
    if kind is str and len(args) == 1 and isinstance(args[0], dict):
        return dict(str.maketrans(args[0]))
    raise Unfoldable


def _translated(receiver: str | bytes, table: Folded) -> Folded:
    """``s.translate(table)``: characters mapped or dropped, the result capped."""
    if isinstance(receiver, bytes) and isinstance(table, bytes) and len(table) == 256:
        return receiver.translate(table)
    if not isinstance(receiver, str) or not isinstance(table, dict):
        raise Unfoldable
    if not all(
        isinstance(k, int) and (v is None or isinstance(v, int | str)) for k, v in table.items()
    ):
        raise Unfoldable
    widest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
    if len(receiver) * widest > MAX_LENGTH * 4:
        raise Unfoldable
    return capped(receiver.translate(table))


def _decompressed(kind: str, data: bytes) -> bytes:
    """`data` decompressed by zlib, gzip, bz2 or lzma, never past :data:`MAX_LENGTH`."""
    if kind == "bz2":
        return capped(bz2.BZ2Decompressor().decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]
    if kind == "lzma":
        return capped(lzma.LZMADecompressor().decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]
    wbits = 31 if kind == "gzip" else 47  # zlib.decompress: a zlib header (47 also reads gzip)
    return capped(zlib.decompressobj(wbits).decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]


def method_call(receiver: Folded, method: str, args: list[Folded]) -> Folded:
    if isinstance(receiver, str | bytes) and method == "join" and len(args) == 1:
        return _joined(receiver, args[0])
    if isinstance(receiver, bytes) and method == "decode":
        codec = args[0] if args else "utf-8"
        if isinstance(codec, str) and codec.lower() in _TEXT_CODECS | {"unicode_escape"}:
            return codecs.decode(receiver, codec.lower())
        return receiver.decode(_encoding(codec))
    if isinstance(receiver, str) and method == "encode":
        codec = args[0] if args else "utf-8"
        if codec in ("rot13", "rot_13", "rot-13"):
            return codecs.encode(receiver, "rot13")
        return receiver.encode(_encoding(codec))
    if isinstance(receiver, str) and method == "decode" and args == ["rot13"]:
        return codecs.decode(receiver, "rot13")
    if isinstance(receiver, str | bytes) and method == "replace" and len(args) == 2:
        old, new = args
        if type(old) is type(receiver) and type(new) is type(receiver) and old:
            if len(receiver) * (len(new) + 1) > MAX_LENGTH * 4:  # type: ignore[arg-type]
                raise Unfoldable
            return capped(receiver.replace(old, new))  # type: ignore[arg-type]
    if isinstance(receiver, str | bytes) and method == "split" and len(args) <= 1:
        separator = args[0] if args else None
        if separator is not None and (type(separator) is not type(receiver) or not separator):
            raise Unfoldable
        return capped(receiver.split(separator))  # type: ignore[arg-type]
    if isinstance(receiver, str) and method in _STR_METHODS and not args:
        return getattr(receiver, method)()
    if isinstance(receiver, str | bytes) and method == "maketrans":
        return _maketrans(type(receiver), args)
    if isinstance(receiver, str | bytes) and method == "translate" and len(args) == 1:
        return _translated(receiver, args[0])
    if isinstance(receiver, str) and method == "format":
        return _format(receiver, args)
    if isinstance(receiver, str | bytes) and method == "hex" and not args:
        return capped(receiver.hex() if isinstance(receiver, bytes) else None)
    raise Unfoldable


def _joined(separator: str | bytes, items: Folded) -> Folded:
    pieces = sequence(items)
    if not all(type(p) is type(separator) for p in pieces):
        raise Unfoldable
    return capped(separator.join(pieces))  # type: ignore[arg-type]


def _format(template: str, args: list[Folded]) -> str:
    """``str.format`` with plain ``{}`` and ``{0}`` fields only (no attributes, no specs)."""
    counter = iter(range(len(args)))

    def field(match: re.Match[str]) -> str:
        name = match.group(1)
        position = int(name) if name.isdigit() else next(counter, None) if not name else None
        if position is None or position >= len(args):
            raise Unfoldable
        value = args[position]
        if not isinstance(value, str | int):
            raise Unfoldable
        return str(value)

    stripped = template.replace("{{", "\0").replace("}}", "\1")
    result = _FORMAT_FIELD.sub(field, stripped)
    if "{" in result or "}" in result:
        raise Unfoldable
    return capped(result.replace("\0", "{").replace("\1", "}"))  # type: ignore[return-value]


def binop(op: ast.operator, left: Folded, right: Folded) -> Folded:
    if isinstance(op, ast.Add):
        if isinstance(left, str | bytes | list) and type(left) is type(right):
            return capped(left + right)  # type: ignore[operator]
        if _ints(left, right):
            return _bounded(left + right)  # type: ignore[operator]
    elif isinstance(op, ast.Mult):
        if isinstance(left, int) and not isinstance(right, int):
            left, right = right, left
        if isinstance(left, str | bytes | list) and isinstance(right, int):
            if len(left) * max(right, 0) > MAX_LENGTH:
                raise Unfoldable
            return left * right
        if _ints(left, right):
            return _bounded(left * right)  # type: ignore[operator]
    elif isinstance(op, ast.Mod) and isinstance(left, str):
        return _percent(left, right if isinstance(right, list) else [right])
    elif _ints(left, right):
        return _bounded(_int_op(op, left, right))  # type: ignore[arg-type]
    raise Unfoldable


def _int_op(op: ast.operator, left: int, right: int) -> int:
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.BitXor):
        return left ^ right
    if isinstance(op, ast.BitAnd):
        return left & right
    if isinstance(op, ast.BitOr):
        return left | right
    if isinstance(op, ast.FloorDiv) and right:
        return left // right
    if isinstance(op, ast.Mod) and right:
        return left % right
    if isinstance(op, ast.LShift | ast.RShift) and 0 <= right <= 32:
        return left << right if isinstance(op, ast.LShift) else left >> right
    raise Unfoldable


def _percent(template: str, args: list[Folded]) -> str:
    """``%`` with ``%s``, ``%d``, ``%c`` and ``%%`` only (no widths: they could be huge)."""
    values = iter(args)

    def field(match: re.Match[str]) -> str:
        kind = match.group(1)
        if kind == "%":
            return "%"
        value = next(values, None)
        if kind == "s" and isinstance(value, str | int):
            return str(value)
        if kind == "d" and isinstance(value, int):
            return str(value)
        if kind == "c" and isinstance(value, int):
            return chr(value)
        if kind == "c" and isinstance(value, str) and len(value) == 1:
            return value
        raise Unfoldable

    return capped(_PERCENT.sub(field, template))  # type: ignore[return-value]


def _ints(left: Folded, right: Folded) -> bool:
    return (
        isinstance(left, int)
        and isinstance(right, int)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
    )


def _bounded(value: int) -> int:
    if -_INT_BOUND < value < _INT_BOUND:
        return value
    raise Unfoldable


def capped(value: Folded) -> Folded:
    if isinstance(value, str | bytes | list) and len(value) > MAX_LENGTH:
        raise Unfoldable
    if isinstance(value, int) and not isinstance(value, bool):
        return _bounded(value)
    return value


def sequence(value: Folded) -> list[Folded]:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return list(value)
    if isinstance(value, bytes):
        return list(value)
    raise Unfoldable


def dict_key(value: Folded) -> str | bytes | int:
    if isinstance(value, str | bytes | int):
        return value
    raise Unfoldable


def _encoding(codec: Folded) -> str:
    if isinstance(codec, str) and codec.lower() in _PLAIN_ENCODINGS:
        return codec.lower()
    raise Unfoldable
