"""The Python rules about files and credentials: :class:`FileRules`.

Writes (``open`` in a writing mode, ``os.open`` with writing flags, ``Path.write_text`` and
friends, copies, renames, links, ``Path.replace``/``rename``) whose target is outside the
workspace (``fs.write-outside``) or survives the run (``fs.persistence``), as
``_text.write_target`` classifies paths, each path the target may be judged
(``Values.paths``: either branch of a conditional, a helper's returns, a parameter's
arguments); a file that runs later in a folder not known (``*/.ssh/authorized_keys``) is
high; a mode that may make a file that runs later executable or writable by others is
persistence; unpacking (``extractall``) and in-place edits (``fileinput``) write; a package
manager's configuration written outside the workspace (``fs.persistence`` and
``dependencies.index-config``), or anywhere with an index other than the public one
(``_text.index_setting``), and code planted where it runs later on its own
(``exec.planted-code``), as ``_planted`` says; credential files named in a call's
arguments, in the path a call reads, or in a string constant (``secrets.credential-path``,
as ``_text.credential_path`` says), except names a module only looks for (:func:`looked_for`:
a literal set of suffixes only ever tested with ``in`` or ``endswith``). Called by
``PythonScan`` for every call and every string constant of the module.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Final

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import COPY_CALLS, OPEN_CALLS, WRITE_METHODS, write_mode
from skillweave.skills.scan._python._planted import planted, startup_hook
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import (
    credential_path,
    index_setting,
    lasting,
    package_config,
    write_target,
)

__all__ = ["FileRules", "looked_for"]

_WRITES: Final = frozenset({"write", "writelines"})
_SUFFIX_TESTS: Final = frozenset({"endswith", "startswith"})
_OPENING_BITS: Final = 0o133
"""Execute bits and write by group or others: a mode with one runs or takes the file."""
_MODE_CALLS: Final = frozenset({"os.chmod", "os.lchmod", "os.chown", "os.lchown",
                                "shutil.chown"})  # fmt: skip
_MAX_SEARCHED: Final = 20_000
"""Nodes of ``with`` blocks searched for what they write, per module, at most."""


class FileRules:
    """Writes outside the workspace, persistence and credential paths.

    Args:
        findings: where to report.
        values: approximates the paths.
    """

    def __init__(self, findings: Findings, values: Values) -> None:
        self.findings = findings
        self.values = values
        self._searched = 0

    def writes(self, call: ast.Call, name: str, line: int) -> None:
        """The file `call` writes, if any (`name`: the callee)."""
        if name in OPEN_CALLS or name == "os.open":
            self._open(call, name, line)
        elif isinstance(call.func, ast.Attribute) and call.func.attr in WRITE_METHODS:
            content = call.args[0] if call.args and call.func.attr.startswith("write") else None
            self._write(call.func.value, line, call.func.attr, content)
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "open":
            mode = call.args[0] if call.args else _keyword(call, "mode")  # p.open(mode="a")
            if mode is not None and self._writing(mode):
                self._write(call.func.value, line, "open", self._written(call))
        elif name in COPY_CALLS and len(call.args) >= 2:
            copied = self.values.approx(call.args[0])
            inside = copied.rstrip("/").rsplit("/", 1)[-1] if copied else "*"
            inside = "*" if name == "shutil.copytree" else inside  # the files of the tree
            self._write(call.args[1], line, name, inside=inside)
        elif _moved(call):  # tmp.replace(target), tmp.rename(target): Path's, not str's
            self._write(call.args[0], line, call.func.attr)  # type: ignore[attr-defined]
        elif (destination := _destination(call, name)) is not None:
            self._write(destination, line, name or "extractall")
        elif name in _MODE_CALLS and call.args and ("chown" in name or _opens_up(call, 1)):
            self._mode(call.args[0], line, name)
        elif _changes_mode(call) and _opens_up(call, 0):
            self._mode(call.func.value, line, call.func.attr)  # type: ignore[attr-defined]

    def credentials(self, call: ast.Call, line: int) -> None:
        """Credential files `call` names. Paths built from pieces (``Path.home() / ".aws" /
        "credentials"``) are read as a whole where they are used."""
        for argument in call.args[:2]:
            path = self.values.approx(argument)
            if path and "/" in path:
                self.credential(path, line)
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("read_text", "read_bytes",
                                                                        "open"):  # fmt: skip
            path = self.values.approx(call.func.value)
            if path:
                self.credential(path, line)

    def credential(self, path: str, line: int) -> None:
        """A finding and a fact when `path` names a credential file."""
        found = credential_path(path)
        if found is None:
            return
        what, severity = found
        text = self.findings.excerpt(line)
        self.findings.add("secrets.credential-path", line, f"names {what} ({path})",
                          severity=severity)  # fmt: skip
        self.findings.facts.credentials.append((line, what, text))

    def _open(self, call: ast.Call, name: str, line: int) -> None:
        target = call.args[0] if call.args else _keyword(call, "file")
        if name == "os.open":
            flags = {
                n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")
                for n in (ast.walk(call.args[1]) if len(call.args) > 1 else ())
            }
            writing = bool(flags & {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND"})
        else:
            mode = call.args[1] if len(call.args) > 1 else _keyword(call, "mode")
            writing = mode is not None and self._writing(mode)
        if writing and target is not None:
            self._write(target, line, name, self._written(call))

    def _writing(self, mode: ast.expr) -> bool:
        """Whether an ``open`` mode writes, on any branch (``"a" if append else "r"``)."""
        return any(write_mode(m) for m in self.values.paths(mode))

    def _write(
        self,
        target: ast.AST,
        line: int,
        how: str,
        content: ast.expr | None = None,
        *,
        inside: str | None = None,
    ) -> None:
        """Each path `target` may be (either branch of a conditional, each return of a
        helper...) judged as a write; the worst one stays (one finding a rule and line).
        A copy judges the file `inside` the target too (``copy(unit, "~/.config/autostart")``
        writes ``~/.config/autostart/unit``)."""
        text = self.values.approx(content) if content is not None else None
        for path in self.values.paths(target):
            self._judge(path, line, how, text)
            if inside and inside not in ("..", ".") and not path.endswith(f"/{inside}"):
                self._judge(f"{path.rstrip('/')}/{inside}", line, how, text)

    def _judge(self, path: str, line: int, how: str, text: str | None) -> None:
        rule = write_target(path)
        does = planted(path, text) if text else None
        manager = package_config(path) if rule is not None else None
        if rule is None and does is not None and startup_hook(path):  # the folder not known
            rule = "fs.persistence"
        if rule is None:
            self._unrooted(path, line, how, text)
            return
        if manager is not None:
            self.findings.add("fs.persistence", line, f"writes {path} ({how}), {manager}'s "
                              "configuration: every later install reads it")  # fmt: skip
            self.findings.add("dependencies.index-config", line, f"writes {manager}'s package "
                              f"configuration {path} outside the workspace: later installs "
                              "use the index it names")  # fmt: skip
        elif rule == "fs.persistence":
            self.findings.add(rule, line, f"writes {path} ({how}), which runs again later")
        elif rule == "fs.write-outside":
            self.findings.add(rule, line, f"writes {path} ({how}), outside the workspace")
        if rule == "fs.persistence" and does is not None:
            self.findings.add("exec.planted-code", line, f"plants code in {path} that {does} "
                              f"whenever it runs: {text[:100]!r}")  # fmt: skip

    def _mode(self, target: ast.AST, line: int, how: str) -> None:
        """A file's mode or owner changed: persistence when it is one that runs later (a git
        hook made executable, an ``authorized_keys`` opened to others)."""
        for path in self.values.paths(target):
            if write_target(path) == "fs.persistence":
                self.findings.add("fs.persistence", line, f"changes the mode of {path} ({how}), "
                                  "which runs again later")  # fmt: skip
                return

    def _unrooted(self, path: str, line: int, how: str, text: str | None) -> None:
        """A write whose folder is not known (``*/.ssh/authorized_keys``, a path the script
        is given) or inside the workspace: high when it names a file that runs again later
        in whatever folder, and ``dependencies.index-config`` when it is a package manager's
        configuration that points installs at another index (a project's ``.npmrc`` or
        ``uv.toml`` is read by every later install there)."""
        manager = package_config(path)
        setting = index_setting(text) if manager is not None and text else None
        if setting is not None:
            self.findings.add("dependencies.index-config", line, f"writes {manager}'s package "
                              f"configuration {path} ({how}) with {setting!r}: later installs "
                              "use that index")  # fmt: skip
        if path.startswith("*") and (lasting(path) or setting is not None):
            self.findings.add("fs.persistence", line, f"writes {path} ({how}), which lasts "
                              "past the run wherever its folder is (the folder is not known)",
                              severity="high")  # fmt: skip

    def _written(self, opened: ast.Call) -> ast.expr | None:
        """What is written to the file `opened` opens: ``open(p, "w").write(x)`` or
        ``with open(p, "w") as f: f.write(x)`` (the first write)."""
        parents = self.values.index.parents
        parent = parents.get(id(opened))
        if isinstance(parent, ast.Attribute) and parent.attr in _WRITES:
            call = parents.get(id(parent))
            return call.args[0] if isinstance(call, ast.Call) and call.args else None
        if not isinstance(parent, ast.withitem) or not isinstance(parent.optional_vars, ast.Name):
            return None
        handle = parent.optional_vars.id
        block = parents.get(id(parent))
        for node in ast.walk(block) if block is not None else ():
            self._searched += 1
            if self._searched > _MAX_SEARCHED:
                break
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _WRITES
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == handle
                and node.args
            ):
                return node.args[0]
        return None


def looked_for(order: Sequence[ast.AST], parents: Mapping[int, ast.AST]) -> frozenset[str]:
    """The module's names bound once, to a literal set, tuple or list, and read only as
    what a value is tested against (``path.suffix in EXTENSIONS``, ``name.endswith(SUFFIXES)``):
    the names they hold are looked for, not opened. `order` is every node of the module,
    `parents` each node's parent."""
    bound: dict[str, int] = {}
    literal: set[str] = set()
    other: set[str] = set()
    for node in order:
        if not isinstance(node, ast.Name):
            continue
        parent = parents.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            bound[node.id] = bound.get(node.id, 0) + 1
            if _literal_binding(node, parent):
                literal.add(node.id)
        elif not _tested_against(node, parent):
            other.add(node.id)
    return frozenset(n for n in literal - other if bound[n] == 1)


def _literal_binding(name: ast.Name, parent: ast.AST | None) -> bool:
    """`name` is the one target of an assignment of a literal set, tuple or list."""
    targets = parent.targets if isinstance(parent, ast.Assign) else []
    value = parent.value if isinstance(parent, ast.Assign | ast.AnnAssign) else None
    if isinstance(parent, ast.AnnAssign):
        targets = [parent.target]
    return targets == [name] and isinstance(value, ast.Set | ast.Tuple | ast.List)


def _tested_against(name: ast.Name, parent: ast.AST | None) -> bool:
    """`name` is what a value is tested against: the right of ``in``/``not in``, or the
    suffixes of ``endswith``/``startswith``."""
    if isinstance(parent, ast.Compare):
        return name is not parent.left and all(
            isinstance(o, ast.In | ast.NotIn) for o in parent.ops
        )
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute):
        return parent.func.attr in _SUFFIX_TESTS and name in parent.args
    return False


def _destination(call: ast.Call, name: str) -> ast.expr | None:
    """Where a call writes files it unpacks or edits in place: ``extractall(path)``,
    ``shutil.unpack_archive(archive, folder)``, ``fileinput.input(files, inplace=True)``."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "extractall":
        return call.args[0] if call.args else _keyword(call, "path")
    if name == "shutil.unpack_archive":
        return call.args[1] if len(call.args) > 1 else _keyword(call, "extract_dir")
    if name in ("fileinput.input", "fileinput.FileInput"):
        inplace = _keyword(call, "inplace")
        if isinstance(inplace, ast.Constant) and inplace.value:
            return call.args[0] if call.args else _keyword(call, "files")
    return None


def _changes_mode(call: ast.Call) -> bool:
    """``path.chmod(mode)``."""
    return isinstance(call.func, ast.Attribute) and call.func.attr in ("chmod", "lchmod")


def _opens_up(call: ast.Call, at: int) -> bool:
    """Whether a ``chmod`` may make a file executable or writable by others: any mode but a
    constant without those bits (``0o600``, ``0o644`` tighten or keep a file as it is)."""
    mode = call.args[at] if len(call.args) > at else _keyword(call, "mode")
    if not isinstance(mode, ast.Constant) or not isinstance(mode.value, int):
        return True
    return bool(mode.value & _OPENING_BITS)


def _moved(call: ast.Call) -> bool:
    """``p.rename(target)`` or ``p.replace(target)``: one argument, as ``Path`` takes (a
    string's ``replace`` takes two)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("rename", "replace")
        and len(call.args) == 1
        and not call.keywords
    )


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)
