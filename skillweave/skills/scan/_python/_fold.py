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
of the scanned code. This module walks the expression: names, subscripts, comprehensions,
f-strings, calls and the parameters they bind, with recursion capped and a per-expression
step budget. The operations on the folded values live in ``_operations`` (each
re-implemented on plain ``str``/``bytes``/``int`` values, every result capped, integers
bounded), and which function a call names in ``_callees``, so a hostile file cannot make
folding slow or large.

Read by ``_values`` (names looked up dynamically, paths) and the execution rules (code
assembled from pieces). Made by ``Values`` over the module's index.
"""

from __future__ import annotations

import ast
import binascii
import lzma
import zlib
from collections.abc import Callable
from typing import Final

from skillweave.skills.scan._python._callees import (
    MAX_RETURNS,
    called_name,
    own_function,
    own_returns,
)
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._operations import (
    DECODING_MODULES,
    MAX_DEPTH,
    MAX_LENGTH,
    Folded,
    Unfoldable,
    binop,
    builtin_call,
    capped,
    dict_key,
    method_call,
    module_call,
    sequence,
)

__all__ = ["Folder"]

_STEPS: Final = 2000
_MODULE_STEPS: Final = 200_000
"""Steps one module's folds may take in all; past them, nothing more is folded."""
_UNBOUND: Final = object()
_CALLED: Final = "\0called"
"""A key of the bound names that no identifier can be: marks a function's body being
folded (its names are read without the memo of the module's constants)."""


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
        except (Unfoldable, ValueError, TypeError, IndexError, KeyError, OverflowError,
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
        if depth > MAX_DEPTH or self._steps > _STEPS:
            raise Unfoldable
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes | int | bool) or node.value is None:
                return capped(node.value)
            raise Unfoldable
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            if len(node.elts) > MAX_LENGTH:
                raise Unfoldable
            return [self._fold(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            if len(node.keys) > MAX_LENGTH or any(k is None for k in node.keys):
                raise Unfoldable
            return {
                dict_key(self._fold(k, depth + 1)): self._fold(v, depth + 1)
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
                raise Unfoldable
            if self._bound:
                return self._fold(values[0], depth + 1)
            return self._assigned(values[0], depth)
        if isinstance(node, ast.JoinedStr):
            return capped("".join(self._formatted(v, depth) for v in node.values))
        if isinstance(node, ast.BinOp):
            return binop(node.op, self._fold(node.left, depth + 1),
                         self._fold(node.right, depth + 1))  # fmt: skip
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Invert):
            value = self._fold(node.operand, depth + 1)
            if not isinstance(value, int):
                raise Unfoldable
            return -value if isinstance(node.op, ast.USub) else ~value
        if isinstance(node, ast.Attribute):  # names.CODES
            name = called_name(self.index, node, self._fold, depth)
            return self._imported(name or "", None, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self._comprehension(node, depth)
        raise Unfoldable

    def _assigned(self, value: ast.expr, depth: int) -> Folded:
        """A name's one assigned value, folded once (``a = b + b; b = c + c`` stays
        linear)."""
        key = id(value)
        if key in self._memo:
            found = self._memo[key]
            if found is None:
                raise Unfoldable
            return found
        try:
            found = self._fold(value, depth + 1)
        except Unfoldable:
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
        raise Unfoldable

    def _subscript(self, node: ast.Subscript, depth: int) -> Folded:
        value = self._fold(node.value, depth + 1)
        if isinstance(node.slice, ast.Slice):
            if not isinstance(value, str | bytes | list):
                raise Unfoldable
            bounds = [
                self._fold(b, depth + 1) if b is not None else None
                for b in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            if any(b is not None and not isinstance(b, int) for b in bounds) or bounds[2] == 0:
                raise Unfoldable
            return value[slice(*bounds)]
        key = self._fold(node.slice, depth + 1)
        if isinstance(value, dict):
            return value[dict_key(key)]
        if isinstance(value, str | bytes | list) and isinstance(key, int):
            return value[key]
        raise Unfoldable

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, depth: int) -> Folded:
        # (chr(c) for c in [...]) / [chr(c ^ 7) for c in CODES]: one generator, no filter
        if len(node.generators) != 1 or node.generators[0].ifs:
            raise Unfoldable
        generator = node.generators[0]
        if not isinstance(generator.target, ast.Name):
            raise Unfoldable
        items = self._fold(generator.iter, depth + 1)
        if isinstance(items, str | bytes):
            items = list(items)
        if not isinstance(items, list):
            raise Unfoldable
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
            raise Unfoldable
        func = node.func
        if isinstance(func, ast.Name) and func.id == "map" and len(node.args) == 2:
            return _mapped(node.args[0], self._fold(node.args[1], depth + 1), self, depth)
        args = [self._fold(a, depth + 1) for a in node.args]
        own = own_function(self.index, func)
        if own is not None:
            return self._returned(own, args, depth, method=isinstance(func, ast.Attribute))
        if isinstance(func, ast.Name) and func.id not in self.index.aliases:
            return builtin_call(func.id, args)
        # base64.b64decode, also as b64 / __import__(...)
        callee = called_name(self.index, func, self._fold, depth)
        if callee and self.external is not None and self.external(callee) is not None:
            return self._imported(callee, args, depth)
        if callee and "." in callee:
            owner, method = callee.rsplit(".", 1)
            if owner in DECODING_MODULES:
                return module_call(owner, method, args)
        if not isinstance(func, ast.Attribute):
            raise Unfoldable
        receiver = self._fold(func.value, depth + 1)
        return method_call(receiver, func.attr, args)

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
            raise Unfoldable
        params = [a.arg for a in [*spec.posonlyargs, *spec.args]][1 if method else 0 :]
        defaults = spec.defaults[len(spec.defaults) - max(len(params) - len(args), 0) :]
        if len(args) > len(params) or len(args) + len(defaults) < len(params):
            raise Unfoldable
        bound = dict(zip(params, [*args, *(self._fold(d, depth + 1) for d in defaults)],
                         strict=True))  # fmt: skip
        returns = self._returns.get(id(function))
        if returns is None:
            returns = self._returns[id(function)] = own_returns(function)
        if not returns or len(returns) > MAX_RETURNS:
            raise Unfoldable
        first, *others = (self.with_bound_all(r, bound, depth) for r in returns)
        if any(other != first for other in others):
            raise Unfoldable
        return first

    def _imported(self, name: str, args: list[Folded] | None, depth: int) -> Folded:
        """What another module's constant `name` holds (`args` None) or its function returns
        for `args`, folded there (its names are its module's) on this fold's step budget."""
        found = self.external(name) if self.external is not None and "." in name else None
        if found is None:
            raise Unfoldable
        folder, node = found
        if isinstance(node, ast.FunctionDef) is (args is None):
            raise Unfoldable
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


def _mapped(function: ast.expr, items: Folded, folder: Folder, depth: int) -> Folded:
    """``map(chr, [...])``, ``map(str, ...)``, ``map(lambda c: chr(c ^ 3), ...)``."""
    if isinstance(function, ast.Name) and function.id == "chr":
        return [chr(i) for i in sequence(items) if isinstance(i, int)]
    if isinstance(function, ast.Name) and function.id == "str":
        return [str(i) for i in sequence(items)]
    if isinstance(function, ast.Lambda) and len(function.args.args) == 1:
        parameter = function.args.args[0].arg
        return [folder.with_bound(function.body, parameter, i, depth) for i in sequence(items)]
    raise Unfoldable
