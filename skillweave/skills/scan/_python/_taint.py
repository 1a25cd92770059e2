"""Data flow from sources to sinks in one Python module: :class:`Taint`.

Each variable (``_scopes.Var``: a name in its scope, an attribute, a function's result)
carries *labels*, each with the reason it was given: ``decoded`` (base64, hex, zlib,
marshal, text codecs such as rot13, a chr-join, a constant read backwards, a string constant
carrying text in a run of invisible characters, ``_text.HIDDEN_RUN``), ``fetched`` (a
network read), ``environ`` (the process environment: :data:`WHOLE_ENVIRONMENT` unless a loop
or comprehension keeps only the variables an ``if`` picks) and ``home`` (a file read under
the home folder, or a password store's output). A value's labels are those of the sources in its
expression, of the variables it reads and of the functions it calls (their results; another
module's of the same skill, and the module-level variables it imports from one, through
``external``); arguments flow into the parameters of the
module's own functions (``Scopes.targets``). Propagation runs over every flow the module
has, to a fixed point, at most :data:`ROUNDS` rounds, and each expression is read at most
:data:`_NODES` nodes deep, so a hostile file cannot make it slow.

A file the module writes labelled data to by a path it names (``open(P, "wb").write(d)``,
``Path(P).write_bytes(d)``) carries those labels to where the same path is read or loaded
(:meth:`Taint.file_labels`: ``joblib.load(P)``, ``shelve.open(P)``, ``runpy.run_path(P)``).

The rule families ask :meth:`Taint.source` (decoded or fetched: what makes code execution
critical) and :meth:`Taint.labels`. Made by ``ModuleAnalysis``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Final

from skillweave.skills.scan._python._flow import (
    OPEN_CALLS,
    call_source,
    credential_store,
    is_process_sink,
    last_name,
    reversed_slice,
    write_mode,
)
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._scopes import Flow, Scopes, Var
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import HIDDEN_RUN

__all__ = ["ROUNDS", "WHOLE_ENVIRONMENT", "Labels", "Taint"]

ROUNDS: Final = 6
_NODES: Final = 400
_HOLDS: Final = ", which holds data from "
_ENVIRON_DEPTH: Final = 4
WHOLE_ENVIRONMENT: Final = "the environment"
"""The ``environ`` label's reason for ``os.environ`` taken whole."""
_PICKED: Final = "environment variables an if picks"
_ENV_CALLS: Final = frozenset({"os.getenv", "os.environ.get", "os.getenvb", "os.environ.copy"})
_READS: Final = frozenset({"read_text", "read_bytes", "read", "readlines", "load", "loads"})
_FILE_WRITES: Final = frozenset({"write", "write_bytes", "write_text", "writelines"})

Labels = dict[str, str]
"""Label (``decoded``, ``fetched``, ``environ``, ``home``) → why the value carries it."""


class Taint:
    """The labels of the module's variables and expressions.

    Args:
        index: the module's index.
        values: resolves callees and approximates paths.
        scopes: the module's scopes, flows and functions.
    """

    def __init__(self, index: ModuleIndex, values: Values, scopes: Scopes) -> None:
        self.index = index
        self.values = values
        self.scopes = scopes
        self.vars: dict[Var, Labels] = {}
        self.external: Callable[[str], Labels] | None = None
        """What another module of the skill returns or holds, by qualified name
        (``helper.fetch``, ``helper.CODE``)."""
        self._bindings: list[Flow] | None = None
        self._files: set[str] = set()
        """Paths the module writes labelled data to (``("f", path)`` variables)."""
        self._targets: dict[int, list[tuple[int, bool]]] = {}
        self._imports: dict[str, Labels] = {}
        """Another module's variables read here, by qualified name → their labels."""

    def propagate(self) -> None:
        """Give every variable the labels of what flows into it (to a fixed point)."""
        for var in self.scopes.xored[:_NODES]:
            self.vars.setdefault(var, {}).setdefault("decoded", "bytes XORed in place")
        flows = [*self.scopes.flows, *self.bindings(), *self._file_flows()]
        for _ in range(ROUNDS):
            changed = False
            for flow in flows:
                found = self.labels(flow.value)
                if not found:
                    continue
                held = self.vars.setdefault(flow.target, {})
                for label, reason in found.items():
                    if label not in held:
                        held[label] = reason.rsplit(_HOLDS, 1)[-1]
                        changed = True
            if not changed:
                break

    def _file_flows(self) -> list[Flow]:
        """What the module writes to a file it names (``open(P, "wb").write(data)``,
        ``Path(P).write_bytes(data)``, through ``with ... as f``) flows into that file, and
        out of it where the same path is read or loaded (``self._files``)."""
        flows = []
        for call in self.index.calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in _FILE_WRITES and call.args:
                receiver = func.value
                path = (
                    self._path(receiver)
                    if func.attr in ("write_bytes", "write_text")
                    else self._opened_for_writing(receiver)
                )
                if path is not None:
                    flows.append(Flow(("f", path), call.args[0], self.scopes.scope_of(call)))
        self._files = {flow.target[1] for flow in flows}
        return flows

    def _opened_for_writing(self, node: ast.expr, depth: int = 0) -> str | None:
        """The path `node` opens for writing (a name bound to such an ``open``, once)."""
        if isinstance(node, ast.Name) and depth < 2:
            bound = [*self.index.assigned.get(node.id, []), *self.index.withs.get(node.id, [])]
            return self._opened_for_writing(bound[0], depth + 1) if len(bound) == 1 else None
        if not isinstance(node, ast.Call) or not node.args:
            return None
        name = self.values.qualname(node.func) or ""
        mode_node = next((k.value for k in node.keywords if k.arg == "mode"), None)
        if name in OPEN_CALLS:
            mode_node = node.args[1] if len(node.args) > 1 else mode_node
            path = self._path(node.args[0])
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "open":
            mode_node = node.args[0] if node.args else mode_node
            path = self._path(node.func.value)
        else:
            return None
        return path if write_mode(self.values.approx(mode_node)) else None

    def _path(self, node: ast.expr) -> str | None:
        """The file `node` names: its path when known whole, else the name of a variable
        holding it (``cache.write_bytes(r.read())`` then ``cache.read_bytes()``)."""
        path = self.values.approx(node)
        if path and "*" not in path and len(path) < 512:
            return path
        return f"${node.id}" if isinstance(node, ast.Name) else None

    def file_labels(self, call: ast.Call) -> Labels:
        """The labels of the file a call reads or loads by a path the module wrote."""
        func = call.func
        target = call.args[0] if call.args else None
        candidates = [self._path(target) if target is not None else None]
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _READS | {"open"}
            and (target is None or func.attr == "open")
        ):  # Path(p).read_bytes(), p.open()
            candidates.insert(0, self._path(func.value))
        path = next((p for p in candidates if p in self._files), None)
        return dict(self.vars.get(("f", path), {})) if path is not None else {}

    def bindings(self) -> list[Flow]:
        """Arguments flowing into the parameters of the module's own functions."""
        if self._bindings is not None:
            return self._bindings
        self._bindings = []
        for call in self.index.calls:
            scope = self.scopes.scope_of(call)
            for target, bound in self.local_targets(call, scope):
                self._bind(call, target, bound, scope)
        return self._bindings

    def local_targets(self, call: ast.Call, scope: int) -> list[tuple[int, bool]]:
        """The module's functions `call` may reach (none for a call on an import)."""
        key = id(call)
        if key not in self._targets:
            self._targets[key] = self._local_targets(call, scope)
        return self._targets[key]

    def _local_targets(self, call: ast.Call, scope: int) -> list[tuple[int, bool]]:
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if (
            isinstance(root, ast.Name)
            and root is not call.func
            and root.id in self.index.aliases
            and self.scopes.resolve(root.id, scope)[1] == self.scopes.module
        ):
            return []
        return self.scopes.targets(call.func, scope)

    def source(self, node: ast.AST) -> str | None:
        """What makes `node` decoded or fetched data (``base64.b64decode``, ``a network
        read``...); None when nothing does."""
        found = self.labels(node)
        return found.get("decoded") or found.get("fetched")

    def revealed(self, node: ast.AST) -> tuple[str, str] | None:
        """(the decoder, the text) when `node` is a constant hidden behind a decoder
        (``b64decode("aW1w...")``, rot13, zlib of a literal, through names): what it
        reveals is folded; None for anything else."""
        reason = self.labels(node).get("decoded")
        if reason is None:
            return None
        text = self.values.folder.text(node)
        return (reason, text) if text else None

    def labels(self, node: ast.AST) -> Labels:
        """The labels `node`'s value carries, with their reasons."""
        found: Labels = {}
        for inner in _walk(node):
            for label, reason in self._labels_of(inner).items():
                found.setdefault(label, reason)
        return found

    def _labels_of(self, node: ast.AST) -> Labels:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            var = self.scopes.resolve(node.id, self.scopes.scope_of(node))
            held = self.vars.get(var)
            if held:
                return {label: _through(node.id, reason) for label, reason in held.items()}
            if self.values.is_environ(node):
                return {"environ": self._environment(node)}
            return self._imported(node) if var[1] == self.scopes.module else {}
        if isinstance(node, ast.Attribute):
            if self.values.is_environ(node):
                return {"environ": self._environment(node)}
            return dict(self.vars.get(("a", node.attr), {})) or self._imported(node)
        if isinstance(node, ast.Subscript) and reversed_slice(node):
            return {"decoded": "a reversed string"}
        if isinstance(node, ast.Subscript) and self.values.is_environ(node.value):
            return {"environ": _variable(self.values.approx(node.slice))}
        if isinstance(node, ast.Call):
            return self._call_labels(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return _hidden_labels(node.value)
        return {}

    def _environment(self, node: ast.AST) -> str:
        """What `node`, ``os.environ``, gives: the whole environment, or some variables
        when a loop or comprehension over it keeps only those an ``if`` picks."""
        child, parent = node, self.index.parents.get(id(node))
        for _ in range(_ENVIRON_DEPTH):
            if parent is None:
                break
            if isinstance(parent, ast.comprehension) and child is parent.iter and parent.ifs:
                return _PICKED
            if (
                isinstance(parent, ast.For)
                and child is parent.iter
                and any(isinstance(statement, ast.If) for statement in parent.body)
            ):
                return _PICKED
            child, parent = parent, self.index.parents.get(id(parent))
        return WHOLE_ENVIRONMENT

    def _call_labels(self, call: ast.Call) -> Labels:
        found = call_source(call, self.values)
        if found is not None:
            return {"fetched" if found == "a network read" else "decoded": found}
        name = self.values.qualname(call.func) or ""
        if name in _ENV_CALLS:
            return {"environ": _variable(self.values.approx(call.args[0]) if call.args else None)}
        if self._reads_home(call, name):
            return {"home": "a file under the home folder"}
        if is_process_sink(name, last_name(call, name)):
            store = credential_store(call, self.values)
            if store is not None:
                return {"home": store}
        if self._files and (written := self.file_labels(call)):
            return written
        labels: Labels = {}
        for target, _ in self.local_targets(call, self.scopes.scope_of(call)):
            for label, reason in self.vars.get(("r", target), {}).items():
                labels.setdefault(label, reason)
        if not labels and self.external is not None and "." in name:
            labels = self.external(name)
        return labels

    def _imported(self, node: ast.Name | ast.Attribute) -> Labels:
        """The labels of another module's variable of the skill, read here by the name it
        was imported as (``from helper import CODE``) or as ``helper.CODE``."""
        if self.external is None:
            return {}
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.index.assigned:
            return {}
        target = self.index.aliases.get(root.id)
        if target is None or (root is node and "." not in target):
            return {}
        name = self.values.qualname(node) or ""
        if "." not in name:
            return {}
        if name not in self._imports:  # read on every round: each name asked once
            self._imports[name] = self.external(name)
        return self._imports[name]

    def _reads_home(self, call: ast.Call, name: str) -> bool:
        if name in ("open", "io.open", "builtins.open") and call.args:
            path = self.values.approx(call.args[0])
        elif isinstance(call.func, ast.Attribute) and call.func.attr in _READS:
            path = self.values.approx(call.func.value)
        else:
            return False
        return bool(path) and path.startswith("~/")  # type: ignore[union-attr]

    def _bind(self, call: ast.Call, target: int, bound: bool, scope: int) -> None:
        function = self.scopes.function(target)
        if function is None:
            return
        params = function.params[: function.positional]
        params = params[1:] if bound else params
        assert self._bindings is not None
        extra: list[ast.expr] = []
        for position, argument in enumerate(call.args):
            value = argument.value if isinstance(argument, ast.Starred) else argument
            if position < len(params) and not isinstance(argument, ast.Starred):
                self._bindings.append(Flow(("n", target, params[position]), value, scope))
            else:
                extra.append(value)
        if function.vararg:
            for value in extra:
                self._bindings.append(Flow(("n", target, function.vararg), value, scope))
        for keyword in call.keywords:
            if keyword.arg in function.params:
                self._bindings.append(Flow(("n", target, keyword.arg), keyword.value, scope))
            elif function.kwarg:
                self._bindings.append(Flow(("n", target, function.kwarg), keyword.value, scope))


def _hidden_labels(value: str | bytes) -> Labels:
    """``decoded`` for a constant carrying a run of invisible characters (variation
    selectors, tag characters, zero-width ones): text hidden in it is text to decode."""
    if isinstance(value, bytes) or value.isascii():
        return {}
    found = HIDDEN_RUN.search(value)
    if found is None:
        return {}
    return {"decoded": f"text hidden in {len(found.group(0))} invisible characters"}


def _variable(key: str | None) -> str:
    """The reason of an environment read: ``the environment (GITHUB_TOKEN)`` when the
    variable is known."""
    if key and len(key) <= 64 and key.replace("_", "").isalnum():
        return f"the environment ({key})"
    return "the environment"


def _through(name: str, reason: str) -> str:
    return f"{name}{_HOLDS}{reason}"


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk``, at most :data:`_NODES` nodes."""
    for count, inner in enumerate(ast.walk(node)):
        if count >= _NODES:
            return
        yield inner
