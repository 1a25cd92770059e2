"""The expressions a name or a call may stand for in the module's own code: :class:`Candidates`.

A parameter stands for its default and the argument each call of its function in the module
gives it (:meth:`Candidates.arguments`), a loop variable for the items of the literal list or
tuple it walks (:meth:`Candidates.loop_items`), a name assigned once for its value
(:meth:`Candidates.single`), a call of the module's own function, method or lambda for what it
returns (:meth:`Candidates.own_returns`), and ``self``, ``cls`` and the module's class names
for a class of the module (:meth:`Candidates.classes`). Read from the module's index alone:
no string is approximated here. :data:`MAX_CHOICES` bounds the calls read for a parameter's
arguments, and the alternatives ``Strings`` takes at any choice point.

Made by :class:`~skillweave.skills.scan._python._strings.Strings`, which approximates the
candidate each choice point of :meth:`Strings.paths` takes.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex

__all__ = ["MAX_CHOICES", "Candidates"]

MAX_CHOICES: Final = 4
"""Alternatives one choice point (a conditional, a name assigned again, a function's
returns, a parameter's arguments) offers, at most."""
_MAX_CLIMB: Final = 100
_COMPREHENSIONS: Final = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


class Candidates:
    """The expressions a module's names and calls may stand for, read from its index.

    Args:
        index: the module's index.
    """

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._call_sites: dict[str, list[ast.Call]] | None = None
        self._class_names: set[str] | None = None

    def forget(self) -> None:
        """Drop what was read of the index (its calls and classes have changed)."""
        self._call_sites = None
        self._class_names = None

    def arguments(self, name: ast.Name) -> list[ast.expr]:
        """What the parameter `name` is given: its default and the matching argument of each
        call of its function in the module (``_pin(os.getcwd())`` for ``def _pin(ws)``)."""
        function = self._function_of(name)
        if function is None:
            return []
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        found: list[ast.expr] = []
        for position, parameter in enumerate(positional):
            if parameter.arg != name.id:
                continue
            defaults = arguments.defaults
            offset = position - (len(positional) - len(defaults))
            if offset >= 0:
                found.append(defaults[offset])
            method = bool(positional) and positional[0].arg in ("self", "cls")
            for call in self._calls_of(function.name)[:MAX_CHOICES]:
                at = position - (1 if method and isinstance(call.func, ast.Attribute) else 0)
                keyword = next((k.value for k in call.keywords if k.arg == name.id), None)
                given = call.args[at] if 0 <= at < len(call.args) else keyword
                if given is not None and not isinstance(given, ast.Starred):
                    found.append(given)
        return found

    def loop_items(self, name: ast.Name) -> list[ast.expr]:
        """The items a ``for`` loop (or comprehension) gives `name`, when it walks a literal
        list or tuple, or a name assigned one once."""
        if name.id in self.index.loops:
            return self.index.loops[name.id]
        node: ast.AST | None = name
        for _ in range(_MAX_CLIMB):
            node = self.index.parents.get(id(node))
            if node is None or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return []
            loops = node.generators if isinstance(node, _COMPREHENSIONS) else [node]
            for loop in loops:
                if not isinstance(loop, ast.For | ast.comprehension):
                    continue
                if isinstance(loop.target, ast.Name) and loop.target.id == name.id:
                    return _literal_items(self.single(loop.iter))
        return []

    def single(self, node: ast.expr) -> ast.expr:
        """What the name `node` is assigned, when it is assigned once; `node` otherwise."""
        if isinstance(node, ast.Name):
            values = self.index.assigned.get(node.id)
            if values and len(values) == 1:
                return values[0]
        return node

    def _function_of(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function whose body reads `name` (the nearest one)."""
        node: ast.AST | None = name
        for _ in range(_MAX_CLIMB):
            node = self.index.parents.get(id(node))
            if node is None or isinstance(node, ast.Lambda | ast.ClassDef):
                return None
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
        return None

    def _calls_of(self, function: str) -> list[ast.Call]:
        """The module's calls of a function or method by this name."""
        if self._call_sites is None:
            self._call_sites = {}
            for call in self.index.calls:
                func = call.func
                callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if callee in self.index.defs:
                    self._call_sites.setdefault(callee, []).append(call)
        return self._call_sites.get(function, [])

    def classes(self) -> set[str]:
        """Names that stand for a class of the module inside or outside it."""
        if self._class_names is None:
            self._class_names = {"self", "cls"} | {
                n.name for n in self.index.order if isinstance(n, ast.ClassDef)
            }
        return self._class_names

    def own_returns(self, func: ast.expr) -> list[ast.expr]:
        """What the module's own function or method `func` names returns (its return
        statements); empty for any other callee."""
        if isinstance(func, ast.Name) and isinstance(lambda_ := self.single(func), ast.Lambda):
            return [lambda_.body]
        if isinstance(func, ast.Name) and func.id not in self.index.aliases:
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = func.attr if func.value.id in ("self", "cls") else ""
        else:
            return []
        return self.index.returns.get(name, []) if name in self.index.defs else []


def _literal_items(node: ast.expr) -> list[ast.expr]:
    """The items of a literal list, tuple or set; empty for anything else."""
    return list(node.elts) if isinstance(node, ast.List | ast.Tuple | ast.Set) else []
