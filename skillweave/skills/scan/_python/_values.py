"""What names and expressions stand for in a Python module: :class:`Values`.

- names resolve through import aliases, ``getattr(module, "name")``, ``__import__("os")``,
  ``type(m).__getattribute__(m, "name")`` and a module's namespace read as a mapping
  (``vars(m)[...]``, ``m.__dict__[...]``, a frame's ``f_builtins``/``f_globals``, any
  ``x.__builtins__``: :meth:`Values.namespace_of`) (:meth:`Values.qualname`);
- expressions are approximated as strings (:meth:`Values.approx`, :meth:`Values.paths`,
  :meth:`Values.alternatives`), as ``_strings`` reads them.

Read by the index's walk (for assigned aliases), the sources and sinks (``_flow``), the taint
and every rule family; made by ``PythonScan`` over its :class:`ModuleIndex`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Final

from skillweave.skills.scan._python._fold import Folder
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._strings import Strings

__all__ = ["Values", "getattribute"]

_MAX_RETURNS: Final = 8
_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
_NAMESPACES: Final = frozenset({"globals", "locals", "vars"})
_CODE_BUILTINS: Final = frozenset({"exec", "eval", "compile", "__import__"})
"""Builtins an object's ``__getattribute__`` has no other reason to be asked for."""
"""Calls whose result maps a module's names to its values (``globals()["os"]``)."""


class Values:
    """Resolves names and approximates string values against a module's index.

    Args:
        index: the module's index (read as it grows: the walk resolves aliases with it).
    """

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.folder = Folder(index)
        self._returned_memo: dict[str, str | None] = {}
        self.external_aliases: Mapping[str, str] = {}
        """Another module's names for imported callables (``helpers.runner`` →
        ``os.system``), set by ``_package``."""
        self.forwarding: Callable[[str], str | None] | None = None
        """What another module's function called by this qualified name only forwards to
        (``__import__``, ``getattr``), set by ``_package``; None when it forwards to none."""
        self.strings = Strings(
            index, self.folder, qualname=self.qualname, is_environ=self.is_environ
        )

    def forget(self) -> None:
        """Drop what was folded and resolved so far (the names it read have changed)."""
        self.folder.forget()
        self._returned_memo.clear()
        self.strings.forget()

    def name(self, node: ast.AST | None) -> str | None:
        """The attribute or module name `node` evaluates to exactly (folded from pieces);
        None when it is not known or not a dotted name."""
        text = self.folder.text(node)
        if text is None:
            text = self.approx(node) if isinstance(node, ast.Constant) else None
        if not text or len(text) > 200 or not all(p.isidentifier() for p in text.split(".")):
            return None
        return text

    def qualname(self, node: ast.AST, depth: int = 0) -> str | None:
        """``subprocess.run`` for ``sp.run`` after ``import subprocess as sp``; None when the
        callee is not a name chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(_builtins(self.index.aliases.get(node.id, node.id)))
        elif isinstance(node, ast.Call) and depth < 4 and getattribute(node) is not None:
            owner_node, key = getattribute(node)  # type: ignore[misc]
            owner = self.qualname(owner_node, depth + 1)
            attribute = self.name(key)
            if not owner and attribute in _CODE_BUILTINS:  # an object handing out builtins
                owner = "builtins"
            if not owner or not attribute:
                return None
            parts.append(f"{owner}.{attribute}")
        elif isinstance(node, ast.Call) and depth < 4:
            inner = self.qualname(node.func, depth + 1)
            if inner and self.forwarding is not None:
                inner = self.forwarding(inner) or inner
            first = self.name(node.args[0]) if node.args else None
            if inner in _IMPORTERS and first:
                parts.append(_builtins(first))
            elif inner in ("getattr", "builtins.getattr") and len(node.args) >= 2:
                owner = self.qualname(node.args[0], depth + 1)
                attribute = self.name(node.args[1])
                if not owner or not attribute:
                    return None
                parts.append(f"{owner}.{attribute}")
            elif inner in ("vars", "builtins.vars") and node.args:
                owner = self.qualname(node.args[0], depth + 1)
                if owner is None:
                    return None
                parts.append(f"{owner}.__dict__")
            elif (returned := self._returned(node, depth)) is not None:
                parts.append(returned)
            else:
                return None
        elif isinstance(node, ast.IfExp) and depth < 4:  # b if isinstance(b, dict) else vars(b)
            body = self.qualname(node.body, depth + 1)
            if body is None or body != self.qualname(node.orelse, depth + 1):
                return None
            parts.append(body)
        elif isinstance(node, ast.Subscript) and depth < 4:
            found = self.subscripted(node, depth)
            if found is None:
                return None
            parts.append(found)
        else:
            return None
        name = _strip_dict(".".join(reversed(parts)))
        return self.external_aliases.get(name, name) if self.external_aliases else name

    def _returned(self, call: ast.Call, depth: int) -> str | None:
        """The module or namespace a function of this module returns on every path
        (``def ns(): return vars(__builtins__)``, a method too), for ``ns()["exec"]``; None
        when its returns differ or are not imported names."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        returns = self.index.returns.get(name) if name else None
        if not returns or len(returns) > _MAX_RETURNS:
            return None
        assert name is not None
        if name in self._returned_memo:  # each function read once: linear on hostile code
            return self._returned_memo[name]
        self._returned_memo[name] = None  # a function returning a call of itself
        found = {
            None if _local_name(r, self.index.aliases) else self.qualname(r, depth + 1)
            for r in returns
        }
        result = found.pop() if len(found) == 1 else None
        self._returned_memo[name] = result
        return result

    def subscripted(self, node: ast.Subscript, depth: int = 0) -> str | None:
        """What a namespace lookup names: ``globals()["os"]`` → ``os``, ``sys.modules["os"]``
        → ``os``, ``vars(builtins)["exec"]`` and ``__builtins__["exec"]`` →
        ``builtins.exec``; None for any other subscript or a key not known."""
        key = self.name(node.slice)
        if key is None:
            return None
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and not value.args
            and value.func.id in _NAMESPACES
        ):
            return _builtins(self.index.aliases.get(key, key))
        view = self.namespace_of(value, depth)
        if view == "globals":
            return _builtins(self.index.aliases.get(key, key))
        if view is not None:
            return f"{view}.{key}"
        owner = self.qualname(value, depth + 1)
        if owner == "sys.modules":
            return _builtins(key)
        if owner == "builtins":
            return f"builtins.{key}"
        return None

    def namespace_of(self, node: ast.AST, depth: int = 0) -> str | None:
        """Whose names the mapping `node` holds: the imported module (or ``builtins``) for
        ``vars(os)``, ``os.__dict__``, ``getattr(os, "__dict__", os)``, ``frame.f_builtins``,
        ``x.__builtins__``, a conditional between two of them; ``globals`` for a frame's
        ``f_globals``/``f_locals``; None for anything else (an object's own ``vars``)."""
        if depth > 4:
            return None
        owner: ast.AST | None = None
        if isinstance(node, ast.Attribute):
            if node.attr in ("f_builtins", "__builtins__"):
                return "builtins"
            if node.attr in ("f_globals", "f_locals"):
                return "globals"
            owner = node.value if node.attr == "__dict__" else None
        elif isinstance(node, ast.Call) and node.args:
            callee = self.qualname(node.func, depth + 1)
            if callee in ("vars", "builtins.vars") and len(node.args) == 1:
                owner = node.args[0]
            elif callee in ("getattr", "builtins.getattr") and len(node.args) >= 2:
                owner = node.args[0] if self.name(node.args[1]) == "__dict__" else None
        elif isinstance(node, ast.IfExp):
            body = self.namespace_of(node.body, depth + 1) or _module(self, node.body, depth)
            other = self.namespace_of(node.orelse, depth + 1) or _module(self, node.orelse, depth)
            return body if body is not None and body == other else None
        return _module(self, owner, depth) if owner is not None else None

    def indirect(self, node: ast.AST) -> bool:
        """Whether a callee goes through ``getattr``/``__import__`` (bandit cannot see it)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Call) or (
            isinstance(node, ast.Subscript) and self.namespace_of(node.value) is not None
        )

    def approx(self, node: ast.AST | None) -> str | None:
        """The string `node` evaluates to, approximately; None when nothing is known
        (:meth:`Strings.approx`)."""
        return self.strings.approx(node)

    def paths(self, node: ast.AST) -> list[str]:
        """Each string `node` may evaluate to, taking every branch (:meth:`Strings.paths`)."""
        return self.strings.paths(node)

    def alternatives(self, node: ast.AST) -> list[str]:
        """`node` read once per item of a ``for`` loop over a literal whose name it reads
        (:meth:`Strings.alternatives`)."""
        return self.strings.alternatives(node)

    def is_environ(self, node: ast.AST) -> bool:
        """Whether `node` names the process environment (``os.environ``)."""
        return self.qualname(node) in ("os.environ", "environ", "os.environb")


def _module(values: Values, node: ast.AST, depth: int) -> str | None:
    """The module `node` names (an import, ``builtins``, ``sys.modules[...]``); None for
    a value of the script's own."""
    root: ast.AST = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id not in values.index.aliases:
        return "builtins" if root.id == "__builtins__" else None
    name = values.qualname(node, depth + 1)
    return _strip_dict(name) if name else None


def getattribute(call: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """(object, name) of ``type(o).__getattribute__(o, "n")``,
    ``object.__getattribute__(o, "n")`` or ``o.__getattribute__("n")``; None otherwise."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "__getattribute__" or call.keywords:
        return None
    if len(call.args) == 2:
        return call.args[0], call.args[1]
    if len(call.args) == 1:
        return func.value, call.args[0]
    return None


def _builtins(name: str) -> str:
    """``__builtins__`` is the builtins module (or its dict): one name for both."""
    if name == "__builtins__" or name.startswith("__builtins__."):
        return "builtins" + name.removeprefix("__builtins__")
    return name


def _local_name(node: ast.expr, aliases: dict[str, str]) -> bool:
    """A bare name that is no import nor alias (``return self``, ``return result``)."""
    return isinstance(node, ast.Name) and node.id not in aliases and node.id != "__builtins__"


def _strip_dict(name: str) -> str:
    """``builtins.__dict__.exec`` names ``builtins.exec``."""
    return name.replace(".__dict__", "")
