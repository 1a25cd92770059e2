"""Functions that forward their parameters to a sink: :class:`Wrapper` and :class:`Wrappers`.

``run = lambda *a, **k: subprocess.run(*a, **k)``, a method ``def run(self, cmd): return
os.system(cmd)``, a helper in another module of the skill: a call of such a wrapper is read
as a call of what it wraps with the caller's arguments, so ``run(cmd, shell=True)``, a
decoded payload handed to ``helper.execute(...)`` or a credential path passed in are judged
exactly as the direct call would be.

A function that calls one of its parameters (``def boot(run, blob): run(decode(blob))``)
wraps whatever its caller hands it: the template's callee is the parameter, bound at each
call site to the caller's argument (``boot(exec, BLOB)``), and the function's locals derived
from its parameters are written out in the call (``text = decode(blob); run(text)``).

A wrapper's :class:`Template` is the wrapped call made self-contained in the wrapper's own
module: the callee resolved to its qualified name, the parameters kept as names, every other
piece folded to a constant, an import's name made qualified, or replaced by a placeholder
(unknown). So a summary can cross modules (``_package``) and :meth:`Wrappers.inline` only
substitutes the caller's argument expressions into it. Wrappers of wrappers are expanded
at most :data:`_DEPTH` deep; each function keeps at most :data:`_TEMPLATES` templates.
Made by ``ModuleAnalysis``; read by ``PythonScan`` for every call of the module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._scopes import FunctionScope, Scopes
from skillweave.skills.scan._python._taint import Labels, Taint
from skillweave.skills.scan._python._values import Values

__all__ = ["PLACEHOLDER", "Template", "Wrapper", "Wrappers"]

PLACEHOLDER: Final = "__wrapped__"
"""The name standing for a piece of a wrapped call that is not known at the call site."""
_DEPTH: Final = 3
_TEMPLATES: Final = 8
_PIECE_NODES: Final = 64
_LOCALS: Final = 32
"""The statements of a function read for locals derived from its parameters."""


@dataclass(frozen=True, slots=True)
class Template:
    """One wrapped call: `callee` (qualified) and the call, parameters left as names."""

    callee: str
    call: ast.Call
    dropped: bool = False
    """Whether the wrapped call's result is thrown away (``compile()`` only checking
    syntax)."""
    by_parameter: bool = False
    """Whether `callee` is a parameter: the function calls what its caller hands it
    (``def prelude(runner, seed): runner(decode(seed))``)."""


@dataclass(slots=True)
class Wrapper:
    """A function's parameters, the calls it forwards them to and what it returns."""

    params: list[str]
    vararg: str | None
    kwarg: str | None
    defaults: dict[str, ast.expr]
    templates: list[Template] = field(default_factory=list)
    returns: Labels = field(default_factory=dict)
    positional: int | None = None
    """How many of `params` take arguments by position (keyword-only ones follow)."""


class Wrappers:
    """The module's wrappers, and calls of them (or of another module's) read as the call
    they wrap.

    Args:
        index: the module's index.
        values: resolves callees and folds constants.
        scopes: the module's functions.
        taint: says which calls reach the module's own functions.
    """

    def __init__(self, index: ModuleIndex, values: Values, scopes: Scopes, taint: Taint) -> None:
        self.index = index
        self.values = values
        self.scopes = scopes
        self.taint = taint
        self._wrappers: dict[int, Wrapper] = {}
        self._busy: set[int] = set()
        self._calls_in: dict[int, list[ast.Call]] | None = None
        self._made: list[ast.Call] = []
        """Every call made here, kept alive: folds and targets are remembered by node id."""
        self._dropped: set[int] = set()

    def of(self, function: int, depth: int = 0) -> Wrapper | None:
        """The summary of the module's function or lambda whose scope id is `function`."""
        if function in self._wrappers:
            return self._wrappers[function]
        scope = self.scopes.function(function)
        if scope is None or function in self._busy or depth > _DEPTH:
            return None
        self._busy.add(function)
        try:
            wrapper = self._summarise(function, scope, depth)
        finally:
            self._busy.discard(function)
        self._wrappers[function] = wrapper
        return wrapper

    def exported(self) -> dict[str, Wrapper]:
        """The module's functions, lambdas and methods by the name another module uses:
        ``run_it``, ``Tool.run``."""
        found: dict[str, Wrapper] = {}
        module = self.scopes.module
        for var, functions in self.scopes.defined.items():
            if var[0] == "n" and var[1] == module and functions:
                wrapper = self.of(functions[0])
                if wrapper is not None:
                    found[var[2]] = wrapper
        for owner, methods in self.scopes.methods.items():
            for name, function in methods.items():
                wrapper = self.of(function)
                if wrapper is not None:
                    found[f"{owner}.{name}"] = wrapper
        return found

    def calls(self, call: ast.Call) -> list[tuple[Wrapper, bool]]:
        """The module's wrappers `call` reaches, with whether the first parameter is bound."""
        scope = self.scopes.scope_of(call)
        found = []
        for target, bound in self.taint.local_targets(call, scope):
            wrapper = self.of(target)
            if wrapper is not None and wrapper.templates:
                found.append((wrapper, bound))
        return found

    def inline(self, call: ast.Call, wrapper: Wrapper, *, bound: bool) -> list[ast.Call]:
        """`call` of `wrapper` read as the calls it wraps, with `call`'s arguments."""
        binding = _Binding(call, wrapper, bound=bound)
        made = []
        for template in wrapper.templates:
            inlined = binding.apply(template)
            ast.copy_location(inlined, call)
            made.append(inlined)
            if template.dropped:
                self._dropped.add(id(inlined))
        self._made.extend(made)
        return made

    def drops(self, call: ast.Call) -> bool:
        """Whether `call`, made by :meth:`inline`, stands for a wrapped call whose result
        is thrown away."""
        return id(call) in self._dropped

    # --- summaries --------------------------------------------------------------------------

    def _summarise(self, function: int, scope: FunctionScope, depth: int) -> Wrapper:
        names = {*scope.params, *(n for n in (scope.vararg, scope.kwarg) if n)}
        wrapper = Wrapper(
            scope.params,
            scope.vararg,
            scope.kwarg,
            {k: self._piece(v, names) for k, v in scope.defaults.items()},
            returns=dict(self.taint.vars.get(("r", function), {})),
            positional=scope.positional,
        )
        locals_ = _derived_locals(scope.node, names)
        for found in self._calls_of(function):
            if len(wrapper.templates) >= _TEMPLATES:
                break
            call = found
            if not _mentions(call, names):
                continue
            if isinstance(call.func, ast.Name) and call.func.id in names:
                if locals_ and _mentions(found, set(locals_)):
                    call = self._with_locals(found, locals_)
                template = self._template(call, call.func, names, dropped=False)
                if template is not None:
                    wrapper.templates.append(
                        Template(template.callee, template.call, by_parameter=True)
                    )
                continue
            inner = [w for w in self._local_wrappers(call, depth) if w[0].templates]
            if inner:
                for callee, bound in inner:
                    for inlined in self.inline(call, callee, bound=bound):
                        template = self._template(inlined, inlined.func, names,
                                                  dropped=self.drops(inlined))  # fmt: skip
                        if template is not None and _mentions(template.call, names):
                            wrapper.templates.append(template)
                continue
            name = self.values.qualname(call.func)
            if name and not self.taint.local_targets(call, self.scopes.scope_of(call)):
                template = self._template(call, None, names,
                                          dropped=self.index.result_dropped(call))  # fmt: skip
                if template is not None:
                    wrapper.templates.append(template)
        return wrapper

    def _with_locals(self, call: ast.Call, locals_: dict[str, ast.expr]) -> ast.Call:
        """`call` with the function's locals derived from its parameters written out
        (``text = decode(seed)``; ``runner(text)`` is ``runner(decode(seed))``)."""
        made = _Inline(locals_).visit(_clone(call))
        assert isinstance(made, ast.Call)
        self._made.append(made)
        return made

    def _local_wrappers(self, call: ast.Call, depth: int) -> list[tuple[Wrapper, bool]]:
        found = []
        for target, bound in self.taint.local_targets(call, self.scopes.scope_of(call)):
            wrapper = self.of(target, depth + 1)
            if wrapper is not None:
                found.append((wrapper, bound))
        return found

    def _calls_of(self, function: int) -> list[ast.Call]:
        if self._calls_in is None:
            self._calls_in = {}
            for call in self.index.calls:
                self._calls_in.setdefault(self.scopes.scope_of(call), []).append(call)
        return self._calls_in.get(function, [])

    def _template(
        self, call: ast.Call, func: ast.expr | None, names: set[str], *, dropped: bool
    ) -> Template | None:
        callee = (
            func.id
            if isinstance(func, ast.Name)
            else self.values.qualname(call.func)
            if func is None
            else None
        )
        if not callee:
            return None
        made = ast.Call(
            func=ast.Name(callee, ast.Load()),
            args=[self._piece(a, names) for a in call.args],
            keywords=[ast.keyword(k.arg, self._piece(k.value, names)) for k in call.keywords],
        )
        return Template(callee, made, dropped)

    def _piece(self, node: ast.expr, names: set[str]) -> ast.expr:
        """`node` made self-contained: parameters kept, the rest folded or qualified."""
        if isinstance(node, ast.Starred):
            return ast.Starred(self._piece(node.value, names), ast.Load())
        if isinstance(node, ast.Name) and node.id in names:
            return ast.Name(node.id, ast.Load())
        if not _mentions(node, names):
            return self._closed(node)
        if sum(1 for _ in ast.walk(node)) > _PIECE_NODES:
            return ast.Name(PLACEHOLDER, ast.Load())
        return _Closer(self, names).visit(_clone(node))

    def _closed(self, node: ast.expr) -> ast.expr:
        value = self.values.folder.fold(node)
        if isinstance(value, str | bytes | int | bool) or (
            value is None and isinstance(node, ast.Constant)
        ):
            return ast.Constant(value)
        name = self.values.qualname(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if name and name.split(".", 1)[0] in {*self.index.aliases.values(), "builtins", "os"}:
            return ast.Name(name, ast.Load())
        return ast.Name(PLACEHOLDER, ast.Load())


class _Closer(ast.NodeTransformer):
    """Within a piece that mentions parameters: every other name made self-contained."""

    def __init__(self, wrappers: Wrappers, names: set[str]) -> None:
        self.wrappers = wrappers
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return node if node.id in self.names else self.wrappers._closed(node)


class _Binding:
    """The caller's arguments bound to a wrapper's parameters."""

    def __init__(self, call: ast.Call, wrapper: Wrapper, *, bound: bool) -> None:
        positional = wrapper.params[: wrapper.positional]
        params = positional[1:] if bound else list(positional)
        self.values: dict[str, ast.expr] = dict(wrapper.defaults)
        self.extra: list[ast.expr] = []
        self.extra_keywords: list[ast.keyword] = []
        self.vararg = wrapper.vararg
        self.kwarg = wrapper.kwarg
        for position, argument in enumerate(call.args):
            if position < len(params) and not isinstance(argument, ast.Starred):
                self.values[params[position]] = argument
            else:
                self.extra.append(argument)
        for keyword in call.keywords:
            if keyword.arg in wrapper.params:
                self.values[keyword.arg] = keyword.value
            else:
                self.extra_keywords.append(keyword)

    def apply(self, template: Template) -> ast.Call:
        args: list[ast.expr] = []
        for argument in template.call.args:
            if (
                isinstance(argument, ast.Starred)
                and isinstance(argument.value, ast.Name)
                and argument.value.id == self.vararg
            ):
                args.extend(self.extra)
            else:
                args.append(self._substituted(argument))
        keywords: list[ast.keyword] = []
        for keyword in template.call.keywords:
            value = keyword.value
            if keyword.arg is None and isinstance(value, ast.Name) and value.id == self.kwarg:
                keywords.extend(self.extra_keywords)
                continue
            keywords.append(ast.keyword(keyword.arg, self._substituted(keyword.value)))
        func = (
            self._value(template.callee)
            if template.by_parameter
            else ast.Name(template.callee, ast.Load())
        )
        return ast.Call(func=func, args=args, keywords=keywords)

    def _substituted(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Name):
            return self._value(node.id) if node.id not in ("", PLACEHOLDER) else node
        return _Substitute(self).visit(_clone(node))

    def _value(self, name: str) -> ast.expr:
        if name == self.vararg:
            return ast.List(elts=list(self.extra), ctx=ast.Load())
        if name == self.kwarg:
            return ast.Dict(keys=[ast.Constant(k.arg) for k in self.extra_keywords],
                            values=[k.value for k in self.extra_keywords])  # fmt: skip
        return self.values.get(name) or ast.Name(name, ast.Load())


class _Substitute(ast.NodeTransformer):
    def __init__(self, binding: _Binding) -> None:
        self.binding = binding

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == PLACEHOLDER or "." in node.id:
            return node
        return self.binding._value(node.id)


class _Inline(ast.NodeTransformer):
    def __init__(self, locals_: dict[str, ast.expr]) -> None:
        self.locals = locals_

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.locals.get(node.id)
        return _clone(value) if value is not None else node


def _derived_locals(function: ast.AST, names: set[str]) -> dict[str, ast.expr]:
    """A function's names assigned once, in its own body, from its parameters (or from
    such names), written out in terms of the parameters; bounded by :data:`_LOCALS` and
    :data:`_PIECE_NODES`."""
    body = getattr(function, "body", None)
    if not isinstance(body, list):
        return {}
    found: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for statement in body[:_LOCALS]:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if target.id in seen:
            found.pop(target.id, None)  # assigned twice: not one value
            continue
        seen.add(target.id)
        if not _mentions(statement.value, names | set(found)):
            continue
        value = _Inline(found).visit(_clone(statement.value))
        if isinstance(value, ast.expr) and sum(1 for _ in ast.walk(value)) <= _PIECE_NODES:
            found[target.id] = value
    return found


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _clone(node: ast.AST) -> ast.AST:
    """A copy of a small tree's nodes (leaves and contexts shared): what a substitution
    changes must not be the module's own tree."""
    if isinstance(node, ast.expr_context):
        return node
    clone = type(node)()
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            setattr(clone, name, _clone(value))
        elif isinstance(value, list):
            setattr(clone, name, [_clone(v) if isinstance(v, ast.AST) else v for v in value])
        else:
            setattr(clone, name, value)
    for name in node._attributes:
        if hasattr(node, name):
            setattr(clone, name, getattr(node, name))
    return clone
