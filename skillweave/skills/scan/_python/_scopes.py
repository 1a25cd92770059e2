"""Where values flow in one Python module: :class:`Scopes`.

One walk over the module records its scopes (the module, each function, lambda and class),
their parameters and local names, and every place a value moves: an assignment (also into a
tuple, an attribute ``self.x = v`` or a container ``d[k] = v``, ``items.append(v)``), a
``for`` loop or comprehension (the items of what it walks), a ``with ... as``, a ``return``
or ``yield`` (the function's result) and a lambda's body. A variable is a :data:`Var`:
``("n", scope, name)`` for a name, ``("a", attr)`` for an attribute of any object (one per
attribute name: coarse, so it over-approximates) and ``("r", scope)`` for what a function
returns. Calls of the module's own functions are resolved here too (:meth:`Scopes.targets`:
names, lambdas assigned to names, methods through ``self``, an instance or the method's
name), so the taint (``_taint``) can bind arguments to parameters and the wrappers
(``_wrappers``) can find the functions a call reaches. Made by ``ModuleAnalysis``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Flow", "FunctionScope", "Scopes", "Var"]

Var = tuple
"""``("n", scope id, name)``, ``("a", attribute)`` or ``("r", scope id)``."""
_CONTAINER_METHODS: Final = frozenset(
    {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "put"}
)
_SINGLETONS: Final = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
_MAX_CANDIDATES: Final = 4
_SCOPE_DEPTH: Final = 200

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(slots=True)
class FunctionScope:
    """A function or lambda: its parameters, and the class it is a method of."""

    node: FunctionNode
    parent: int
    params: list[str]
    vararg: str | None
    kwarg: str | None
    defaults: dict[str, ast.expr]
    owner: str | None = None
    """The class name, for a method."""
    name: str = ""
    positional: int | None = None
    """How many of `params` an argument can fill by position (keyword-only ones follow)."""


@dataclass(slots=True)
class Flow:
    """A value moving: `value` (read in `scope`) flows into `target`."""

    target: Var
    value: ast.expr
    scope: int


@dataclass(slots=True)
class _Scope:
    parent: int | None
    kind: str
    names: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)


class Scopes:
    """The module's scopes, flows and functions.

    Args:
        tree: the parsed module.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.module = id(tree)
        self.scopes: dict[int, _Scope] = {self.module: _Scope(None, "module")}
        self.functions: dict[int, FunctionScope] = {}
        self.flows: list[Flow] = []
        self.defined: dict[Var, list[int]] = {}
        """A name's variable → the functions (scope ids) defined or lambdas assigned to it."""
        self.methods: dict[str, dict[str, int]] = {}
        """Class name → method name → function scope id."""
        self.classes: dict[Var, str] = {}
        """A name's variable → the class it names."""
        self.xored: list[Var] = []
        """Variables whose items are XORed in place (``data[i] ^= key``)."""
        self._scope_of: dict[int, int] = {}
        self._class_names: dict[int, str] = {}
        self._by_method: dict[str, list[int]] = {}
        self._instances: dict[Var, str] = {}
        self._bound_methods: dict[Var, int] = {}

    def build(self, order: list[ast.AST], parents: dict[int, ast.AST]) -> None:
        """Read the nodes in walk order (`order`, a parent before its children, from the
        index's walk), then record the flows."""
        inner_of: dict[int, int] = {}
        statements: list[tuple[ast.AST, int]] = []
        for node in order:
            if isinstance(node, _SINGLETONS):
                continue  # shared singletons: no parent of their own
            parent = parents.get(id(node))
            scope = inner_of.get(id(parent), self.module) if parent is not None else self.module
            inner_of[id(node)] = self._enter(node, scope)
            self._scope_of[id(node)] = scope
            statements.append((node, scope))
        for node, scope in statements:
            self._flows(node, scope)

    # --- queries ----------------------------------------------------------------------------

    def scope_of(self, node: ast.AST) -> int:
        """The scope a node is read in (the module for a node the walk did not see)."""
        return self._scope_of.get(id(node), self.module)

    def resolve(self, name: str, scope: int) -> Var:
        """The variable `name` read in `scope` stands for (enclosing scopes, then the
        module)."""
        current: int | None = scope
        for _ in range(_SCOPE_DEPTH):
            if current is None:
                break
            info = self.scopes[current]
            if name in info.globals:
                return ("n", self.module, name)
            if name in info.names:
                return ("n", current, name)
            current = info.parent
        return ("n", self.module, name)

    def targets(self, func: ast.expr, scope: int) -> list[tuple[int, bool]]:
        """The module's functions a call of `func` may reach: (scope id, whether the first
        parameter is bound, as for a method or a class)."""
        if isinstance(func, ast.Name):
            var = self.resolve(func.id, scope)
            found = [(f, False) for f in self.defined.get(var, [])[:_MAX_CANDIDATES]]
            if var in self._bound_methods:  # run = Tool().go
                found.append((self._bound_methods[var], True))
            cls = self.classes.get(var)
            if cls is not None and "__init__" in self.methods.get(cls, {}):
                found.append((self.methods[cls]["__init__"], True))
            return found
        if not isinstance(func, ast.Attribute):
            return []
        owner = self._class_of(func.value, scope)
        if owner is not None:
            method = self.methods.get(owner, {}).get(func.attr)
            return [(method, True)] if method is not None else []
        return [(method, True) for method in self._by_method.get(func.attr, [])[:_MAX_CANDIDATES]]

    def function(self, scope: int) -> FunctionScope | None:
        """The function or lambda whose scope id is `scope`."""
        return self.functions.get(scope)

    # --- the walk ---------------------------------------------------------------------------

    def _enter(self, node: ast.AST, scope: int) -> int:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner = id(node)
            args = node.args
            params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            vararg = args.vararg.arg if args.vararg else None
            kwarg = args.kwarg.arg if args.kwarg else None
            positional = [*args.posonlyargs, *args.args]
            defaults = {
                a.arg: d for a, d in zip(positional[::-1], args.defaults[::-1], strict=False)
            }
            defaults.update(
                {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d}
            )
            parent_scope = self.scopes[scope]
            owner = None
            if parent_scope.kind == "class":
                owner = self._class_names.get(scope)
            name = node.name if not isinstance(node, ast.Lambda) else ""
            self.functions[inner] = FunctionScope(
                node, scope, params, vararg, kwarg, defaults, owner, name, len(positional)
            )
            local = {*params, *(n for n in (vararg, kwarg) if n)}
            self.scopes[inner] = _Scope(scope, "function", local)
            if name:
                parent_scope.names.add(name)
                self.defined.setdefault(("n", scope, name), []).append(inner)
                if owner is not None:
                    self.methods.setdefault(owner, {})[name] = inner
                    self._by_method.setdefault(name, []).append(inner)
            return inner
        if isinstance(node, ast.ClassDef):
            inner = id(node)
            self.scopes[inner] = _Scope(scope, "class")
            self._class_names[inner] = node.name
            self.scopes[scope].names.add(node.name)
            self.classes[("n", scope, node.name)] = node.name
            self.methods.setdefault(node.name, {})
            return inner
        info = self.scopes[scope]
        if isinstance(node, ast.Global | ast.Nonlocal):
            info.globals.update(node.names if isinstance(node, ast.Global) else ())
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            info.names.add(node.id)
        elif isinstance(node, ast.alias):
            info.names.add((node.asname or node.name).split(".")[0])
        return scope

    def _flows(self, node: ast.AST, scope: int) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._store(target, node.value, scope)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            self._store(node.target, node.value, scope)
            target = node.target
            if (
                isinstance(node, ast.AugAssign)
                and isinstance(node.op, ast.BitXor)
                and isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
            ):  # data[i] ^= KEY: the bytes decoded in place
                self.xored.append(self.resolve(target.value.id, scope))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            self._store(node.target, node.iter, scope)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._store(node.optional_vars, node.context_expr, scope)
        elif isinstance(node, ast.Return | ast.Yield | ast.YieldFrom) and node.value:
            function = self._enclosing_function(scope)
            if function is not None:
                self.flows.append(Flow(("r", function), node.value, scope))
        elif isinstance(node, ast.Lambda):
            self.flows.append(Flow(("r", id(node)), node.body, id(node)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CONTAINER_METHODS
        ):
            for argument in node.args:
                self._store(node.func.value, argument, scope)

    def _store(self, target: ast.AST, value: ast.expr, scope: int) -> None:
        if isinstance(target, ast.Name):
            var = self.resolve(target.id, scope)
            self.flows.append(Flow(var, value, scope))
            if isinstance(value, ast.Lambda):
                self.defined.setdefault(var, []).append(id(value))
            elif isinstance(value, ast.Name):
                source = self.resolve(value.id, scope)
                self.defined.setdefault(var, []).extend(self.defined.get(source, [])[:4])
                if source in self.classes:
                    self.classes.setdefault(var, self.classes[source])
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                cls = self.classes.get(self.resolve(value.func.id, scope))
                if cls is not None:  # tool = Tool(): tool.run() is Tool.run
                    self._instances[var] = cls
            elif isinstance(value, ast.Attribute):
                cls = self._class_of(value.value, scope)
                method = self.methods.get(cls, {}).get(value.attr) if cls else None
                if method is not None:
                    self._bound_methods[var] = method
        elif isinstance(target, ast.Tuple | ast.List | ast.Starred):
            elements = target.elts if not isinstance(target, ast.Starred) else [target.value]
            for element in elements:
                self._store(element, value, scope)
        elif isinstance(target, ast.Attribute):
            self.flows.append(Flow(("a", target.attr), value, scope))
            if isinstance(value, ast.Lambda):
                self.defined.setdefault(("a", target.attr), []).append(id(value))
        elif isinstance(target, ast.Subscript):
            self._store(target.value, value, scope)

    def _class_of(self, node: ast.expr, scope: int) -> str | None:
        """The module's class an object is an instance of (``self``, ``Tool()``, a name
        assigned ``Tool()``), or None."""
        if isinstance(node, ast.Name):
            if node.id in ("self", "cls"):
                function = self.functions.get(self._enclosing_function(scope) or 0)
                return function.owner if function else None
            var = self.resolve(node.id, scope)
            return self._instances.get(var) or self.classes.get(var)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.classes.get(self.resolve(node.func.id, scope))
        return None

    def _enclosing_function(self, scope: int) -> int | None:
        current: int | None = scope
        for _ in range(_SCOPE_DEPTH):
            if current is None:
                return None
            if current in self.functions:
                return current
            current = self.scopes[current].parent
        return None
