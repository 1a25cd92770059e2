"""What a factory function hands back: :func:`factory_product`.

A callable can be made by a function that closes over it and returns a forwarder::

    def _mk():
        m = __import__("os")
        return lambda *a, **k: m.system(*a, **k)      # or an inner def doing the same
    run = _mk()

``run`` is ``os.system``: the returned lambda or inner ``def`` only passes its parameters on.
The same holds for a factory returning the callable itself (``def _mk(): return
os.system``), and for one closing over its own parameter, named or written in place
(``(lambda f: lambda c: f(c))(exec)`` is ``exec``): a parameter stands for the argument.
Names are resolved in the factory's own scope first (``m`` above), because a module's
factories often reuse one local name for different modules, and only then through the
module's aliases. Called by ``_unwrap``, which rewrites each call of such a factory as the
callable it returns; bounded by the statements of one function body (:data:`_MAX_BODY`).
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._values import Values

__all__ = ["dotted", "factory_product"]

_MAX_BODY: Final = 64
"""Statements of a factory's body read, at most."""
_BUILTINS: Final = frozenset({"exec", "eval", "compile", "open", "__import__", "getattr"})


def factory_product(index: ModuleIndex, values: Values, call: ast.Call) -> str | None:
    """The dotted name of the callable `call` (a call of one of the module's functions or
    lambdas, or of a lambda written in place) returns, when that function returns it or a
    forwarder to it on every path; None otherwise. A parameter stands for the argument
    `call` gives it (``(lambda f: lambda c: f(c))(exec)`` returns ``exec``)."""
    factory = _factory(index, call.func)
    if factory is None or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    params = [a.arg for a in [*factory.args.posonlyargs, *factory.args.args]]
    if len(call.args) > len(params):
        return None
    scope: dict[str, ast.expr] = dict(zip(params, call.args, strict=False))
    if isinstance(factory, ast.Lambda):
        return _product(values, factory.body, scope, {})
    inner: dict[str, ast.FunctionDef] = {}
    products: set[str | None] = set()
    for statement in factory.body[:_MAX_BODY]:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                scope[target.id] = statement.value
        elif isinstance(statement, ast.FunctionDef):
            inner[statement.name] = statement
        elif isinstance(statement, ast.Return) and statement.value is not None:
            products.add(_product(values, statement.value, scope, inner))
        elif isinstance(statement, ast.If | ast.For | ast.While | ast.Try | ast.With):
            return None  # a return under a branch: not on every path
    if len(products) != 1:
        return None
    return products.pop()


def _factory(
    index: ModuleIndex, func: ast.expr
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    """The one function or lambda `func` names (or is), None when it is not the module's
    own or is defined more than once."""
    if isinstance(func, ast.Lambda):
        return func
    if not isinstance(func, ast.Name) or func.id in index.aliases:
        return None
    defs = index.defs.get(func.id) or []
    assigned = index.assigned.get(func.id) or []
    if len(defs) == 1 and not assigned:
        return defs[0]
    if not defs and len(assigned) == 1 and isinstance(assigned[0], ast.Lambda):
        return assigned[0]
    return None


def _product(
    values: Values, value: ast.expr, scope: dict[str, ast.expr], inner: dict[str, ast.FunctionDef]
) -> str | None:
    """What one ``return value`` of a factory hands back, as a dotted name."""
    if isinstance(value, ast.Lambda):
        return _forwarded(values, value.args, value.body, scope)
    if isinstance(value, ast.Name) and value.id in inner:
        function = inner[value.id]
        body = [s for s in function.body if not _docstring(s)]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            return _forwarded(values, function.args, body[0].value, scope)
        return None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in inner
        and not value.args
        and not value.keywords
    ):  # return pick(), pick's one statement returning the callable
        body = [s for s in inner[value.func.id].body if not _docstring(s)]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            value = body[0].value
    if isinstance(value, ast.Name | ast.Attribute):  # the callable itself
        return _resolved(values, value, scope)
    return None


def _forwarded(
    values: Values, args: ast.arguments, body: ast.expr, scope: dict[str, ast.expr]
) -> str | None:
    """The callee `body` calls when it only passes the parameters `args` on."""
    if not isinstance(body, ast.Call):
        return None
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    if args.vararg:
        params.add(args.vararg.arg)
    passed = [a.value if isinstance(a, ast.Starred) else a for a in body.args]
    passed += [k.value for k in body.keywords]
    if not all(isinstance(p, ast.Name) and p.id in params | _kwarg(args) for p in passed):
        return None
    return _resolved(values, body.func, scope)


def _kwarg(args: ast.arguments) -> set[str]:
    return {args.kwarg.arg} if args.kwarg else set()


def _resolved(values: Values, node: ast.expr, scope: dict[str, ast.expr]) -> str | None:
    """`node`'s dotted name, its root read in the factory's scope first."""
    attributes: list[str] = []
    root: ast.expr = node
    while isinstance(root, ast.Attribute):
        attributes.append(root.attr)
        root = root.value
    if isinstance(root, ast.Name) and root.id in scope:
        head = values.qualname(scope[root.id])
    else:
        head = values.qualname(root)
    if not head:
        return None
    name = ".".join([head, *reversed(attributes)]).removeprefix("builtins.")
    return name if "." in name or name in _BUILTINS else None


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def dotted(name: str) -> ast.expr:
    """An expression naming `name` (``os.path.join`` as attributes of a name)."""
    head, *rest = name.split(".")
    node: ast.expr = ast.Name(head, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node
