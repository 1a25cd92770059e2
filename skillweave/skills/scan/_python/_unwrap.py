"""Indirect calls rewritten as the direct calls they make: :func:`unwrap`.

A callable can be reached without ever being called by its name:

- through the ``operator`` and ``functools`` modules: ``operator.attrgetter("system")(os)``
  is ``os.system``, ``operator.methodcaller("system", cmd)(os)`` is ``os.system(cmd)``,
  ``operator.itemgetter("exec")(vars(builtins))`` is ``vars(builtins)["exec"]``,
  ``functools.partial(subprocess.run, shell=True)(cmd)`` is ``subprocess.run(cmd,
  shell=True)``, also when the getter is first stored in a name (``hook =
  operator.attrgetter(name)``; ``hook(module)``) and its name is built from pieces;
- bound as a parameter's default value: ``def _do(*a, _f=os.system, **k): return _f(*a,
  **k)``, ``lambda x, _e=exec: _e(x)``, a method ``def run(self, code, _x=exec)``, a default
  lambda ``resolve=lambda n: vars(builtins)[n]`` called as ``resolve("eval")``;
- returned by a decorator factory that hands back its argument (``def via(f): return lambda
  _: f``; ``@via(os.system) def run(): ...`` makes ``run`` be ``os.system``);
- stored as a class attribute (``runner = subprocess.run`` or ``staticmethod(os.system)``
  in a class body, or ``self.runner = vars(builtins)[name]`` looked up, called as
  ``self.runner(cmd)``), or in a table literal (``ACTIONS =
  {"sh": os.system}``; ``ACTIONS["s" + "h"](cmd)``, ``ACTIONS.get("sh")(cmd)``), also
  stored by key once after an empty literal and as a ``functools.partial`` (``SINKS = {}``;
  ``SINKS[0] = partial(exec)``);
- returned by a factory, itself or as a forwarding lambda or inner ``def`` closing over it
  (``_closures``: ``def _mk(): m = __import__("os"); return lambda *a: m.system(*a)``);
- returned by a lambda without parameters (``pick = lambda: os.popen``; ``pick()(cmd)``),
  unpacked from a tuple (``a, run = print, os.system``), set on ``self`` or with
  ``setattr``, called through ``__call__`` or ``operator.call``, or constructed through a
  subclass that adds no constructor (``class P(subprocess.Popen): pass``);
- handed to what calls it with the arguments beside it: ``executor.submit(os.system,
  cmd)``, ``Thread(target=os.system, args=(cmd,))``, ``atexit.register(exec, code)``,
  ``map(os.system, cmds)``, ``loop.run_in_executor(None, os.system, cmd)``, and
  ``functools.reduce(getattr, ["sys" + "tem"], os)`` (a lookup).

Each form is rewritten in the module's tree to the direct form (an attribute, a subscript,
a call, an assignment ``run = os.system``), so every rule, the taint and the wrappers judge
the call exactly as if it were written plainly; the rewritten nodes are remembered
(:class:`Unwrapped`) so a lookup by name is still reported as one, and the call is known to
be out of bandit's sight. Every rewrite is bounded (:data:`_MAX_REWRITES`, nodes cloned at
most :data:`_CLONE_NODES`). Called by ``ModuleAnalysis``, which indexes the module again
when anything was rewritten.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Final

from skillweave.skills.scan._python._closures import dotted, factory_product
from skillweave.skills.scan._python._flow import dangerous
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._values import Values

__all__ = ["GETTERS", "Unwrapped", "unwrap"]

GETTERS: Final = frozenset(
    {"operator.attrgetter", "operator.itemgetter", "operator.methodcaller", "functools.partial"}
)
"""Callables that return another callable bound to a name or to arguments."""
_LOOKUPS: Final = frozenset({"operator.attrgetter", "operator.itemgetter", "operator.methodcaller"})
_BUILTIN_CALLABLES: Final = frozenset(
    {"exec", "eval", "compile", "open", "__import__", "getattr", "execfile", "vars"}
)
_HANDS: Final = frozenset({"submit", "register", "call_soon", "call_soon_threadsafe",
                           "callback", "push"})  # fmt: skip
"""Methods that call their first argument with the rest (``executor.submit(f, *a)``,
``atexit.register``, ``loop.call_soon``, ``ExitStack.callback``)."""
_MAPS: Final = frozenset({"map", "imap", "imap_unordered", "starmap", "map_async"})
_STARTERS: Final = frozenset({"Thread", "Process", "Timer"})
_MAX_REWRITES: Final = 500
_CLONE_NODES: Final = 64
_BODY_NODES: Final = 50_000
"""Nodes of function bodies walked for calls of a default, per module, at most."""


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """A rewritten node: `how` it was reached and whether it looked a name up by a string
    (`lookup`) built from pieces (`built`)."""

    how: str
    lookup: bool = False
    built: bool = False


def unwrap(index: ModuleIndex, values: Values) -> tuple[dict[int, Unwrapped], list[ast.AST]]:
    """Rewrite the indirect calls of the module `index` walked, in place: the new nodes by
    id (empty when nothing was rewritten), and the nodes themselves, which the caller keeps
    alive for as long as it reads the ids (a node a later rewrite detached must not lend
    its id to another)."""
    made: dict[int, Unwrapped] = {}
    keep: list[ast.AST] = []
    _Calls(index, values, made, keep).run()
    _Definitions(index, values, made, keep).run()
    return made, keep


class _Tree:
    """The module's tree, rewritten in place: what every rewrite shares."""

    def __init__(
        self,
        index: ModuleIndex,
        values: Values,
        made: dict[int, Unwrapped],
        keep: list[ast.AST],
    ) -> None:
        self.index = index
        self.values = values
        self.parents = index.parents
        self.made = made
        self.keep = keep  # new nodes stay alive: they are known by id

    def _callable(self, node: ast.expr) -> bool:
        """A default that is a module's callable or a dangerous builtin (not ``len``)."""
        if isinstance(node, ast.Lambda):
            return True
        if not isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
            return False
        name = self.values.qualname(node)
        return bool(name) and ("." in name or name in _BUILTIN_CALLABLES)  # type: ignore[operator]

    def _bind_name(self, statement: ast.stmt, name: str, value: ast.expr, how: Unwrapped) -> None:
        """``name = value`` inserted after `statement` in its block."""
        parent = self.parents.get(id(statement))
        body = getattr(parent, "body", None)
        if not isinstance(body, list):
            return
        position = next((i for i, s in enumerate(body) if s is statement), None)
        if position is None:
            return
        assign = ast.Assign([ast.Name(name, ast.Store())], value)
        ast.copy_location(assign, statement)
        ast.fix_missing_locations(assign)
        body.insert(position + 1, assign)
        self.keep.append(assign)
        self.made[id(assign.value)] = how

    # --- the tree ---------------------------------------------------------------------------

    def _replace(self, old: ast.expr, new: ast.expr, record: Unwrapped) -> None:
        parent = self.parents.get(id(old))
        if parent is None:
            return
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                break
            if isinstance(value, list) and any(v is old for v in value):
                value[next(i for i, v in enumerate(value) if v is old)] = new
                break
        else:
            return
        ast.copy_location(new, old)
        ast.fix_missing_locations(new)
        self._adopt(new, parent)
        self.keep.append(new)
        self.made[id(new)] = record

    def _adopt(self, node: ast.AST, parent: ast.AST) -> None:
        """The new node's parent, and its children's (the new nodes a chain is made of)."""
        self.parents[id(node)] = parent
        todo = [node]
        for _ in range(_CLONE_NODES):
            if not todo:
                return
            current = todo.pop()
            for child in ast.iter_child_nodes(current):
                if self.parents.get(id(child)) is not current:
                    self.parents[id(child)] = current
                    if isinstance(child, ast.Attribute | ast.Call):
                        todo.append(child)


class _Calls(_Tree):
    """Calls through ``operator``/``functools``, tables and callers of callables."""

    def run(self) -> None:
        for call in list(self.index.calls):
            if len(self.made) >= _MAX_REWRITES:
                break
            self._getter_call(call)
            self._factory(call)
            self._dispatched(call)
            self._handed(call)
            self._namespace_get(call)

    # --- operator and functools -------------------------------------------------------------

    def _getter(self, func: ast.expr) -> tuple[str, ast.Call] | None:
        """(the getter's name, its call) when `func` is one (or a name assigned one once)."""
        if isinstance(func, ast.Name) and func.id not in self.index.aliases:
            assigned = self.index.assigned.get(func.id) or []
            func = assigned[0] if len(assigned) == 1 else func
        if not isinstance(func, ast.Call) or not func.args:
            return None
        name = self.values.qualname(func.func)
        return (name, func) if name in GETTERS else None

    def _getter_call(self, call: ast.Call) -> None:
        found = self._getter(call.func)
        if found is None:
            return
        how, getter = found
        first = getter.args[0]
        new: ast.expr | None = None
        if how == "functools.partial":
            if any(isinstance(a, ast.Starred) for a in getter.args[:1]):
                return
            new = ast.Call(first, [*getter.args[1:], *call.args],
                           [*getter.keywords, *call.keywords])  # fmt: skip
        elif len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return
        elif how == "operator.attrgetter" and len(getter.args) == 1:
            name = self.values.name(first)
            if name is None:
                return
            new = call.args[0]
            for part in name.split("."):
                new = ast.Attribute(new, part, ast.Load())
        elif how == "operator.itemgetter" and len(getter.args) == 1:
            new = ast.Subscript(call.args[0], first, ast.Load())
        elif how == "operator.methodcaller":
            name = self.values.name(first)
            if name is None or "." in name:
                return
            new = ast.Call(ast.Attribute(call.args[0], name, ast.Load()), getter.args[1:],
                           getter.keywords)  # fmt: skip
        if new is None:
            return
        built = how in _LOOKUPS and not isinstance(first, ast.Constant)
        self._replace(call, new, Unwrapped(how, lookup=how in _LOOKUPS, built=built))

    def _namespace_get(self, call: ast.Call) -> None:
        """``builtins.__dict__.get("exec")``, ``vars(builtins).get(name)``,
        ``sys.modules.get("os")``: the namespace's lookup written as a subscript."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "get" and call.args):
            return
        if isinstance(call.args[0], ast.Starred):
            return
        new = ast.Subscript(func.value, call.args[0], ast.Load())
        ast.copy_location(new, call)
        if self.values.subscripted(new) is not None:
            self._replace(call, new, Unwrapped("a namespace's get", lookup=True))

    def _factory(self, call: ast.Call) -> None:
        """``_mk()`` where ``_mk`` returns a callable or a forwarder to it (``_closures``)."""
        name = factory_product(self.index, self.values, call)
        if name is not None:
            self._replace(call, dotted(name), Unwrapped("a factory's closure"))

    def _dispatched(self, call: ast.Call) -> None:
        """``ACTIONS["run"](cmd)`` or ``ACTIONS.get("run")(cmd)``: the callable stored
        (a ``functools.partial`` of one called with its bound arguments first)."""
        found = _table_entry(self.index, self.values, call.func)
        if (
            isinstance(found, ast.Call)
            and self.values.qualname(found.func) == "functools.partial"
            and found.args
            and not any(isinstance(a, ast.Starred) for a in found.args[:1])
            and self._callable(found.args[0])
        ):
            clone = _cloned(found)
            if isinstance(clone, ast.Call):
                new = ast.Call(clone.args[0], [*clone.args[1:], *call.args],
                               [*clone.keywords, *call.keywords])  # fmt: skip
                self._replace(call, new, Unwrapped("a table of callables"))
            return
        if found is not None and self._callable(found) and not isinstance(found, ast.Lambda):
            clone = _cloned(found)
            if clone is not None:
                self._replace(call, ast.Call(clone, call.args, call.keywords),
                              Unwrapped("a table of callables"))  # fmt: skip

    def _handed(self, call: ast.Call) -> None:
        """A callable handed to what calls it with the arguments given beside it:
        ``executor.submit(os.system, cmd)``, ``Thread(target=os.system, args=(cmd,))``,
        ``atexit.register(exec, code)``, ``map(os.system, cmds)``, ``loop.run_in_executor(
        None, os.system, cmd)``, ``functools.reduce(getattr, ["path", "join"], os)``."""
        name = self.values.qualname(call.func) or ""
        last = call.func.attr if isinstance(call.func, ast.Attribute) else name
        args, keywords = call.args, call.keywords
        target: ast.expr | None = None
        passed: list[ast.expr] = []
        if name == "functools.reduce" and len(args) == 3:
            self._reduced(call)
            return
        if last == "__call__" and isinstance(call.func, ast.Attribute):  # os.system.__call__
            target, passed = call.func.value, list(args)
        elif name == "operator.call" and args:
            target, passed = args[0], list(args[1:])
        elif not args and not keywords and (returned := self._returned(call.func)) is not None:
            target = returned  # get = lambda: os.system; get()(cmd) reads os.system
            clone = _cloned(target) if self._callable(target) else None
            if clone is not None:
                self._replace(call, clone, Unwrapped("a lambda returning it"))
            return
        elif last in _HANDS and args and not isinstance(args[0], ast.Starred):
            target, passed = args[0], list(args[1:])
        elif last == "run_in_executor" and len(args) >= 2:
            target, passed, keywords = args[1], list(args[2:]), []
        elif last in _MAPS and len(args) >= 2 and not isinstance(args[0], ast.Starred):
            target, passed, keywords = args[0], [ast.Starred(args[1], ast.Load())], []
        elif last in ("apply", "apply_async") and args:
            passed = [ast.Starred(args[1], ast.Load())] if len(args) > 1 else []
            target, keywords = args[0], []
        elif last in _STARTERS:
            target = next((k.value for k in keywords if k.arg in ("target", "function")), None)
            given = next((k.value for k in keywords if k.arg == "args"), None)
            if last == "Timer" and len(args) >= 2:  # Timer(interval, function, args)
                target, given = args[1], args[2] if len(args) > 2 else given
            passed = [ast.Starred(given, ast.Load())] if given is not None else []
            keywords = []
        if target is None or isinstance(target, ast.Lambda) or not self._callable(target):
            return
        clone = _cloned(target)
        if clone is not None:
            self._replace(call, ast.Call(clone, passed, list(keywords)),
                          Unwrapped(f"a callable handed to {last}"))  # fmt: skip

    def _returned(self, func: ast.expr) -> ast.expr | None:
        """What a lambda without parameters assigned once to the name `func` returns."""
        if not isinstance(func, ast.Name) or func.id in self.index.aliases:
            return None
        assigned = self.index.assigned.get(func.id) or []
        lam = assigned[0] if len(assigned) == 1 else None
        if not isinstance(lam, ast.Lambda) or lam.args.args or lam.args.vararg:
            return None
        return lam.body

    def _reduced(self, call: ast.Call) -> None:
        """``functools.reduce(getattr, ["sys" + "tem"], os)`` is ``os.system``."""
        new = _reduction(self.values, call)
        if new is not None:
            self._replace(call, new, Unwrapped("functools.reduce(getattr)", lookup=True,
                                               built=True))  # fmt: skip


class _Definitions(_Tree):
    """Callables bound where a function or class is defined: defaults, decorators, base
    classes, class attributes."""

    def __init__(
        self,
        index: ModuleIndex,
        values: Values,
        made: dict[int, Unwrapped],
        keep: list[ast.AST],
    ) -> None:
        super().__init__(index, values, made, keep)
        self._walked = 0

    def run(self) -> None:
        for function in self.index.defaulted[:_MAX_REWRITES]:
            self._defaults(function)
        for function in self.index.decorated[:_MAX_REWRITES]:
            self._decorated(function)
        for cls in self.index.subclasses[:_MAX_REWRITES]:
            self._subclass(cls)
        if self.index.class_attributes:
            for call in list(self.index.calls):
                self._class_attribute(call)

    # --- defaults, decorators, class attributes ---------------------------------------------

    def _defaults(self, function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        pairs = [*zip(positional[::-1], args.defaults[::-1], strict=False),
                 *zip(args.kwonlyargs, args.kw_defaults, strict=True)]  # fmt: skip
        defaults = {a.arg: d for a, d in pairs if d is not None and self._callable(d)}
        if not defaults:
            return
        body = function.body if isinstance(function.body, list) else [function.body]
        calls: list[ast.Call] = []
        for node in (n for s in body for n in ast.walk(s)):
            self._walked += 1
            if self._walked > _BODY_NODES:
                return
            if isinstance(node, ast.Name) and node.id in defaults and not _loads(node):
                defaults.pop(node.id)  # rebound in the body: the default is not what runs
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                calls.append(node)
        for call in calls:
            default = defaults.get(call.func.id)  # type: ignore[attr-defined]
            if default is None or len(self.made) >= _MAX_REWRITES:
                continue
            if isinstance(default, ast.Lambda):
                inlined = _inlined(default, call)
                if inlined is not None:
                    self._replace(call, inlined, Unwrapped("a default argument"))
                continue
            clone = _cloned(default)
            if clone is not None:
                new = ast.Call(clone, call.args, call.keywords)
                self._replace(call, new, Unwrapped("a default argument"))

    def _decorated(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """``@via(os.system)`` where ``via`` returns a function that returns its argument:
        the decorated name is ``os.system``."""
        for decorator in function.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Name)
                and len(decorator.args) == 1
                and self._hands_back(decorator.func.id)
                and self._callable(decorator.args[0])
            ):
                self._bind_name(function, function.name, decorator.args[0],
                                Unwrapped("a decorator"))  # fmt: skip
                return

    def _subclass(self, cls: ast.ClassDef) -> None:
        """``class P(subprocess.Popen): pass``: constructing ``P`` is constructing its base
        (one that starts processes, runs or loads code) when ``P`` does not construct on its
        own."""
        base = cls.bases[0]
        name = self.values.qualname(base) or ""
        if dangerous(name) is None or any(
            isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__new__") for s in cls.body
        ):
            return
        self._bind_name(cls, cls.name, base, Unwrapped("a subclass"))

    def _hands_back(self, name: str) -> bool:
        """Whether the module's function `name` returns a function returning its first
        parameter (``return lambda _: f``, or an inner ``def`` that returns ``f``)."""
        defs = self.index.defs.get(name) or []
        returns = self.index.returns.get(name) or []
        if len(defs) != 1 or not defs[0].args.args or not returns:
            return False
        parameter = defs[0].args.args[0].arg
        for value in returns:
            if isinstance(value, ast.Lambda) and _is_name(value.body, parameter):
                continue
            if _is_name(value, parameter):  # the inner def's own return (read with the outer)
                continue
            if isinstance(value, ast.Name):
                inner = self.index.returns.get(value.id) or []
                if inner and all(_is_name(r, parameter) for r in inner):
                    continue
            return False
        return True

    def _class_attribute(self, call: ast.Call) -> None:
        """``self.runner(cmd)`` where a class body says ``runner = subprocess.run``."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        values = self.index.class_attributes.get(func.attr) or []
        if len(values) != 1 or func.value.id in self.index.aliases:  # not a module's
            return
        value = values[0]
        assign = self.parents.get(id(value))
        if isinstance(assign, ast.Assign) and assign.value is not value:
            value = assign.value  # rewritten since the walk (``vars(m).get(k)`` → ``vars(m)[k]``)
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in ("staticmethod", "classmethod")
            and len(value.args) == 1
        ):
            value = value.args[0]
        if not self._attribute_callable(value):
            return
        clone = _cloned(value)
        if clone is not None and len(self.made) < _MAX_REWRITES:
            lookup = isinstance(value, ast.Call | ast.Subscript)
            self._replace(call, ast.Call(clone, call.args, call.keywords),
                          Unwrapped("a class attribute", lookup=lookup))  # fmt: skip

    def _attribute_callable(self, value: ast.expr) -> bool:
        """A callable a class attribute holds: a name of one, or a dangerous one looked up
        (``self._r = vars(builtins)[name]``, ``self._r = getattr(builtins, name)``)."""
        if isinstance(value, ast.Name | ast.Attribute):
            return self._callable(value)
        if isinstance(value, ast.Call | ast.Subscript):
            return dangerous(self.values.qualname(value) or "") is not None
        return False


def _loads(node: ast.Name) -> bool:
    return isinstance(node.ctx, ast.Load)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _cloned(node: ast.expr) -> ast.expr | None:
    """A copy of a small expression; None when it is large."""
    if sum(1 for _ in ast.walk(node)) > _CLONE_NODES:
        return None
    return copy.deepcopy(node)


def _inlined(function: ast.Lambda, call: ast.Call) -> ast.expr | None:
    """A call of a default lambda read as its body with the arguments in place of its
    parameters (positional parameters only)."""
    params = [a.arg for a in function.args.args]
    if (
        function.args.vararg
        or function.args.kwarg
        or call.keywords
        or len(call.args) != len(params)
        or any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return None
    body = _cloned(function.body)
    if body is None:
        return None
    bound = dict(zip(params, call.args, strict=True))

    class _Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            value = bound.get(node.id)
            return copy.deepcopy(value) if value is not None else node

    return _Substitute().visit(body)  # type: ignore[no-any-return]


def _table_entry(index: ModuleIndex, values: Values, func: ast.expr) -> ast.expr | None:
    """What ``TABLE[key]`` or ``TABLE.get(key)`` holds when ``TABLE`` is a dict (or list)
    literal assigned once and the key folds to a constant; None otherwise."""
    if isinstance(func, ast.Subscript):
        table, key = func.value, func.slice
    elif (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Attribute)
        and func.func.attr == "get"
        and func.args
    ):
        table, key = func.func.value, func.args[0]
    else:
        return None
    if not isinstance(table, ast.Name) or table.id in index.aliases:
        return None
    assigned = index.assigned.get(table.id) or []
    if len(assigned) != 1:
        return None
    literal, wanted = assigned[0], values.folder.fold(key)
    if isinstance(literal, ast.Dict) and isinstance(wanted, str | int):
        found = None
        for k, v in zip(literal.keys[:_CLONE_NODES], literal.values, strict=False):
            if k is not None and values.folder.fold(k) == wanted:
                found = v
        stored = [v for k, v in index.stored.get(table.id, [])[:_CLONE_NODES]
                  if values.folder.fold(k) == wanted]  # fmt: skip
        if stored:  # TABLE[key] = value after the literal: only one such store is known
            found = stored[0] if len(stored) == 1 and found is None else None
        return found
    if isinstance(literal, ast.List | ast.Tuple) and isinstance(wanted, int):
        inside = -len(literal.elts) <= wanted < len(literal.elts)
        return literal.elts[wanted] if inside else None
    return None


def _reduction(values: Values, call: ast.Call) -> ast.expr | None:
    """``functools.reduce(getattr, names, obj)`` as the attribute chain, names folded."""
    if values.qualname(call.args[0]) not in ("getattr", "builtins.getattr"):
        return None
    names = values.folder.fold(call.args[1])
    if not isinstance(names, list) or not names or len(names) > 8:
        return None
    if not all(isinstance(n, str) and n.isidentifier() for n in names):
        return None
    new: ast.expr = call.args[2]
    for part in names:
        new = ast.Attribute(new, part, ast.Load())
    return new
