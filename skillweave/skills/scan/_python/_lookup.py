"""The Python rule about callables looked up by name at run time: :class:`LookupRules`.

``getattr(__builtins__, "ev" + "al")``, ``globals()["o" + "s"].system``,
``vars(builtins)["exec"]``, ``sys.modules["subprocess"].run``, ``__import__("os").popen``:
a lookup that ``_values`` resolves (names folded from pieces by ``_fold``) to a dangerous
callable (``_flow.dangerous``) is ``obfuscation.dynamic-lookup``, high, and critical when it
runs code from decoded or fetched data; the resolved callee is then judged by every other
rule exactly as the direct call. A callable named at run time that cannot be resolved, taken
from ``builtins``, ``os``, ``subprocess`` and the like (``_flow.SENSITIVE_OWNERS``), or from
``globals()`` when the module holds a dangerous callable the name could be, is high too.
``getattr(self, name)`` and ``getattr(obj, "attr")`` on ordinary objects are left alone.
Called by ``PythonScan`` for every call of the module (and every call a wrapper stands for).
"""

from __future__ import annotations

import ast
import fnmatch
from itertools import islice
from typing import Final

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import SENSITIVE_OWNERS, dangerous
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._unwrap import Unwrapped
from skillweave.skills.scan._python._values import Values, getattribute

__all__ = ["LookupRules"]

_GETATTR: Final = frozenset({"getattr", "builtins.getattr"})
_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
_NAMESPACES: Final = frozenset({"globals", "locals", "vars"})
_DANGEROUS_ATTRIBUTES: Final = (
    "exec", "eval", "compile", "system", "popen", "spawn*", "exec[lv]*", "run", "call",
    "check_call", "check_output", "Popen", "getoutput", "load", "loads", "import_module",
    "__import__", "CDLL", "cdll", "windll", "WinDLL", "posix_spawn*",
)  # fmt: skip
_MAX_CANDIDATES: Final = 200
_CLASS_WALKS: Final = frozenset({"__mro__", "__base__", "__bases__"})
_CLONE_LIMIT: Final = 64
"""Nodes of a ``__subclasses__`` receiver searched for a walk up the classes."""


class LookupRules:
    """Dangerous callables reached through a dynamic lookup.

    Args:
        findings: where to report.
        values: resolves callees (folding names built from pieces).
        taint: says whether the code a resolved ``exec`` runs is decoded or fetched.
        index: the module's names (what ``globals()[...]`` may return).
    """

    def __init__(
        self, findings: Findings, values: Values, taint: Taint, index: ModuleIndex
    ) -> None:
        self.findings = findings
        self.values = values
        self.taint = taint
        self.index = index

    def call(self, call: ast.Call, name: str, line: int) -> None:
        """`call` of the callee `name` (empty when not resolved), looked up dynamically?"""
        if _walks_object(call.func):
            self.findings.add("obfuscation.dynamic-lookup", line,
                              "walks object.__subclasses__(), a way to reach builtins and "
                              "modules the script never names")  # fmt: skip
        lookup = self.through(call.func)
        if lookup is None:
            return
        how, owner, key = lookup
        kind = dangerous(name) if name else None
        if kind is not None:
            payload = self.taint.source(call.args[0]) if call.args else None
            critical = kind == "runs code" and payload is not None
            message = f"looks up {name} through {how}: it {kind}"
            if critical:
                message += f", here from {payload}"
            self.findings.add("obfuscation.dynamic-lookup", line, message,
                              severity="critical" if critical else "high")  # fmt: skip
        elif not name and self._could_be_dangerous(owner, key, call.func):
            self.findings.add("obfuscation.dynamic-lookup", line,
                              f"calls a function of {owner or 'the module'} named at run time "
                              f"({how})")  # fmt: skip

    def unwrapped(self, call: ast.Call, name: str, line: int, how: Unwrapped) -> None:
        """`call` of `name` whose callee ``operator.attrgetter``/``methodcaller``/``itemgetter``
        looked up by a string (``_unwrap``): a dangerous one is a dynamic lookup, critical
        when it runs decoded or fetched code."""
        kind = dangerous(name) if name else None
        if kind is None:
            return
        payload = self.taint.source(call.args[0]) if call.args else None
        critical = kind == "runs code" and payload is not None
        built = ", its name built from pieces" if how.built else ""
        message = f"looks up {name} through {how.how}{built}: it {kind}"
        if critical:
            message += f", here from {payload}"
        self.findings.add("obfuscation.dynamic-lookup", line, message,
                          severity="critical" if critical else "high")  # fmt: skip

    def through(self, func: ast.expr) -> tuple[str, str | None, ast.expr | None] | None:
        """How `func` is looked up (getattr, globals()[...], __import__...), the owner's
        name and the key's expression; None for an ordinary callee."""
        node: ast.AST = func
        for _ in range(8):
            if isinstance(node, ast.Attribute):
                node = node.value
                continue
            if isinstance(node, ast.Name) and node.id in self.index.assigned_aliases:
                values = self.index.assigned.get(node.id) or []
                if len(values) != 1:  # m = __import__("o" + "s"); m.system(...)
                    return None
                node = values[0]
                continue
            if isinstance(node, ast.Call):
                found = getattribute(node)
                if found is not None:  # type(os).__getattribute__(os, "system")
                    return "__getattribute__", self.values.qualname(found[0]), found[1]
                callee = self.values.qualname(node.func) or ""
                if callee in _GETATTR and len(node.args) >= 2:
                    owner = self.values.qualname(node.args[0])
                    return "getattr", owner, node.args[1]
                if callee in _IMPORTERS and node.args:
                    return callee, None, node.args[0]
                if callee in ("vars", "builtins.vars") and node.args:
                    return "vars()", self.values.qualname(node.args[0]), None
                return None
            if isinstance(node, ast.Subscript):
                return self._subscript(node)
            return None
        return None

    def _subscript(self, node: ast.Subscript) -> tuple[str, str | None, ast.expr | None] | None:
        value = node.value
        if _namespace(value):
            return f"{value.func.id}()[...]", "globals", node.slice  # type: ignore[attr-defined]
        view = self.values.namespace_of(value)
        if view is not None:
            how = "a frame's globals[...]" if view == "globals" else f"{view}.__dict__[...]"
            return how, view, node.slice
        owner = self.values.qualname(value)
        if owner == "sys.modules":
            return "sys.modules[...]", "sys.modules", node.slice
        if owner is not None and (owner == "builtins" or owner.endswith(".__dict__")):
            return f"{owner}[...]", owner.replace(".__dict__", ""), node.slice
        if isinstance(value, ast.Call) and self.values.qualname(value.func) in ("vars",):
            return (
                "vars()[...]",
                self.values.qualname(value.args[0]) if value.args else None,
                (node.slice),
            )
        return None

    def _could_be_dangerous(self, owner: str | None, key: ast.expr | None, func: ast.expr) -> bool:
        """Whether a lookup whose name is not known may reach a dangerous callable."""
        pattern = (self.values.approx(key) or "*") if key is not None else "*"
        attribute = func.attr if isinstance(func, ast.Attribute) else None
        if owner == "globals":
            if attribute is not None:  # globals()[name].system: a module, then the callable
                return any(fnmatch.fnmatchcase(attribute, p) for p in _DANGEROUS_ATTRIBUTES)
            names = list(self.index.aliases)[:_MAX_CANDIDATES]
            return any(
                fnmatch.fnmatchcase(n, pattern) and dangerous(self.index.aliases[n]) is not None
                for n in names
            )
        if owner is None:  # __import__(name).system
            return attribute is not None and any(
                fnmatch.fnmatchcase(attribute, p) for p in _DANGEROUS_ATTRIBUTES
            )
        if owner not in SENSITIVE_OWNERS:
            return False
        if attribute is not None and owner == "sys.modules":
            return any(fnmatch.fnmatchcase(attribute, p) for p in _DANGEROUS_ATTRIBUTES)
        return any(
            fnmatch.fnmatchcase(candidate, pattern) or fnmatch.fnmatchcase(pattern, candidate)
            for candidate in _DANGEROUS_ATTRIBUTES
        )


def _namespace(node: ast.expr) -> bool:
    """``globals()``, ``locals()`` or ``vars()``: the module's (or a frame's) names."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and not node.args
        and node.func.id in _NAMESPACES
    )


def _walks_object(func: ast.expr) -> bool:
    """``object.__subclasses__`` or ``x.__class__.__mro__[-1].__subclasses__`` (the root of
    every class reached from any value); a class's own ``Base.__subclasses__()`` is not."""
    if not isinstance(func, ast.Attribute) or func.attr != "__subclasses__":
        return False
    receiver = func.value
    if isinstance(receiver, ast.Name):
        return receiver.id == "object"
    return any(
        isinstance(n, ast.Attribute) and n.attr in _CLASS_WALKS
        for n in islice(ast.walk(receiver), _CLONE_LIMIT)
    )
