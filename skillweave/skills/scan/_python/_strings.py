"""What string a Python expression evaluates to, approximately: :class:`Strings`.

Path arguments, commands and URLs are approximated as strings (:meth:`Strings.approx`:
constants, f-strings, ``+``, ``%`` and ``format`` with their arguments in place,
``os.path.join``, a separator's ``join``, ``Path(...) / ...``, ``expanduser``,
``Path.home()``, ``$HOME`` and the XDG and Windows home variables, ``pwd``'s home folder,
names assigned once, class and instance attributes, literal dicts and lists, the
interpreter's site-packages and prefix), ``*`` standing for what is not known, ``@pkg/file``
for the script (``__file__``) and ``..`` for each folder climbed (``.parent``,
``parents[n]``, ``dirname``). :meth:`Strings.paths` gives every string an expression may be,
taking each branch of a conditional or ``or``, each value of a name assigned again or a loop
walks, each return of the module's own function or lambda and each argument its parameter
is given (those expressions found by ``_candidates``), under step budgets
(:data:`_MAX_PATHS`, :data:`_PATH_STEPS`, :data:`_MODULE_PATH_STEPS`).
:meth:`Strings.alternatives` reads an expression once per item of a ``for`` loop over a
literal.

Made by :class:`~skillweave.skills.scan._python._values.Values`, which answers
``approx``/``paths``/``alternatives`` with it and lends it its name resolution.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from itertools import islice
from typing import Final

from skillweave.skills.scan._python._candidates import MAX_CHOICES, Candidates
from skillweave.skills.scan._python._fold import Folder
from skillweave.skills.scan._python._index import ModuleIndex

__all__ = ["Strings"]

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
_PATH_NAMES: Final = {"os.sep": "/", "os.path.sep": "/", "posixpath.sep": "/", "os.curdir": ".",
                      "os.pardir": "..", "os.path.curdir": ".", "os.path.pardir": ".."}  # fmt: skip
_HOME_VARIABLES: Final = {"HOME": "~", "USERPROFILE": "~", "XDG_CONFIG_HOME": "~/.config",
                          "XDG_DATA_HOME": "~/.local/share", "APPDATA": "~/AppData/Roaming",
                          "LOCALAPPDATA": "~/AppData/Local"}  # fmt: skip
"""Environment variables that name the home folder or a folder in it."""
_USER_RECORDS: Final = frozenset({"pwd.getpwuid", "pwd.getpwnam"})
_MAX_PATHS: Final = 8
"""Strings :meth:`Strings.paths` tries, at most (each a choice of branches)."""
_PATH_STEPS: Final = 2_000
"""Expressions one :meth:`Strings.paths` reads, at most, over all its tries."""
_MODULE_PATH_STEPS: Final = 200_000
"""Expressions :meth:`Strings.paths` reads in one module, at most: past it each path is
read once, as :meth:`Strings.approx` does (linear on hostile code)."""
_MAX_PARTS: Final = 64
_PERCENT: Final = re.compile(r"%%|%(?:\([^)]{0,40}\))?[-#0 +]{0,5}[0-9.*]{0,8}[sdrifxa]")
_FIELD: Final = re.compile(r"\{([^{}]{0,80})\}")
_MAX_LOOP_ITEMS: Final = 8
_ALTERNATIVE_NODES: Final = 200


class Strings:
    """Approximates the strings a module's expressions evaluate to.

    Args:
        index: the module's index.
        folder: folds constant pieces (shared with the names' resolution).
        qualname: resolves a callee or attribute to its dotted name.
        is_environ: whether a node names the process environment.
    """

    def __init__(
        self,
        index: ModuleIndex,
        folder: Folder,
        *,
        qualname: Callable[[ast.AST], str | None],
        is_environ: Callable[[ast.AST], bool],
    ) -> None:
        self.index = index
        self.folder = folder
        self._qualname = qualname
        self._is_environ = is_environ
        self._choices: _Choices | None = None
        self._candidates = Candidates(index)
        self._steps_left = _MODULE_PATH_STEPS

    def forget(self) -> None:
        """Drop what was read of the index (its calls and classes have changed)."""
        self._candidates.forget()

    def approx(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The string `node` evaluates to, approximately; None when nothing is known."""
        if node is None or depth > _APPROX_DEPTH:
            return None
        if self._choices is not None and not self._choices.step():
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
                return _percent(left, self._pieces(_items(node.right), depth))
            return None
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return "@pkg/file"
            values = self.index.assigned.get(node.id)
            if values and len(values) == 1:
                return self.approx(values[-1], depth + 1)
            if values or self._choices is None:
                return self._chosen(values or [], depth)
            return self._chosen(
                self._candidates.arguments(node) or self._candidates.loop_items(node), depth
            )
        if isinstance(node, ast.Subscript) and self._is_environ(node.value):
            return _HOME_VARIABLES.get(self.approx(node.slice, depth + 1) or "")
        if isinstance(node, ast.Attribute):
            return self._approx_attribute(node, depth)
        if isinstance(node, ast.Call):
            folded = self.folder.text(node)
            return folded if folded is not None else self._approx_call(node, depth)
        if isinstance(node, ast.Subscript):
            return self._approx_subscript(node, depth)
        if isinstance(node, ast.IfExp | ast.BoolOp):
            return self._chosen(_branches(node), depth)
        return None

    def paths(self, node: ast.AST) -> list[str]:
        """Each string `node` may evaluate to (at most :data:`_MAX_PATHS`), as :meth:`approx`
        reads it but taking every branch: either side of a conditional or an ``or``, each
        value of a name assigned more than once, each return of the module's own function
        called, each argument a parameter is given where its function is called."""
        if self._choices is not None or self._steps_left <= 0:
            text = self.approx(node)
            return [text] if text else []
        found: list[str] = []
        plan: list[int] | None = []
        steps = min(_PATH_STEPS, self._steps_left)
        try:
            for _ in range(_MAX_PATHS):
                if plan is None:
                    break
                self._choices = _Choices(plan, steps)
                text = self.approx(node)
                if text and text not in found:
                    found.append(text)
                plan = self._choices.next_plan()
                self._steps_left -= steps - self._choices.steps
                steps = self._choices.steps
                if steps <= 0:
                    break
        finally:
            self._choices = None
        return found

    def _chosen(self, options: list[ast.expr], depth: int) -> str | None:
        """The option the current choice takes (:meth:`paths`); None outside a choice."""
        if self._choices is None or not options:
            return None
        options = options[:MAX_CHOICES]
        return self.approx(options[self._choices.pick(len(options))], depth + 1)

    def _approx_attribute(self, node: ast.Attribute, depth: int) -> str | None:
        name = self._qualname(node) or ""
        if (known := _SITE_NAMES.get(name) or _PATH_NAMES.get(name)) is not None:
            return known
        if node.attr == "pw_dir":  # pwd.getpwuid(os.getuid()).pw_dir
            return "~"
        if node.attr == "parent":
            inner = self.approx(node.value, depth + 1)
            return _parent(inner) if inner is not None else None
        if isinstance(node.value, ast.Name) and node.value.id in self._candidates.classes():
            values = self.index.class_attributes.get(node.attr) or []  # Config.RC, self.rc
            return self.approx(values[0], depth + 1) if len(values) == 1 else None
        return None

    def _approx_subscript(self, node: ast.Subscript, depth: int) -> str | None:
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "parents":  # p.parents[2]
            inner = self.approx(value.value, depth + 1)
            up = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if inner is None or not isinstance(up, int) or not 0 <= up < 32:
                return None
            for _ in range(up + 1):
                inner = _parent(inner)
            return inner
        held = self._candidates.single(value) if isinstance(value, ast.Name) else None
        if isinstance(held, ast.Dict | ast.List | ast.Tuple):  # TARGETS["rc"], TARGETS[0]
            return self.approx(_item(held, self.folder.fold(node.slice)), depth + 1)
        inner = value.func if isinstance(value, ast.Call) else value
        callee = self._qualname(inner) or ""
        if callee in _USER_RECORDS:  # pwd.getpwuid(uid)[5]
            return "~"
        site = _SITE_CALLS.get(callee)  # get_paths()["purelib"]
        return site if site is not None else self.folder.text(node)

    def _pieces(self, nodes: list[ast.expr], depth: int) -> list[str]:
        """`nodes` approximated, ``*`` for each not known; a starred name assigned a literal
        list or tuple once stands for its items."""
        pieces: list[str] = []
        for node in nodes[:_MAX_PARTS]:
            if isinstance(node, ast.Starred):
                values = (
                    self.index.assigned.get(node.value.id)
                    if isinstance(node.value, ast.Name)
                    else None
                )
                items = values[0] if values and len(values) == 1 else node.value
                if isinstance(items, ast.List | ast.Tuple):
                    pieces += self._pieces(items.elts, depth)
                    continue
                if (whole := _split_string(items)) is not None:
                    pieces.append(self.approx(whole, depth + 1) or "*")
                    continue
            pieces.append(self.approx(node, depth + 1) or "*")
        return pieces

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
            for item in self.index.loops[name][:_MAX_LOOP_ITEMS]:
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
        name = self._qualname(node.func) or ""
        if name in _SITE_CALLS:
            return _SITE_CALLS[name]
        args = node.args
        last = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
        if name in ("os.path.join", "posixpath.join", "ntpath.join") or last == "joinpath":
            pieces = self._pieces(args, depth)
            if last == "joinpath" and isinstance(node.func, ast.Attribute):
                pieces.insert(0, self.approx(node.func.value, depth + 1) or "*")
            return _joined(pieces)
        if name in ("pathlib.Path.home", "Path.home") or (last == "home" and not args):
            return "~"
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if name in ("os.getenv", "os.environ.get") and args:
            return _HOME_VARIABLES.get(self.approx(args[0], depth + 1) or "")
        if name in ("os.path.dirname", "os.path.abspath", "os.path.realpath") and args:
            inner = self.approx(args[0], depth + 1)
            return inner if name != "os.path.dirname" or inner is None else _parent(inner)
        if (
            last in ("Path", "PurePath", "PosixPath", "PurePosixPath", "WindowsPath",
                     "PureWindowsPath", "str", "fspath", "normpath")
            or name in ("os.path.expanduser", "os.path.expandvars")
        ) and args:  # fmt: skip
            return _joined(self._pieces(args, depth))
        if last == "join" and isinstance(node.func, ast.Attribute) and len(args) == 1:
            separator = self.approx(node.func.value, depth + 1)  # "/".join([home, ".ssh"])
            if separator in ("/", "\\") and isinstance(args[0], ast.List | ast.Tuple):
                return _joined(self._pieces(args[0].elts, depth))
            return None
        if isinstance(node.func, ast.Attribute) and last in (
            "expanduser", "resolve", "absolute", "as_posix", "format", "strip", "lower",
            "with_name",
        ):  # fmt: skip
            inner = self.approx(node.func.value, depth + 1)
            if inner is None:
                return None
            if last == "with_name":
                return f"{_parent(inner)}/{self.approx(args[0], depth + 1) if args else '*'}"
            if last == "format":
                keywords = {k.arg: self.approx(k.value, depth + 1) or "*" for k in node.keywords}
                return _format(inner, self._pieces(args, depth), keywords)
            return inner
        if self._choices is not None:
            return self._chosen(self._candidates.own_returns(node.func), depth)
        return None


class _Choices:
    """Which alternative each choice point of one approximation takes (:meth:`Strings.paths`),
    in the order the points are met: `plan` first, then the first alternative of each."""

    def __init__(self, plan: list[int], steps: int) -> None:
        self.plan = plan
        self.steps = steps
        self.arities: list[int] = []

    def step(self) -> bool:
        """One more expression read; False once the budget is spent."""
        self.steps -= 1
        return self.steps >= 0

    def pick(self, arity: int) -> int:
        at = len(self.arities)
        self.arities.append(arity)
        return self.plan[at] if at < len(self.plan) and self.plan[at] < arity else 0

    def next_plan(self) -> list[int] | None:
        """The next choices to take, the last point met turning first; None when every
        combination was taken."""
        taken = [self.plan[i] if i < len(self.plan) else 0 for i in range(len(self.arities))]
        for at in reversed(range(len(taken))):
            if taken[at] + 1 < self.arities[at]:
                return [*taken[:at], taken[at] + 1]
        return None


def _branches(node: ast.IfExp | ast.BoolOp) -> list[ast.expr]:
    """The values a conditional or a boolean operation may take."""
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    return list(node.values) if isinstance(node.op, ast.Or) else [node.values[-1]]


def _split_string(node: ast.expr) -> ast.expr | None:
    """The string ``*".ssh/authorized_keys".split("/")`` splits into path pieces; None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value if node.func.attr == "split" else None
    return None


def _item(held: ast.Dict | ast.List | ast.Tuple, key: object) -> ast.expr | None:
    """The value a literal dict holds under `key`, or a list's item at `key`; None."""
    if isinstance(held, ast.Dict):
        for name, value in zip(held.keys, held.values, strict=True):
            if isinstance(name, ast.Constant) and name.value == key:
                return value
        return None
    if isinstance(key, int) and -len(held.elts) <= key < len(held.elts):
        item = held.elts[key]
        return None if isinstance(item, ast.Starred) else item
    return None


def _parent(path: str) -> str:
    """The folder holding `path`: its last name dropped, or ``/..`` added when it ends in
    no name (``@pkg``, ``*``, ``~``, ``..``)."""
    head, _, tail = path.rpartition("/")
    if head and tail not in ("", ".", "..", "*", "~", "@pkg"):
        return head
    return f"{path}/.."


def _joined(pieces: list[str]) -> str | None:
    """Path pieces joined as ``os.path.join`` does (an absolute or home piece restarts)."""
    joined = ""
    for piece in pieces:
        joined = piece if piece.startswith(("/", "~")) or not joined else f"{joined}/{piece}"
    return joined or None


def _items(node: ast.expr) -> list[ast.expr]:
    """The operands of ``%``: a tuple's items, or the one value."""
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _percent(template: str, pieces: list[str]) -> str:
    """``"%s/.ssh" % home`` with the pieces in place, ``*`` past them."""
    given = iter(pieces)
    return _PERCENT.sub(lambda m: "%" if m.group() == "%%" else next(given, "*"), template)


def _format(template: str, pieces: list[str], keywords: dict[str | None, str]) -> str:
    """``"{}/.ssh".format(home)`` with the pieces in place, ``*`` for a field not known."""
    given = iter(pieces)

    def field(match: re.Match[str]) -> str:
        key = match.group(1).split("!", 1)[0].split(":", 1)[0]
        if not key:
            return next(given, "*")
        if key.isdigit():
            return pieces[int(key)] if int(key) < len(pieces) else "*"
        return keywords.get(key, "*")

    return _FIELD.sub(field, template)
