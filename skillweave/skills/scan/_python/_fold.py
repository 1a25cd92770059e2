"""Strings built from constant pieces, evaluated statically: :class:`Folder`.

An attacker hides a name (``exec``, ``system``) or a command by building it at run time:
``"ex" + "ec"``, ``"".join(["ev", "al"])``, ``"".join(map(chr, [101, 118, 97, 108]))``,
``"cexe"[::-1]``, ``"{}{}".format("sys", "tem")``, ``bytes.fromhex("...").decode()``,
``base64.b64decode("ZXhlYw==")``, ``codecs.decode("rkrp", "rot13")``, f-strings, ``%``,
slices, ``.replace``, ``.split``, ``.translate`` with a ``maketrans`` table, ``int(x, 16)``,
``str(b, "ascii")``, ``reversed``, ``bytes([...])``, calls of the module's own functions
(``def _n(k): return "".join(map(chr, k))[::-1]``, their parameters bound) and of another
module's of the skill (``external``, with its constants), and the decoders of ``base64``,
``binascii``, ``codecs``, ``zlib``, ``gzip``, ``bz2`` and ``lzma`` however they are reached
(``import base64 as b``, ``from zlib import decompress``, ``__import__("zlib")``,
``getattr(base64, "b64decode")``): a value decoded from a constant *is* that constant, for
every rule that reads literals. :meth:`Folder.fold` evaluates such an
expression when every piece is a constant (or a name assigned one once), without running any
of the scanned code: each operation is re-implemented here on plain ``str``/``bytes``/``int``
values, with every result capped (:data:`MAX_LENGTH`), integers bounded, recursion capped
and a per-expression step budget, so a hostile file cannot make folding slow or large.

Read by ``_values`` (names looked up dynamically, paths) and the execution rules (code
assembled from pieces). Made by ``Values`` over the module's index.
"""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import codecs
import lzma
import re
import zlib
from collections.abc import Callable
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex

__all__ = ["MAX_LENGTH", "Folded", "Folder"]

MAX_LENGTH: Final = 4096
"""The longest string, bytes or list a fold may produce."""
_DEPTH: Final = 24
_STEPS: Final = 2000
_MODULE_STEPS: Final = 200_000
"""Steps one module's folds may take in all; past them, nothing more is folded."""
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
_DECODING_MODULES: Final = frozenset(
    {"base64", "binascii", "codecs", "zlib", "gzip", "bz2", "lzma", "bytes", "str", "bytearray"}
)
"""Modules whose decoding functions a fold evaluates (each bounded by :data:`MAX_LENGTH`)."""
_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
_B64: Final = frozenset(
    {"b64decode", "standard_b64decode", "urlsafe_b64decode", "decodebytes", "a2b_base64"}
)

Folded = str | bytes | int | bool | list | dict | None
"""What a fold yields: a plain value (lists and dicts of them), or None when unknown."""


_UNBOUND: Final = object()
_CALLED: Final = "\0called"
"""A key of the bound names that no identifier can be: marks a function's body being
folded (its names are read without the memo of the module's constants)."""
_DIGITS: Final = 32
"""The longest digit string ``int()`` is folded from."""
_MAX_RETURNS: Final = 8
"""``return`` statements of a function folded for a call of it, at most."""


class _Unknown(Exception):
    """The expression cannot be evaluated statically (raised inside a fold only)."""


class Folder:
    """Evaluates constant expressions of one module.

    Args:
        index: the module's index (names assigned once stand for their value).
    """

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._memo: dict[int, Folded] = {}
        self._steps = 0
        self._spent = 0
        self._bound: dict[str, Folded] = {}
        self._returns: dict[int, list[ast.expr]] = {}
        """What each of the module's functions returns, by the function's id."""
        self.external: Callable[[str], tuple[Folder, ast.expr | ast.FunctionDef] | None] | None
        self.external = None
        """Another module of the skill's folder and its function or constant's value, by the
        qualified name this module gives it (``names.label``, ``names.CODES``), set by
        ``_package``."""

    def fold(self, node: ast.AST | None) -> Folded:
        """The value `node` evaluates to; None when it is not a constant expression."""
        if node is None:
            return None
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if self._spent > _MODULE_STEPS:
            return None
        self._steps = 0
        try:
            value = self._fold(node, 0)
        except (_Unknown, ValueError, TypeError, IndexError, KeyError, OverflowError,
                binascii.Error, zlib.error, lzma.LZMAError, OSError, EOFError, LookupError,
                RecursionError):  # fmt: skip
            value = None
        finally:
            self._spent += self._steps
        self._memo[key] = value
        return value

    def forget(self) -> None:
        """Drop what was folded so far (the index was still growing)."""
        self._memo.clear()

    def text(self, node: ast.AST | None) -> str | None:
        """The string `node` evaluates to (bytes read as Latin-1); None when unknown."""
        value = self.fold(node)
        if isinstance(value, bytes):
            return value.decode("latin-1")
        return value if isinstance(value, str) else None

    def built(self, node: ast.AST) -> bool:
        """Whether `node` is a constant built from pieces (not a plain literal)."""
        return not isinstance(node, ast.Constant) and isinstance(self.fold(node), str | bytes)

    # --- the evaluation ---------------------------------------------------------------------

    def _fold(self, node: ast.AST, depth: int) -> Folded:
        self._steps += 1
        if depth > _DEPTH or self._steps > _STEPS:
            raise _Unknown
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes | int | bool) or node.value is None:
                return _capped(node.value)
            raise _Unknown
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            if len(node.elts) > MAX_LENGTH:
                raise _Unknown
            return [self._fold(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            if len(node.keys) > MAX_LENGTH or any(k is None for k in node.keys):
                raise _Unknown
            return {
                _key(self._fold(k, depth + 1)): self._fold(v, depth + 1)
                for k, v in zip(node.keys, node.values, strict=True)
                if k is not None
            }
        if isinstance(node, ast.Name):
            if node.id in self._bound:
                return self._bound[node.id]
            values = self.index.assigned.get(node.id)
            if not values and node.id in self.index.aliases:  # from names import CODES
                return self._imported(self.index.aliases[node.id], None, depth)
            if not values or len(values) != 1:
                raise _Unknown
            if self._bound:
                return self._fold(values[0], depth + 1)
            return self._assigned(values[0], depth)
        if isinstance(node, ast.JoinedStr):
            return _capped("".join(self._formatted(v, depth) for v in node.values))
        if isinstance(node, ast.BinOp):
            return _binop(node.op, self._fold(node.left, depth + 1),
                          self._fold(node.right, depth + 1))  # fmt: skip
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Invert):
            value = self._fold(node.operand, depth + 1)
            if not isinstance(value, int):
                raise _Unknown
            return -value if isinstance(node.op, ast.USub) else ~value
        if isinstance(node, ast.Attribute):  # names.CODES
            return self._imported(self._callee(node, depth) or "", None, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self._comprehension(node, depth)
        raise _Unknown

    def _assigned(self, value: ast.expr, depth: int) -> Folded:
        """A name's one assigned value, folded once (``a = b + b; b = c + c`` stays
        linear)."""
        key = id(value)
        if key in self._memo:
            found = self._memo[key]
            if found is None:
                raise _Unknown
            return found
        try:
            found = self._fold(value, depth + 1)
        except _Unknown:
            self._memo[key] = None
            raise
        self._memo[key] = found
        return found

    def _formatted(self, part: ast.expr, depth: int) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if isinstance(part, ast.FormattedValue) and part.format_spec is None:
            value = self._fold(part.value, depth + 1)
            if isinstance(value, str | int) and not isinstance(value, bool):
                return str(value)
        raise _Unknown

    def _subscript(self, node: ast.Subscript, depth: int) -> Folded:
        value = self._fold(node.value, depth + 1)
        if isinstance(node.slice, ast.Slice):
            if not isinstance(value, str | bytes | list):
                raise _Unknown
            bounds = [
                self._fold(b, depth + 1) if b is not None else None
                for b in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            if any(b is not None and not isinstance(b, int) for b in bounds) or bounds[2] == 0:
                raise _Unknown
            return value[slice(*bounds)]
        key = self._fold(node.slice, depth + 1)
        if isinstance(value, dict):
            return value[_key(key)]
        if isinstance(value, str | bytes | list) and isinstance(key, int):
            return value[key]
        raise _Unknown

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, depth: int) -> Folded:
        # (chr(c) for c in [...]) / [chr(c ^ 7) for c in CODES]: one generator, no filter
        if len(node.generators) != 1 or node.generators[0].ifs:
            raise _Unknown
        generator = node.generators[0]
        if not isinstance(generator.target, ast.Name):
            raise _Unknown
        items = self._fold(generator.iter, depth + 1)
        if isinstance(items, str | bytes):
            items = list(items)
        if not isinstance(items, list):
            raise _Unknown
        name = generator.target.id
        return [self.with_bound(node.elt, name, item, depth) for item in items]

    def with_bound(self, element: ast.expr, name: str, item: Folded, depth: int) -> Folded:
        """`element` evaluated with `name` bound to `item` (a comprehension's or a lambda's
        variable)."""
        saved = self._bound.get(name, _UNBOUND)
        self._bound[name] = item
        try:
            return self._fold(element, depth + 1)
        finally:
            if saved is _UNBOUND:
                del self._bound[name]
            else:
                self._bound[name] = saved

    def _call(self, node: ast.Call, depth: int) -> Folded:
        if node.keywords:
            raise _Unknown
        func = node.func
        if isinstance(func, ast.Name) and func.id == "map" and len(node.args) == 2:
            return _mapped(node.args[0], self._fold(node.args[1], depth + 1), self, depth)
        args = [self._fold(a, depth + 1) for a in node.args]
        own = self._own_function(func)
        if own is not None:
            return self._returned(own, args, depth, method=isinstance(func, ast.Attribute))
        if isinstance(func, ast.Name) and func.id not in self.index.aliases:
            return _builtin(func.id, args)
        callee = self._callee(func, depth)  # base64.b64decode, also as b64 / __import__(...)
        if callee and self.external is not None and self.external(callee) is not None:
            return self._imported(callee, args, depth)
        if callee and "." in callee:
            owner, method = callee.rsplit(".", 1)
            if owner in _DECODING_MODULES:
                return _module_call(owner, method, args)
        if not isinstance(func, ast.Attribute):
            raise _Unknown
        receiver = self._fold(func.value, depth + 1)
        return _method(receiver, func.attr, args)

    def _own_function(self, func: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module's one function (or method, called on ``self``/``cls``) `func` names."""
        if isinstance(func, ast.Name) and func.id not in self.index.aliases:
            name = func.id
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            name = func.attr
        else:
            return None
        defs = self.index.defs.get(name) or []
        if len(defs) != 1 or name in self.index.assigned:
            return None
        return defs[0]

    def _returned(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        args: list[Folded],
        depth: int,
        *,
        method: bool,
    ) -> Folded:
        """What the module's `function` returns for `args` (``def _name(codes): return
        "".join(map(chr, codes))[::-1]``): every ``return`` of its own body folded with
        its parameters bound, one value for all of them."""
        spec = function.args
        if (
            spec.vararg
            or spec.kwarg
            or spec.kwonlyargs
            or isinstance(function, ast.AsyncFunctionDef)
        ):
            raise _Unknown
        params = [a.arg for a in [*spec.posonlyargs, *spec.args]][1 if method else 0 :]
        defaults = spec.defaults[len(spec.defaults) - max(len(params) - len(args), 0) :]
        if len(args) > len(params) or len(args) + len(defaults) < len(params):
            raise _Unknown
        bound = dict(zip(params, [*args, *(self._fold(d, depth + 1) for d in defaults)],
                         strict=True))  # fmt: skip
        returns = self._returns.get(id(function))
        if returns is None:
            returns = self._returns[id(function)] = _own_returns(function)
        if not returns or len(returns) > _MAX_RETURNS:
            raise _Unknown
        first, *others = (self.with_bound_all(r, bound, depth) for r in returns)
        if any(other != first for other in others):
            raise _Unknown
        return first

    def _imported(self, name: str, args: list[Folded] | None, depth: int) -> Folded:
        """What another module's constant `name` holds (`args` None) or its function returns
        for `args`, folded there (its names are its module's) on this fold's step budget."""
        found = self.external(name) if self.external is not None and "." in name else None
        if found is None:
            raise _Unknown
        folder, node = found
        if isinstance(node, ast.FunctionDef) is (args is None):
            raise _Unknown
        saved = folder._steps
        folder._steps = self._steps
        try:
            if isinstance(node, ast.FunctionDef):
                return folder._returned(node, args or [], depth + 1, method=False)
            return folder._fold(node, depth + 1)
        finally:
            self._steps = folder._steps
            folder._steps = saved

    def with_bound_all(self, element: ast.expr, bound: dict[str, Folded], depth: int) -> Folded:
        """`element` evaluated with each name of `bound` bound to its value (a function's
        parameters); names bound outside are hidden, as a call hides its caller's."""
        saved = self._bound
        self._bound = {**bound, _CALLED: True}
        try:
            return self._fold(element, depth + 1)
        finally:
            self._bound = saved

    def _callee(self, func: ast.expr, depth: int) -> str | None:
        """The module function `func` names, through import aliases, ``__import__("zlib")``,
        ``importlib.import_module(...)`` and ``getattr(module, "name")`` (names folded)."""
        if depth > _DEPTH:
            return None
        if isinstance(func, ast.Name):
            return self.index.aliases.get(func.id, func.id)
        if isinstance(func, ast.Attribute):
            base = self._callee(func.value, depth + 1)
            return f"{base}.{func.attr}" if base else None
        if not isinstance(func, ast.Call) or func.keywords or not func.args:
            return None
        inner = self._callee(func.func, depth + 1)
        if inner in _IMPORTERS:
            name = self._fold(func.args[0], depth + 1)
            return name if isinstance(name, str) else None
        if inner in ("getattr", "builtins.getattr") and len(func.args) == 2:
            owner = self._callee(func.args[0], depth + 1)
            attribute = self._fold(func.args[1], depth + 1)
            return f"{owner}.{attribute}" if owner and isinstance(attribute, str) else None
        return None


def _builtin(name: str, args: list[Folded]) -> Folded:
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
        return _capped(list(_sequence(args[0])))
    if name == "reversed" and len(args) == 1:
        return list(reversed(_sequence(args[0])))
    if name in ("bytes", "bytearray") and len(args) == 1 and isinstance(args[0], list):
        return _capped(bytes(args[0]))  # type: ignore[arg-type]
    if name in ("bytes", "bytearray") and len(args) == 2 and isinstance(args[0], str):
        return _capped(args[0].encode(_encoding(args[1])))
    raise _Unknown


def _integer(text: Folded, base: Folded = 10) -> int:
    """``int("6c", 16)``, ``int("101")``, ``int(7)``: short digit strings only."""
    if isinstance(text, int) and not isinstance(text, bool) and base == 10:
        return text
    if not isinstance(text, str) or len(text) > _DIGITS or not isinstance(base, int):
        raise _Unknown
    if base != 0 and not 2 <= base <= 36:
        raise _Unknown
    return _bounded(int(text, base))


def _mapped(function: ast.expr, items: Folded, folder: Folder, depth: int) -> Folded:
    """``map(chr, [...])``, ``map(str, ...)``, ``map(lambda c: chr(c ^ 3), ...)``."""
    if isinstance(function, ast.Name) and function.id == "chr":
        return [chr(i) for i in _sequence(items) if isinstance(i, int)]
    if isinstance(function, ast.Name) and function.id == "str":
        return [str(i) for i in _sequence(items)]
    if isinstance(function, ast.Lambda) and len(function.args.args) == 1:
        parameter = function.args.args[0].arg
        return [folder.with_bound(function.body, parameter, i, depth) for i in _sequence(items)]
    raise _Unknown


def _module_call(owner: str, method: str, args: list[Folded]) -> Folded:
    data = args[0] if args else None
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not isinstance(data, bytes) or len(data) > MAX_LENGTH * 2:
        raise _Unknown
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
        return _method(args[0], method, args[1:])  # bytes.decode(data, "utf-8")
    raise _Unknown


def _maketrans(kind: type, args: list[Folded]) -> Folded:
    """``str.maketrans(a, b[, gone])`` or ``bytes.maketrans(a, b)``, for ``translate``."""
    if kind is bytes and len(args) == 2 and all(isinstance(a, bytes) for a in args):
        return bytes.maketrans(args[0], args[1])  # type: ignore[arg-type]
    if kind is str and 2 <= len(args) <= 3 and all(isinstance(a, str) for a in args):
        if len(args[0]) > MAX_LENGTH or len(args[-1]) > MAX_LENGTH:  # type: ignore[arg-type]
            raise _Unknown
        return dict(str.maketrans(*args))  # type: ignore[arg-type]
    if kind is str and len(args) == 1 and isinstance(args[0], dict):
        return dict(str.maketrans(args[0]))
    raise _Unknown


def _translated(receiver: str | bytes, table: Folded) -> Folded:
    """``s.translate(table)``: characters mapped or dropped, the result capped."""
    if isinstance(receiver, bytes) and isinstance(table, bytes) and len(table) == 256:
        return receiver.translate(table)
    if not isinstance(receiver, str) or not isinstance(table, dict):
        raise _Unknown
    if not all(
        isinstance(k, int) and (v is None or isinstance(v, int | str)) for k, v in table.items()
    ):
        raise _Unknown
    widest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
    if len(receiver) * widest > MAX_LENGTH * 4:
        raise _Unknown
    return _capped(receiver.translate(table))


def _decompressed(kind: str, data: bytes) -> bytes:
    """`data` decompressed by zlib, gzip, bz2 or lzma, never past :data:`MAX_LENGTH`."""
    if kind == "bz2":
        return _capped(bz2.BZ2Decompressor().decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]
    if kind == "lzma":
        return _capped(lzma.LZMADecompressor().decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]
    wbits = 31 if kind == "gzip" else 47  # zlib.decompress: a zlib header (47 also reads gzip)
    return _capped(zlib.decompressobj(wbits).decompress(data, MAX_LENGTH + 1))  # type: ignore[return-value]


def _method(receiver: Folded, method: str, args: list[Folded]) -> Folded:
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
                raise _Unknown
            return _capped(receiver.replace(old, new))  # type: ignore[arg-type]
    if isinstance(receiver, str | bytes) and method == "split" and len(args) <= 1:
        separator = args[0] if args else None
        if separator is not None and (type(separator) is not type(receiver) or not separator):
            raise _Unknown
        return _capped(receiver.split(separator))  # type: ignore[arg-type]
    if isinstance(receiver, str) and method in _STR_METHODS and not args:
        return getattr(receiver, method)()
    if isinstance(receiver, str | bytes) and method == "maketrans":
        return _maketrans(type(receiver), args)
    if isinstance(receiver, str | bytes) and method == "translate" and len(args) == 1:
        return _translated(receiver, args[0])
    if isinstance(receiver, str) and method == "format":
        return _format(receiver, args)
    if isinstance(receiver, str | bytes) and method == "hex" and not args:
        return _capped(receiver.hex() if isinstance(receiver, bytes) else None)
    raise _Unknown


def _joined(separator: str | bytes, items: Folded) -> Folded:
    pieces = _sequence(items)
    if not all(type(p) is type(separator) for p in pieces):
        raise _Unknown
    return _capped(separator.join(pieces))  # type: ignore[arg-type]


def _format(template: str, args: list[Folded]) -> str:
    """``str.format`` with plain ``{}`` and ``{0}`` fields only (no attributes, no specs)."""
    counter = iter(range(len(args)))

    def field(match: re.Match[str]) -> str:
        name = match.group(1)
        position = int(name) if name.isdigit() else next(counter, None) if not name else None
        if position is None or position >= len(args):
            raise _Unknown
        value = args[position]
        if not isinstance(value, str | int):
            raise _Unknown
        return str(value)

    stripped = template.replace("{{", "\0").replace("}}", "\1")
    result = _FORMAT_FIELD.sub(field, stripped)
    if "{" in result or "}" in result:
        raise _Unknown
    return _capped(result.replace("\0", "{").replace("\1", "}"))  # type: ignore[return-value]


def _binop(op: ast.operator, left: Folded, right: Folded) -> Folded:
    if isinstance(op, ast.Add):
        if isinstance(left, str | bytes | list) and type(left) is type(right):
            return _capped(left + right)  # type: ignore[operator]
        if _ints(left, right):
            return _bounded(left + right)  # type: ignore[operator]
    elif isinstance(op, ast.Mult):
        if isinstance(left, int) and not isinstance(right, int):
            left, right = right, left
        if isinstance(left, str | bytes | list) and isinstance(right, int):
            if len(left) * max(right, 0) > MAX_LENGTH:
                raise _Unknown
            return left * right
        if _ints(left, right):
            return _bounded(left * right)  # type: ignore[operator]
    elif isinstance(op, ast.Mod) and isinstance(left, str):
        return _percent(left, right if isinstance(right, list) else [right])
    elif _ints(left, right):
        return _bounded(_int_op(op, left, right))  # type: ignore[arg-type]
    raise _Unknown


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
    raise _Unknown


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
        raise _Unknown

    return _capped(_PERCENT.sub(field, template))  # type: ignore[return-value]


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
    raise _Unknown


def _capped(value: Folded) -> Folded:
    if isinstance(value, str | bytes | list) and len(value) > MAX_LENGTH:
        raise _Unknown
    if isinstance(value, int) and not isinstance(value, bool):
        return _bounded(value)
    return value


def _sequence(value: Folded) -> list[Folded]:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return list(value)
    if isinstance(value, bytes):
        return list(value)
    raise _Unknown


def _key(value: Folded) -> str | bytes | int:
    if isinstance(value, str | bytes | int):
        return value
    raise _Unknown


def _encoding(codec: Folded) -> str:
    if isinstance(codec, str) and codec.lower() in _PLAIN_ENCODINGS:
        return codec.lower()
    raise _Unknown


def _own_returns(function: ast.FunctionDef) -> list[ast.expr]:
    """What the ``return`` statements of `function` itself (not of functions defined in
    it) return, at most one more than :data:`_MAX_RETURNS`."""
    found: list[ast.expr] = []
    todo: list[ast.AST] = list(function.body)
    while todo and len(found) <= _MAX_RETURNS:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                            | ast.ClassDef):  # fmt: skip
            todo.extend(ast.iter_child_nodes(node))
    return found
