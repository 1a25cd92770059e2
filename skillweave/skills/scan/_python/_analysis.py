"""One Python module analysed before any rule runs: :class:`ModuleAnalysis`.

Builds, in order, the module's index (``_index``: one walk; a second when ``_unwrap``
rewrote indirect calls as direct ones), its values (``_values``, with
constant folding), its scopes and flows (``_scopes``), the labels of its variables
(``_taint``, propagated to a fixed point) and its wrappers (``_wrappers``). ``_package``
makes one per module of the skill first, so the summaries of every module exist before the
rules of any run; ``PythonScan`` then reads it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._scopes import Scopes
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._unwrap import Unwrapped, unwrap
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._python._wrappers import Wrapper, Wrappers

__all__ = ["ModuleAnalysis", "pass_through"]

_MAX_FACTORY_CALLS: Final = 2000
"""Names per module read as bound to another module's factory's product, at most."""
_IMPORTERS: Final = frozenset({"__import__", "builtins.__import__", "importlib.import_module"})
_MODULE_NAME: Final = re.compile(r"[A-Za-z_][\w]{0,60}(?:\.[A-Za-z_]\w{0,60}){0,5}")
_PASS_THROUGH: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "getattr",
     "builtins.getattr"}
)  # fmt: skip


class ModuleAnalysis:
    """The index, values, flows, labels and wrappers of one parsed module.

    Args:
        tree: the parsed module.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.index, self.values = self._indexed(tree)
        self.unwrapped: dict[int, Unwrapped]
        """Indirect calls rewritten as direct ones (``_unwrap``), by the new node's id."""
        self.unwrapped, self._made = unwrap(self.index, self.values)
        if self.unwrapped:  # the tree changed: index it again
            self.index, self.values = self._indexed(tree)
        self.scopes = Scopes(tree)
        self.scopes.build(self.index.order, self.index.parents)
        self.taint = Taint(self.index, self.values, self.scopes)
        self.taint.propagate()
        self.wrappers = Wrappers(self.index, self.values, self.scopes, self.taint)
        self._pass_through_aliases()
        self._module_proxies()

    def _indexed(self, tree: ast.Module) -> tuple[ModuleIndex, Values]:
        self.index = ModuleIndex(tree)
        self.values = Values(self.index)
        self.index.build(self.values.qualname)
        self.values.forget()  # folds made while the walk was still collecting names
        self.alias({})  # names assigned before what they resolve through was walked
        return self.index, self.values

    def _pass_through_aliases(self) -> None:
        """A module-level function or lambda that only forwards to ``__import__`` or
        ``getattr`` (``imp = lambda *a: __import__(*a)``) resolves as they do; names then
        assigned through it (``run = getattr(imp("os"), "system")``) become aliases too."""
        module = self.scopes.module
        found: dict[str, str] = {}
        for var, functions in self.scopes.defined.items():
            if var[0] != "n" or var[1] != module or var[2] in self.index.aliases:
                continue
            wrapper = self.wrappers.of(functions[0]) if functions else None
            callee = pass_through(wrapper) if wrapper is not None else None
            if callee is not None:
                found[var[2]] = callee
        self.alias(found)

    def _module_proxies(self) -> None:
        """A class whose ``__getattr__`` imports a module (``importlib.import_module``,
        ``__import__``) is a lazy module: a name bound once to an instance of it made with
        a module's name that folds (``os = Lazy("nr".translate(T))``) is that module, or its
        top package when a second argument says so (``Lazy("os.path", False)``)."""
        proxies = {c.name for c in self.tree.body if isinstance(c, ast.ClassDef) and
                   self._imports_on_lookup(c)}  # fmt: skip
        if not proxies:
            return
        found: dict[str, str] = {}
        for name, values in list(self.index.assigned.items())[:_MAX_FACTORY_CALLS]:
            value = values[0] if len(values) == 1 else None
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                continue
            if value.func.id not in proxies or not value.args or name in self.index.aliases:
                continue
            spec = self.values.folder.fold(value.args[0])
            if isinstance(spec, str) and _MODULE_NAME.fullmatch(spec):
                whole = self.values.folder.fold(value.args[1]) if len(value.args) > 1 else True
                found[name] = spec if whole is not False else spec.split(".")[0]
        if found:
            self.index.assigned_aliases.update(found)
            self.alias(found)

    def _imports_on_lookup(self, cls: ast.ClassDef) -> bool:
        for method in cls.body:
            if isinstance(method, ast.FunctionDef) and method.name == "__getattr__":
                return any(
                    isinstance(n, ast.Call) and self.values.qualname(n.func) in _IMPORTERS
                    for n in ast.walk(method)
                )
        return False

    def imported_aliases(self, exported: Mapping[str, str]) -> None:
        """Names other modules of the skill bind to imported callables (``helpers.runner``
        → ``os.system``, from ``runner = os.system`` there) resolve as those callables here,
        imported by name or reached as ``helpers.runner``."""
        if not exported:
            return
        self.values.external_aliases = exported
        for name, target in list(self.index.aliases.items()):
            if target in exported:
                self.index.aliases[name] = exported[target]
                self.index.assigned_aliases.add(name)
        self.alias({})

    def imported_pass_throughs(self, exported: Callable[[str], Wrapper | None]) -> None:
        """Functions of another module of the skill (`exported` finds one by qualified name,
        ``helpers.load``) that only forward to ``__import__`` or ``getattr`` resolve as they
        do (``from helpers import load; getattr(load("os"), "system")``, also as
        ``helpers.load("os")``); names assigned through them become aliases."""
        cache: dict[str, str | None] = {}

        def forwarding(name: str) -> str | None:
            if name not in cache:
                wrapper = exported(name) if "." in name else None
                cache[name] = pass_through(wrapper) if wrapper is not None else None
            return cache[name]

        self.values.forwarding = forwarding
        self.alias({})

    def imported_factories(self, product: Callable[[str, list[str | None]], str | None]) -> None:
        """Names bound once to what another module's factory hands back (``run =
        helpers.bind(exec)``, ``run = make()``): `product` says which callable that is, from
        the factory's qualified name and the dotted names of the arguments given here."""
        found: dict[str, str] = {}
        for name, values in list(self.index.assigned.items())[:_MAX_FACTORY_CALLS]:
            value = values[0] if len(values) == 1 else None
            if name in self.index.aliases or not isinstance(value, ast.Call) or value.keywords:
                continue
            factory = self.values.qualname(value.func) or ""
            if "." not in factory or any(isinstance(a, ast.Starred) for a in value.args):
                continue
            made = product(factory, [self.values.qualname(a) for a in value.args])
            if made is not None:
                found[name] = made
        if found:
            self.index.assigned_aliases.update(found)
            self.alias(found)

    def alias(self, found: Mapping[str, str]) -> None:
        """Make each name in `found` an alias of its callee, then resolve again the names
        assigned through them."""
        self.index.aliases.update(found)
        self.values.forget()
        for name, values in self.index.assigned.items():
            if name not in self.index.aliases and len(values) == 1:
                resolved = self.values.qualname(values[0])
                if resolved:
                    self.index.aliases[name] = resolved
                    self.index.assigned_aliases.add(name)


def pass_through(wrapper: Wrapper) -> str | None:
    """``__import__`` or ``getattr`` when `wrapper` only forwards its parameters to one of
    them, as they come; None otherwise."""
    if len(wrapper.templates) != 1:
        return None
    template = wrapper.templates[0]
    if template.callee in _PASS_THROUGH and _forwards(template.call, wrapper):
        return template.callee
    return None


def _forwards(call: ast.Call, wrapper: Wrapper) -> bool:
    """The wrapped call takes the wrapper's parameters as they come, in order."""
    names = [
        a.value.id if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) else
        a.id if isinstance(a, ast.Name) else None
        for a in call.args
    ]  # fmt: skip
    positional = wrapper.params[: wrapper.positional]
    expected = [*positional, *([wrapper.vararg] if wrapper.vararg else [])]
    return bool(names) and names == expected[: len(names)]
