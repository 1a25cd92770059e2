"""The skill's Python modules, analysed together: :class:`PythonPackage`.

A helper module of the skill (``from helper import run_it``, ``import helper;
helper.run_it(...)``, ``from .helper import Tool``) must not hide what it wraps or returns.
``scanner`` makes one of these over every Python file of the package before any rule runs
(pass one: each module parsed and analysed on its own, ``ModuleAnalysis``, then the summaries
of its functions taken, ``Wrappers.exported``); ``PythonScan`` then asks it (pass two) for
the wrapper or the returned labels of a name another module imports. A function that only
forwards to ``__import__`` or ``getattr`` resolves, in every module that calls it, as what it
forwards to (``ModuleAnalysis.imported_pass_throughs``); a name a module binds to an
imported callable (``runner = os.system``) is that callable where another module imports
it (``ModuleAnalysis.imported_aliases``). The summaries are taken
from each module's own analysis only, so the order of the modules never changes a result.
At most :data:`MAX_MODULES` modules are analysed together; a module is named by its file's
stem (``scripts/helper.py`` is ``helper``), the caller's own folder first.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Final

from skillweave.skills.scan._python._analysis import ModuleAnalysis
from skillweave.skills.scan._python._parse import parse
from skillweave.skills.scan._python._taint import Labels
from skillweave.skills.scan._python._wrappers import Wrapper

__all__ = ["MAX_MODULES", "PythonPackage"]

MAX_MODULES: Final = 200
_MAX_ALIASES: Final = 2000
"""Names per module another module may import as a callable's alias, at most."""


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
        self._by_stem: dict[str, list[str]] = {}
        for path, analysis in self.modules.items():
            if isinstance(analysis, ModuleAnalysis):
                self._exports[path] = analysis.wrappers.exported()
                stem = posixpath.splitext(posixpath.basename(path))[0]
                self._by_stem.setdefault(stem, []).append(path)
        exported = self._exported_aliases()
        for path, analysis in self.modules.items():
            if isinstance(analysis, ModuleAnalysis) and len(self.modules) > 1:
                analysis.imported_aliases(
                    {k: v for k, v in exported.items() if self._module(k.split(".")[0], path)
                     != path}
                )  # fmt: skip
                analysis.imported_pass_throughs(lambda name, path=path: self._function(name, path))
                analysis.taint.external = lambda name, path=path: self.returns(name, path)
                analysis.taint.propagate()

    def _exported_aliases(self) -> dict[str, str]:
        """``helpers.runner`` → ``os.system`` for each name a module of the skill binds to an
        imported callable (``runner = os.system``, ``from os import system as runner``)."""
        found: dict[str, str] = {}
        if len(self.modules) < 2:
            return found
        for path, analysis in self.modules.items():
            if not isinstance(analysis, ModuleAnalysis):
                continue
            stem = posixpath.splitext(posixpath.basename(path))[0]
            for name, target in list(analysis.index.aliases.items())[:_MAX_ALIASES]:
                if "." in target and name != target.split(".", 1)[0]:
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
        """The labels of what `name` (another module's function) returns."""
        found = self.wrapper(name, caller)
        return dict(found[0].returns) if found is not None else {}

    def _function(self, name: str, caller: str) -> Wrapper | None:
        found = self.wrapper(name, caller)
        return found[0] if found is not None else None

    def _module(self, stem: str, caller: str) -> str | None:
        paths = self._by_stem.get(stem)
        if not paths:
            return None
        folder = posixpath.dirname(caller)
        return next((p for p in paths if posixpath.dirname(p) == folder), paths[0])
