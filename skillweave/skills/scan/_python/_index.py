"""What one walk over a Python module collects: :class:`ModuleIndex`.

``ast.walk`` is iterative, so a deep tree cannot exhaust the stack. The walk records every
node's parent, imports and their aliases (also ``e = exec`` and ``run = getattr(os,
"system")``), simple ``name = value`` assignments, what each function returns, every call,
every string constant and which constants are docstrings; whether a call's result is
thrown away is read against it. The rule families and the value approximation (``_values``)
read calls against it. Made and built by ``PythonScan``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Final

__all__ = ["ModuleIndex"]

_NAMESPACES: Final = frozenset({"globals", "locals", "vars"})
_ANY: Final = "*"
"""Stands for every name (no identifier is spelled so)."""


class ModuleIndex:
    """One module's names, assignments, calls and constants, in walk order.

    Args:
        tree: the parsed module.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[int, ast.AST] = {}
        self.aliases: dict[str, str] = {}
        self.assigned: dict[str, list[ast.expr]] = {}
        self.calls: list[ast.Call] = []
        self.constants: list[ast.Constant] = []
        self.docstrings: set[int] = set()
        self.returns: dict[str, list[ast.expr]] = {}
        self.assigned_aliases: set[str] = set()
        self.imports: list[tuple[str, int]] = []
        """Each imported name (``os``, ``urllib.request.urlopen``) with its line."""
        self.order: list[ast.AST] = []
        """Every node in walk order (a parent before its children)."""
        self.defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        """Functions and methods by name."""
        self.defaulted: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
        """Functions and lambdas with a default value for a parameter."""
        self.decorated: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        """Functions with a decorator that is a call (``@via(os.system)``)."""
        self.withs: dict[str, list[ast.expr]] = {}
        """A name ``with ... as`` binds → what it binds it to."""
        self.loops: dict[str, list[ast.expr]] = {}
        """A name a ``for`` loop walks a literal tuple or list with → the items."""
        self.subclasses: list[ast.ClassDef] = []
        """Classes with one base class."""
        self.class_attributes: dict[str, list[ast.expr]] = {}
        """Names assigned in a class body (``runner = subprocess.run``) → their values."""
        self.registers_codecs = False
        """Whether the module calls ``codecs.register`` (a codec of its own)."""
        self.stored: dict[str, list[tuple[ast.expr, ast.expr]]] = {}
        """A name stored into by key (``TABLE[key] = value``) → (key, value) pairs."""
        self._read: frozenset[str] | None = None

    def result_dropped(self, call: ast.Call) -> bool:
        """Whether what `call` returns is thrown away: the call is a statement of its own, or
        its result is bound to names the module never reads (and no ``globals()``,
        ``locals()`` or ``vars()`` could read them). A call the walk did not see (one a
        wrapper stands for) is not."""
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Expr):
            return True
        if not (isinstance(parent, ast.Assign) and parent.value is call):
            return False
        if not all(isinstance(t, ast.Name) for t in parent.targets):
            return False
        if self._read is None:
            self._read = _read_names(self.order)
        read = self._read
        return _ANY not in read and not any(t.id in read for t in parent.targets)  # type: ignore[attr-defined]

    def build(self, qualname: Callable[[ast.AST], str | None]) -> None:
        """Walk the tree once; `qualname` resolves an assigned callee with the aliases known
        so far (``Values.qualname``)."""
        for node in ast.walk(self.tree):
            self.order.append(node)
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            self._index(node, qualname)

    def _index(self, node: ast.AST, qualname: Callable[[ast.AST], str | None]) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.aliases[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
                self.imports.append((alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                self.aliases[alias.asname or alias.name] = full
                self.imports.append((full, node.lineno))
        elif isinstance(node, ast.ImportFrom):  # from .helper import run; from . import helper
            for alias in node.names:
                module = node.module.rsplit(".", 1)[-1] if node.module else ""
                full = f"{module}.{alias.name}" if module else alias.name
                self.aliases[alias.asname or alias.name] = full
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            self._assign(node.targets[0], node.value, qualname)
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and isinstance(node.target, ast.Name):
            if node.value is not None:
                self.assigned.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Call):
            self.calls.append(node)
            func, args = node.func, node.args
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "register"
                and isinstance(func.value, ast.Name)
                and self.aliases.get(func.value.id) == "codecs"
            ):
                self.registers_codecs = True
            if isinstance(func, ast.Name) and func.id == "setattr" and len(args) == 3:
                key = args[1]  # setattr(holder, "run", os.system): holder.run is os.system
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.class_attributes.setdefault(key.value, []).append(args[2])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.constants.append(node)
        elif isinstance(node, ast.withitem | ast.For):
            self._bound(node)
        elif isinstance(node, ast.Lambda):
            if node.args.defaults or any(node.args.kw_defaults):
                self.defaulted.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            if isinstance(node, ast.ClassDef) and len(node.bases) == 1:
                self.subclasses.append(node)
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                        target = statement.targets[0]
                        if isinstance(target, ast.Name):
                            self.class_attributes.setdefault(target.id, []).append(statement.value)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defs.setdefault(node.name, []).append(node)
                if node.args.defaults or any(node.args.kw_defaults):
                    self.defaulted.append(node)
                if any(isinstance(d, ast.Call) for d in node.decorator_list):
                    self.decorated.append(node)
                self.returns.setdefault(node.name, []).extend(
                    r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value
                )
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                self.docstrings.add(id(body[0].value))

    def _assign(
        self, target: ast.expr, value: ast.expr, qualname: Callable[[ast.AST], str | None]
    ) -> None:
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(value)
            # e = exec; run = os.system; run = getattr(__import__("os"), "system")
            if isinstance(value, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
                name = qualname(value)
                if name:
                    self.aliases.setdefault(target.id, name)
                    self.assigned_aliases.add(target.id)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            if len(target.elts) == len(value.elts) <= 64:  # a, b = print, os.system
                for element, item in zip(target.elts, value.elts, strict=True):
                    if isinstance(element, ast.Name):
                        self.assigned.setdefault(element.id, []).append(item)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.stored.setdefault(target.value.id, []).append((target.slice, value))
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in ("self", "cls")
        ):  # self.runner = subprocess.run
            self.class_attributes.setdefault(target.attr, []).append(value)

    def _bound(self, node: ast.withitem | ast.For) -> None:
        if isinstance(node, ast.withitem):
            if isinstance(node.optional_vars, ast.Name):
                self.withs.setdefault(node.optional_vars.id, []).append(node.context_expr)
        elif isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple | ast.List):
            self.loops.setdefault(node.target.id, []).extend(node.iter.elts)


def _read_names(order: list[ast.AST]) -> frozenset[str]:
    """Every name the module reads or deletes; :data:`_ANY` alone when it reads its
    namespaces (``globals()``, ``locals()``, ``vars()``: any name may be read)."""
    read: set[str] = set()
    for node in order:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            if node.id in _NAMESPACES:
                return frozenset({_ANY})
            read.add(node.id)
    return frozenset(read)
