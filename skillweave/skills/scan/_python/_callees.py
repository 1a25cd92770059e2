"""What a call in a module names, for a fold: its own function, or a module's function.

``_fold`` evaluates a call by what its callee is: one of the module's own functions (or a
method called on ``self``/``cls``), whose ``return`` statements it folds with the parameters
bound (:func:`own_function`, :func:`own_returns`), or a module's function named through
import aliases, ``__import__("zlib")``, ``importlib.import_module(...)`` and
``getattr(module, "name")`` (:func:`called_name`, the names in those calls folded by the
caller's fold). Read by ``_fold`` only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._operations import MAX_DEPTH, Folded

__all__ = ["MAX_RETURNS", "called_name", "own_function", "own_returns"]

_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
MAX_RETURNS: Final = 8
"""``return`` statements of a function folded for a call of it, at most."""


def own_function(
    index: ModuleIndex, func: ast.expr
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module's one function (or method, called on ``self``/``cls``) `func` names."""
    if isinstance(func, ast.Name) and func.id not in index.aliases:
        name = func.id
    elif (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        name = func.attr
    else:
        return None
    defs = index.defs.get(name) or []
    if len(defs) != 1 or name in index.assigned:
        return None
    return defs[0]


def called_name(
    index: ModuleIndex,
    func: ast.expr,
    fold: Callable[[ast.AST, int], Folded],
    depth: int,
) -> str | None:
    """The module function `func` names, through import aliases, ``__import__("zlib")``,
    ``importlib.import_module(...)`` and ``getattr(module, "name")`` (names folded by
    `fold`)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(func, ast.Name):
        return index.aliases.get(func.id, func.id)
    if isinstance(func, ast.Attribute):
        base = called_name(index, func.value, fold, depth + 1)
        return f"{base}.{func.attr}" if base else None
    if not isinstance(func, ast.Call) or func.keywords or not func.args:
        return None
    inner = called_name(index, func.func, fold, depth + 1)
    if inner in _IMPORTERS:
        name = fold(func.args[0], depth + 1)
        return name if isinstance(name, str) else None
    if inner in ("getattr", "builtins.getattr") and len(func.args) == 2:
        owner = called_name(index, func.args[0], fold, depth + 1)
        attribute = fold(func.args[1], depth + 1)
        return f"{owner}.{attribute}" if owner and isinstance(attribute, str) else None
    return None


def own_returns(function: ast.FunctionDef) -> list[ast.expr]:
    """What the ``return`` statements of `function` itself (not of functions defined in
    it) return, at most one more than :data:`MAX_RETURNS`."""
    found: list[ast.expr] = []
    todo: list[ast.AST] = list(function.body)
    while todo and len(found) <= MAX_RETURNS:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                            | ast.ClassDef):  # fmt: skip
            todo.extend(ast.iter_child_nodes(node))
    return found
