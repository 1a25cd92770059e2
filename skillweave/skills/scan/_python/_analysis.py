"""One Python module analysed before any rule runs: :class:`ModuleAnalysis`.

Builds, in order, the module's index (``_index``: one walk), its values (``_values``, with
constant folding), its scopes and flows (``_scopes``), the labels of its variables
(``_taint``, propagated to a fixed point) and its wrappers (``_wrappers``). ``_package``
makes one per module of the skill first, so the summaries of every module exist before the
rules of any run; ``PythonScan`` then reads it.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._scopes import Scopes
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._python._wrappers import Wrapper, Wrappers

__all__ = ["ModuleAnalysis"]

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
        self.index = ModuleIndex(tree)
        self.values = Values(self.index)
        self.index.build(self.values.qualname)
        self.values.folder.forget()  # folds made while the walk was still collecting names
        self.scopes = Scopes(tree)
        self.scopes.build(self.index.order, self.index.parents)
        self.taint = Taint(self.index, self.values, self.scopes)
        self.taint.propagate()
        self.wrappers = Wrappers(self.index, self.values, self.scopes, self.taint)
        self._pass_through_aliases()

    def _pass_through_aliases(self) -> None:
        """A module-level function or lambda that only forwards to ``__import__`` or
        ``getattr`` (``imp = lambda *a: __import__(*a)``) resolves as they do; names then
        assigned through it (``run = getattr(imp("os"), "system")``) become aliases too."""
        module = self.scopes.module
        added = False
        for var, functions in self.scopes.defined.items():
            if var[0] != "n" or var[1] != module or var[2] in self.index.aliases:
                continue
            wrapper = self.wrappers.of(functions[0]) if functions else None
            if wrapper is None or len(wrapper.templates) != 1:
                continue
            template = wrapper.templates[0]
            if template.callee in _PASS_THROUGH and _forwards(template.call, wrapper):
                self.index.aliases[var[2]] = template.callee
                added = True
        if not added:
            return
        for name, values in self.index.assigned.items():
            if name not in self.index.aliases and len(values) == 1:
                resolved = self.values.qualname(values[0])
                if resolved:
                    self.index.aliases[name] = resolved
                    self.index.assigned_aliases.add(name)


def _forwards(call: ast.Call, wrapper: Wrapper) -> bool:
    """The wrapped call takes the wrapper's parameters as they come, in order."""
    names = [
        a.value.id if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) else
        a.id if isinstance(a, ast.Name) else None
        for a in call.args
    ]  # fmt: skip
    expected = [*wrapper.params, *([wrapper.vararg] if wrapper.vararg else [])]
    return bool(names) and names == expected[: len(names)]
