"""The skill's Python modules, analysed together: :class:`PythonPackage`.

A helper module of the skill (``from helper import run_it``, ``import helper;
helper.run_it(...)``, ``from .helper import Tool``) must not hide what it wraps or returns.
``scanner`` makes one of these over every Python file of the package before any rule runs
(pass one: each module parsed and analysed on its own, ``ModuleAnalysis``, then the summaries
of its functions taken, ``Wrappers.exported``); ``PythonScan`` then asks it (pass two) for
the wrapper or the returned labels of a name another module imports. A function that only
forwards to ``__import__`` or ``getattr`` resolves, in every module that calls it, as what it
forwards to (``ModuleAnalysis.imported_pass_throughs``); a name a module binds to an
imported callable or a dangerous builtin (``runner = os.system``, ``run = exec``, ``run =
functools.partial(exec)``) is that callable where another module imports it
(``ModuleAnalysis.imported_aliases``); a module-level variable holding decoded or fetched
data (``CODE = unpack(BLOB)``) carries its labels where another module reads it. The
summaries are taken from each module's own analysis only, so the order of the modules never
changes a result.
At most :data:`MAX_MODULES` modules are analysed together; a module is named by its file's
stem (``scripts/helper.py`` is ``helper``), the caller's own folder first.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Mapping
from typing import Final

from skillweave.skills.scan._python._analysis import ModuleAnalysis
from skillweave.skills.scan._python._closures import dotted, factory_product
from skillweave.skills.scan._python._flow import dangerous
from skillweave.skills.scan._python._fold import Folder
from skillweave.skills.scan._python._parse import parse
from skillweave.skills.scan._python._taint import Labels
from skillweave.skills.scan._python._wrappers import Wrapper

__all__ = ["MAX_MODULES", "PythonPackage"]

MAX_MODULES: Final = 200
_MAX_ALIASES: Final = 2000
"""Names per module another module may import as a callable's alias, at most."""
_MAX_GLOBALS: Final = 2000
"""Module-level variables per module whose labels another module may read, at most."""


class PythonPackage:
    """Every Python module of one skill, parsed and analysed, and their summaries.

    Args:
        files: relative path → the file's bytes (already capped), Python files only.
    """

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.modules: dict[str, ModuleAnalysis | str] = {}
        for path in sorted(files)[:MAX_MODULES]:
            tree = parse(files[path], path)
            self.modules[path] = tree if isinstance(tree, str) else ModuleAnalysis(tree)
        self._exports: dict[str, dict[str, Wrapper]] = {}
        self._globals: dict[str, dict[str, Labels]] = {}
        self._by_stem: dict[str, list[str]] = {}
        for path, analysis in self.modules.items():
            if isinstance(analysis, ModuleAnalysis):
                self._exports[path] = analysis.wrappers.exported()
                self._globals[path] = _labelled_globals(analysis)
                stem = posixpath.splitext(posixpath.basename(path))[0]
                self._by_stem.setdefault(stem, []).append(path)
        exported = self._exported_aliases()
        for path, analysis in self.modules.items():
            if isinstance(analysis, ModuleAnalysis) and len(self.modules) > 1:
                analysis.values.folder.external = lambda name, path=path: self._foldable(name, path)
                analysis.imported_aliases(
                    {k: v for k, v in exported.items() if self._module(k.split(".")[0], path)
                     != path}
                )  # fmt: skip
                analysis.imported_pass_throughs(lambda name, path=path: self._function(name, path))
                analysis.imported_factories(
                    lambda name, args, path=path: self.product(name, args, path)
                )
                analysis.taint.external = lambda name, path=path: self.returns(name, path)
                analysis.taint.propagate()

    def _exported_aliases(self) -> dict[str, str]:
        """``helpers.runner`` → ``os.system`` for each name a module of the skill binds to an
        imported callable or a dangerous builtin (``runner = os.system``, ``from os import
        system as runner``, ``run = exec``, ``run = functools.partial(exec)``, ``class K:
        run = staticmethod(exec)`` as ``helpers.K.run``)."""
        found: dict[str, str] = {}
        if len(self.modules) < 2:
            return found
        for path, analysis in self.modules.items():
            if not isinstance(analysis, ModuleAnalysis):
                continue
            stem = posixpath.splitext(posixpath.basename(path))[0]
            aliases = {**_partials(analysis), **_class_callables(analysis),
                       **analysis.index.aliases}  # fmt: skip
            for name, target in list(aliases.items())[:_MAX_ALIASES]:
                if name == target.split(".", 1)[0]:
                    continue
                if "." in target or dangerous(target) is not None:
                    found.setdefault(f"{stem}.{name}", target)
        return found

    def analysis(self, path: str) -> ModuleAnalysis | str | None:
        """The module at `path` analysed, why it does not parse, or None when it was not
        among the modules analysed together."""
        return self.modules.get(path)

    def wrapper(self, name: str, caller: str) -> tuple[Wrapper, bool] | None:
        """The function another module of the skill exports as `name` (``helper.run_it``,
        ``helper.Tool.run``), seen from the module at `caller`, with whether its first
        parameter is bound (a method)."""
        parts = name.split(".")
        for split in range(1, len(parts)):
            module = self._module(parts[split - 1], caller)
            if module is None or module == caller:
                continue
            key = ".".join(parts[split:])
            found = self._exports.get(module, {}).get(key)
            if found is not None:
                return found, "." in key
        return None

    def returns(self, name: str, caller: str) -> Labels:
        """The labels of what `name` (another module's function) returns, or of what it
        holds when it is a variable of that module (``CODE = unpack(BLOB)`` there, read
        as ``helper.CODE`` or imported by name)."""
        found = self.wrapper(name, caller)
        if found is not None:
            return dict(found[0].returns)
        module_name, _, variable = name.rpartition(".")
        module = self._module(module_name.rsplit(".", 1)[-1], caller) if module_name else None
        if module is None or module == caller:
            return {}
        return dict(self._globals.get(module, {}).get(variable, {}))

    def _function(self, name: str, caller: str) -> Wrapper | None:
        found = self.wrapper(name, caller)
        return found[0] if found is not None else None

    def _foldable(self, name: str, caller: str) -> tuple[Folder, ast.expr | ast.FunctionDef] | None:
        """The folder of another module of the skill and the one function or the value
        assigned once that `name` names there (``names.label``, ``names.CODES``), for a
        fold here."""
        stem, _, member = name.rpartition(".")
        module = self._module(stem, caller) if stem and "." not in stem else None
        analysis = self.modules.get(module) if module is not None and module != caller else None
        if not isinstance(analysis, ModuleAnalysis):
            return None
        found = [*analysis.index.defs.get(member, []), *analysis.index.assigned.get(member, [])]
        if len(found) != 1 or isinstance(found[0], ast.AsyncFunctionDef):
            return None
        return analysis.values.folder, found[0]

    def product(self, name: str, args: list[str | None], caller: str) -> str | None:
        """The callable another module's factory `name` hands back (``_closures``), seen
        from the module at `caller`, when called with arguments naming `args` (dotted names;
        None for other values)."""
        stem, _, function = name.rpartition(".")
        module = self._module(stem, caller) if stem and "." not in stem else None
        analysis = self.modules.get(module) if module is not None and module != caller else None
        if not isinstance(analysis, ModuleAnalysis):
            return None
        given = [dotted(a) if a else ast.Constant(None) for a in args]
        call = ast.Call(ast.Name(function, ast.Load()), given, [])
        return factory_product(analysis.index, analysis.values, call)

    def _module(self, stem: str, caller: str) -> str | None:
        paths = self._by_stem.get(stem)
        if not paths:
            return None
        folder = posixpath.dirname(caller)
        return next((p for p in paths if posixpath.dirname(p) == folder), paths[0])


def _labelled_globals(analysis: ModuleAnalysis) -> dict[str, Labels]:
    """The labels of the module's own module-level variables that carry any, as its own
    analysis found them (before any other module's summaries were read)."""
    module = analysis.scopes.module
    found: dict[str, Labels] = {}
    for var, labels in analysis.taint.vars.items():
        if len(found) >= _MAX_GLOBALS:
            break
        if labels and var[0] == "n" and var[1] == module:
            found[var[2]] = dict(labels)
    return found


def _partials(analysis: ModuleAnalysis) -> dict[str, str]:
    """Names the module binds once to ``functools.partial`` of a dangerous callable → that
    callable (its bound arguments add nothing that makes it safe)."""
    found: dict[str, str] = {}
    for name, values in list(analysis.index.assigned.items())[:_MAX_ALIASES]:
        value = values[0] if len(values) == 1 else None
        if not isinstance(value, ast.Call) or not value.args:
            continue
        if analysis.values.qualname(value.func) != "functools.partial":
            continue
        target = analysis.values.qualname(value.args[0])
        if target is not None and dangerous(target) is not None:
            found[name] = target
    return found


def _class_callables(analysis: ModuleAnalysis) -> dict[str, str]:
    """``K.run`` → ``exec`` for each attribute a module-level class's body binds to a
    dangerous callable (``run = exec``, ``run = staticmethod(os.system)``)."""
    found: dict[str, str] = {}
    classes = [s for s in analysis.tree.body if isinstance(s, ast.ClassDef)]
    for cls in classes[:_MAX_ALIASES]:
        for statement in cls.body[:_MAX_ALIASES]:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target, value = statement.targets[0], statement.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in ("staticmethod", "classmethod")
                and len(value.args) == 1
            ):
                value = value.args[0]
            name = analysis.values.qualname(value) if isinstance(target, ast.Name) else None
            if name is not None and dangerous(name) is not None:
                found[f"{cls.name}.{target.id}"] = name  # type: ignore[attr-defined]
    return found
