"""What names and expressions stand for in a Python module: :class:`Values`.

- names resolve through import aliases, ``getattr(module, "name")``, ``__import__("os")``,
  ``type(m).__getattribute__(m, "name")`` and a module's namespace read as a mapping
  (``vars(m)[...]``, ``m.__dict__[...]``, a frame's ``f_builtins``/``f_globals``, any
  ``x.__builtins__``: :meth:`Values.namespace_of`) (:meth:`Values.qualname`);
- path arguments are approximated as strings (:meth:`Values.approx`: constants, f-strings,
  ``+``, ``%``, ``os.path.join``, ``Path(...) / ...``, ``expanduser``, ``Path.home()``,
  ``$HOME``, names assigned once, the interpreter's site-packages and prefix), ``*`` standing
  for what is not known and ``@pkg`` for the package's own folder (``__file__``).

Read by the index's walk (for assigned aliases), the sources and sinks (``_flow``), the taint
and every rule family; made by ``PythonScan`` over its :class:`ModuleIndex`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Final

from skillweave.skills.scan._python._fold import Folder
from skillweave.skills.scan._python._index import ModuleIndex

__all__ = ["Values", "getattribute"]

_APPROX_DEPTH: Final = 12
_SITE: Final = "/usr/lib/python3/site-packages"
_USER_SITE: Final = "~/.local/lib/python3/site-packages"
_SITE_CALLS: Final = {
    "site.getsitepackages": _SITE, "sysconfig.get_paths": _SITE, "sysconfig.get_path": _SITE,
    "distutils.sysconfig.get_python_lib": _SITE, "sysconfig.get_python_lib": _SITE,
    "site.getusersitepackages": _USER_SITE,
}  # fmt: skip
"""Where the interpreter's packages live (what it imports, and its ``.pth`` start-up files
run from): outside any workspace."""
_SITE_NAMES: Final = {"site.USER_SITE": _USER_SITE, "site.USER_BASE": "~/.local",
                      "sys.prefix": "/usr", "sys.base_prefix": "/usr",
                      "sys.exec_prefix": "/usr"}  # fmt: skip
_MAX_RETURNS: Final = 8
_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
_ALTERNATIVE_NODES: Final = 200
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

    def forget(self) -> None:
        """Drop what was folded and resolved so far (the names it read have changed)."""
        self.folder.forget()
        self._returned_memo.clear()

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

    def approx(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The string `node` evaluates to, approximately; None when nothing is known."""
        if node is None or depth > _APPROX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("latin-1")
            return None
        if isinstance(node, ast.JoinedStr):
            return "".join(
                part.value
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
                else (self.approx(getattr(part, "value", None), depth + 1) or "*")
                for part in node.values
            )
        if isinstance(node, ast.BinOp):
            left = self.approx(node.left, depth + 1)
            right = self.approx(node.right, depth + 1)
            if isinstance(node.op, ast.Add) and (left or right):
                return (left or "*") + (right or "*")
            if isinstance(node.op, ast.Div) and (left or right):
                return f"{left or '*'}/{right or '*'}"
            if isinstance(node.op, ast.Mod) and left:
                return left.replace("%s", "*").replace("%r", "*")
            return None
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return "@pkg/file"
            values = self.index.assigned.get(node.id)
            return self.approx(values[-1], depth + 1) if values and len(values) == 1 else None
        if isinstance(node, ast.Subscript) and self.is_environ(node.value):
            key = self.approx(node.slice, depth + 1)
            return "~" if key in ("HOME", "USERPROFILE") else None
        if isinstance(node, ast.Attribute):
            if (site := _SITE_NAMES.get(self.qualname(node) or "")) is not None:
                return site
            if node.attr == "parent":
                inner = self.approx(node.value, depth + 1)
                if inner is None:
                    return None
                return "@pkg" if inner.startswith("@pkg") else f"{inner}/.."
            return None
        if isinstance(node, ast.Call):
            folded = self.folder.text(node)
            return folded if folded is not None else self._approx_call(node, depth)
        if isinstance(node, ast.Subscript):
            inner = node.value.func if isinstance(node.value, ast.Call) else node.value
            site = _SITE_CALLS.get(self.qualname(inner) or "")  # get_paths()["purelib"]
            return site if site is not None else self.folder.text(node)
        return None

    def alternatives(self, node: ast.AST) -> list[str]:
        """`node` approximated once for each item a ``for`` loop over a literal gives a name
        it reads (``for base in (API, RELAY): urlopen(f"{base}/runs")``); empty when it
        reads no such name."""
        if not self.index.loops:
            return []
        names = [
            n.id
            for n in islice(ast.walk(node), _ALTERNATIVE_NODES)
            if isinstance(n, ast.Name) and n.id in self.index.loops
        ]
        if not names:
            return []
        name = names[0]
        saved = self.index.assigned.get(name)
        found = []
        try:
            for item in self.index.loops[name][:_MAX_RETURNS]:
                self.index.assigned[name] = [item]
                text = self.approx(node)
                if text:
                    found.append(text)
        finally:
            if saved is None:
                self.index.assigned.pop(name, None)
            else:
                self.index.assigned[name] = saved
        return found

    def _approx_call(self, node: ast.Call, depth: int) -> str | None:
        name = self.qualname(node.func) or ""
        if name in _SITE_CALLS:
            return _SITE_CALLS[name]
        args = node.args
        last = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
        if name in ("os.path.join", "posixpath.join", "ntpath.join") or last == "joinpath":
            pieces = [self.approx(a, depth + 1) or "*" for a in args]
            if last == "joinpath" and isinstance(node.func, ast.Attribute):
                pieces.insert(0, self.approx(node.func.value, depth + 1) or "*")
            joined = ""
            for piece in pieces:
                joined = (
                    piece if piece.startswith(("/", "~")) or not joined else f"{joined}/{piece}"
                )
            return joined or None
        if name in ("pathlib.Path.home", "Path.home") or (last == "home" and not args):
            return "~"
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if name in ("os.getenv", "os.environ.get") and args:
            return "~" if self.approx(args[0], depth + 1) in ("HOME", "USERPROFILE") else None
        if name in ("os.path.dirname", "os.path.abspath", "os.path.realpath") and args:
            inner = self.approx(args[0], depth + 1)
            if inner and inner.startswith("@pkg"):
                return "@pkg"
            return inner if name != "os.path.dirname" else (inner and f"{inner}/..")
        if (
            last in ("Path", "PurePath", "PosixPath", "str", "fspath", "normpath")
            or name in ("os.path.expanduser", "os.path.expandvars")
        ) and args:
            pieces = [self.approx(a, depth + 1) or "*" for a in args]
            return "/".join(pieces)
        if isinstance(node.func, ast.Attribute) and last in (
            "expanduser", "resolve", "absolute", "as_posix", "format", "strip", "lower",
        ):  # fmt: skip
            inner = self.approx(node.func.value, depth + 1)
            return inner.replace("{}", "*") if inner else None
        return None

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
