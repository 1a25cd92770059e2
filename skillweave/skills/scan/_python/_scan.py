"""One Python module scanned: :class:`PythonScan`, which runs the rule families in a fixed
order over a module already analysed (``_analysis``).

Every call is handed to the rule families in the order the findings were always made (the
collector keeps the first finding of a rule on a line): code execution (``_execution``),
dynamic lookups (``_lookup``), processes (``_processes``), file writes (``_files``), network
use (``_network``), reverse-shell streams, credential paths; then every string constant (URLs,
credential paths), then the environment taken wholesale (``_environment``). A call of a
wrapper (``_wrappers``: of this module, or of another module of the skill through
``_package``) is also judged as each call it wraps, with the caller's arguments, at the
caller's line. Called by ``scanner`` for each Python file that parses.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._analysis import ModuleAnalysis
from skillweave.skills.scan._python._built import BuiltStrings
from skillweave.skills.scan._python._closures import dotted
from skillweave.skills.scan._python._environment import EnvironmentRules
from skillweave.skills.scan._python._execution import ExecutionRules
from skillweave.skills.scan._python._files import FileRules, looked_for
from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import is_process_sink, last_name
from skillweave.skills.scan._python._lookup import LookupRules
from skillweave.skills.scan._python._network import NetworkRules
from skillweave.skills.scan._python._package import PythonPackage
from skillweave.skills.scan._python._parse import parse
from skillweave.skills.scan._python._processes import ProcessRules
from skillweave.skills.scan._python._unwrap import Unwrapped
from skillweave.skills.scan._python._wrappers import Wrapper
from skillweave.skills.scan._text import Collector, Source

__all__ = ["PythonScan", "parse"]

_MAX_INLINED: Final = 500
"""Calls read through wrappers per module, at most."""
_MATCHERS: Final = frozenset({"endswith", "startswith", "fnmatch", "fnmatchcase", "match",
                              "fullmatch", "search"})  # fmt: skip


class PythonScan:
    """The rules over one analysed module; :meth:`run` adds findings and facts.

    Args:
        source: the file.
        module: its analysis (or its parsed tree, analysed here).
        out: the scan's collector.
        package: the skill's Python modules, for the wrappers other modules export.
    """

    def __init__(
        self,
        source: Source,
        module: ModuleAnalysis | ast.Module,
        out: Collector,
        package: PythonPackage | None = None,
    ) -> None:
        analysis = module if isinstance(module, ModuleAnalysis) else ModuleAnalysis(module)
        findings = Findings(source, out)
        self.source = source
        self.analysis = analysis
        self.package = package
        self.index = analysis.index
        self.values = analysis.values
        self.taint = analysis.taint
        self.execution = ExecutionRules(findings, self.values, self.taint, analysis.wrappers)
        self.lookups = LookupRules(findings, self.values, self.taint, self.index)
        self.processes = ProcessRules(findings, self.values, self.index, self.taint)
        self.files = FileRules(findings, self.values)
        self.network = NetworkRules(findings, self.values, self.taint)
        self.environment = EnvironmentRules(findings, self.index, self.values)
        self.built = BuiltStrings(findings, self.index, self.values, files=self.files,
                                  network=self.network)  # fmt: skip
        self._wrapped_calls: list[ast.Call] = []
        self._looked_for: frozenset[str] = frozenset()

    @property
    def received(self) -> list[tuple[int, str, str, str]]:
        """What the module does with fetched data, and the secrets it sends: (line,
        "decodes"/"deserialises"/"runs"/"sends", what, excerpt), for ``scanner``'s
        escalation of undeclared network use."""
        return [*self.execution.received, *self.network.sent]

    def run(self) -> None:
        """Apply every rule family to the analysed module."""
        for name, line in self.index.imports:
            self.network.imported(name, line)
        for call in self.index.calls:
            self._call(call, hidden=False)
            self._wrapped(call)
        self._strings()
        self.built.run()
        self.environment.run(self._wrapped_calls)

    def _call(self, call: ast.Call, *, hidden: bool) -> None:
        name = self.values.qualname(call.func) or ""
        last = last_name(call, name)
        line = call.lineno
        unwrapped = self._unwrapped(call)
        hidden = (
            hidden
            or unwrapped is not None
            or self.values.indirect(call.func)
            or self.lookups.through(call.func) is not None
            or (isinstance(call.func, ast.Name) and call.func.id in self.index.assigned_aliases)
            or (bool(self.values.external_aliases) and self._external_alias(call.func))
        )
        self.execution.code(call, name, last, line, hidden=hidden)
        if unwrapped is not None and unwrapped.lookup:
            self.lookups.unwrapped(call, name, line, unwrapped)
        self.lookups.call(call, name, line)
        if is_process_sink(name, last):
            self.processes.call(call, name, line, hidden=hidden)
        self.files.writes(call, name, line)
        self.network.called(name, last, line)
        self.network.connects(call, name, line)
        self.execution.streams(call, name, line)
        self.files.credentials(call, line)

    def _external_alias(self, func: ast.expr) -> bool:
        """Whether `func` names another module's alias of a callable (``helpers.runner``)."""
        dotted = _dotted(func)
        if "." not in dotted:
            return False
        head, rest = dotted.split(".", 1)
        return f"{self.index.aliases.get(head, head)}.{rest}" in self.values.external_aliases

    def _unwrapped(self, call: ast.Call) -> Unwrapped | None:
        """How `call` or its callee was reached when ``_unwrap`` rewrote it (also through a
        name assigned the rewritten callee once)."""
        made = self.analysis.unwrapped
        if not made:
            return None
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.index.assigned_aliases:
            values = self.index.assigned.get(func.id) or []
            func = values[0] if len(values) == 1 else func
        return made.get(id(call)) or made.get(id(func))

    def _wrapped(self, call: ast.Call) -> None:
        """`call` judged as each call it wraps (a wrapper of this module or another; the
        wrappers of wrappers are already expanded in their templates)."""
        if len(self._wrapped_calls) >= _MAX_INLINED:
            return
        for wrapper, bound in self._wrappers_of(call):
            for inlined in self.analysis.wrappers.inline(call, wrapper, bound=bound):
                self._wrapped_calls.append(inlined)
                self._call(inlined, hidden=True)
                if isinstance(inlined.func, ast.Call):  # a parameter called: what was handed
                    self._product_called(inlined)
        self._product_called(call)

    def _wrappers_of(self, call: ast.Call) -> list[tuple[Wrapper, bool]]:
        """The wrappers `call` reaches: the module's own, else another module's."""
        found = self.analysis.wrappers.calls(call)
        if not found and self.package is not None:
            name = self._external_name(call.func)
            external = self.package.wrapper(name, self.source.path) if name else None
            found = [external] if external is not None else []
        return found

    def _product_called(self, call: ast.Call) -> None:
        """``lookup("exec")(code)``, ``helpers.make()(code)``: `call` judged as a call of
        what its callee's call hands back."""
        if isinstance(call.func, ast.Call) and self.package is not None:
            self._factory_call(call, call.func, self.package)
        if isinstance(call.func, ast.Call):  # lookup("exec")(code): what the lookup returns
            for wrapper, bound in self._wrappers_of(call.func):
                for inlined in self.analysis.wrappers.inline(call.func, wrapper, bound=bound):
                    outer = ast.Call(func=inlined, args=call.args, keywords=call.keywords)
                    ast.copy_location(outer, call)
                    self._wrapped_calls.append(outer)
                    self._call(outer, hidden=True)

    def _factory_call(self, call: ast.Call, factory: ast.Call, package: PythonPackage) -> None:
        """``helpers.make()(code)``: the callable another module's `factory` hands back,
        called with `call`'s arguments."""
        name = self.values.qualname(factory.func) or ""
        if "." not in name or factory.keywords:
            return
        if any(isinstance(a, ast.Starred) for a in factory.args):
            return
        args = [self.values.qualname(a) for a in factory.args]
        made = package.product(name, args, self.source.path)
        if made is None:
            return
        outer = ast.Call(func=dotted(made), args=call.args, keywords=call.keywords)
        ast.copy_location(outer, call)
        self._wrapped_calls.append(outer)
        self._call(outer, hidden=True)

    def _external_name(self, func: ast.expr) -> str:
        """``helper.run_it`` for a call of another module's function; ``helper.Tool.run``
        for a method called on ``Tool()``."""
        name = self.values.qualname(func)
        if name:
            return name
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if isinstance(receiver, ast.Name):
                values = self.index.assigned.get(receiver.id) or []
                receiver = values[0] if len(values) == 1 else receiver
            if isinstance(receiver, ast.Call):
                owner = self.values.qualname(receiver.func)
                return f"{owner}.{func.attr}" if owner else ""
        return ""

    def _strings(self) -> None:
        self._looked_for = looked_for(self.index.order, self.index.parents)
        for constant in self.index.constants:
            if id(constant) in self.index.docstrings:
                continue
            value = constant.value
            line = constant.lineno
            self.network.urls(value, line)
            if (
                len(value) < 512
                and not any(c.isspace() for c in value)
                and not self._pattern(constant)
            ):
                self.files.credential(value, line)

    def _pattern(self, constant: ast.Constant) -> bool:
        """A name compared with or matched against (``f == ".env"``, ``name.endswith((".pem",
        ".key"))``, ``fnmatch(f, "id_rsa*")``): what a scanner looks for, not a file read."""
        parent = self.index.parents.get(id(constant))
        if isinstance(parent, ast.Tuple | ast.List | ast.Set):
            parent = self.index.parents.get(id(parent))
        if isinstance(parent, ast.Compare):
            return True
        if isinstance(parent, ast.Assign | ast.AnnAssign):  # EXTENSIONS = {".env", ...}
            target = parent.targets[0] if isinstance(parent, ast.Assign) else parent.target
            return isinstance(target, ast.Name) and target.id in self._looked_for
        if isinstance(parent, ast.Call) and constant is not parent.func:
            name = self.values.qualname(parent.func) or ""
            last = parent.func.attr if isinstance(parent.func, ast.Attribute) else name
            return last in _MATCHERS or name.startswith(("fnmatch.", "re."))
        return False


def _dotted(func: ast.expr) -> str:
    """The callee as written (``helpers.runner``), no alias resolved; empty for others."""
    parts: list[str] = []
    for _ in range(32):
        if isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        elif isinstance(func, ast.Name):
            parts.append(func.id)
            return ".".join(reversed(parts))
        else:
            break
    return ""
