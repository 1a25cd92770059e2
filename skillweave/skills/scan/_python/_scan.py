"""One Python module scanned: :func:`parse` and :class:`PythonScan`, which runs the rule
families in a fixed order.

``PythonScan`` builds the module's index (``_index``) in one walk, marks the names that hold
decoded or fetched data (``_taint``), then hands every call to the rule families in the
order the findings were always made (the collector keeps the first finding of a rule on a
line): code execution (``_execution``), processes (``_processes``), file writes (``_files``),
network use (``_network``), reverse-shell streams, credential paths; then every string
constant (URLs, credential paths), then the environment taken wholesale (``_environment``).
Called by ``scanner`` for each Python file that parses.
"""

from __future__ import annotations

import ast
import warnings

from skillweave.skills.imports import PARSE_LOCK
from skillweave.skills.scan._python._environment import EnvironmentRules
from skillweave.skills.scan._python._execution import ExecutionRules
from skillweave.skills.scan._python._files import FileRules
from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import is_process_sink, last_name
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._network import NetworkRules
from skillweave.skills.scan._python._processes import ProcessRules
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import Collector, Source

__all__ = ["PythonScan", "parse"]


def parse(data: bytes, path: str) -> ast.Module | str:
    """The module's tree, or why it does not parse (one line)."""
    try:
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in scanned code warn
            return ast.parse(data, filename=path)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg)
    except (ValueError, RecursionError, MemoryError, SystemError, OverflowError) as exc:
        return f"{type(exc).__name__}: {exc}"[:160] or type(exc).__name__


class PythonScan:
    """The rules over one parsed module; :meth:`run` adds findings and facts.

    Args:
        source: the file.
        tree: its parsed module (:func:`parse`).
        out: the scan's collector.
    """

    def __init__(self, source: Source, tree: ast.Module, out: Collector) -> None:
        findings = Findings(source, out)
        self.index = ModuleIndex(tree)
        self.values = Values(self.index)
        self.taint = Taint(self.index, self.values)
        self.execution = ExecutionRules(findings, self.values, self.taint)
        self.processes = ProcessRules(findings, self.values, self.index)
        self.files = FileRules(findings, self.values)
        self.network = NetworkRules(findings)
        self.environment = EnvironmentRules(findings, self.index, self.values)

    def run(self) -> None:
        """Walk the module once, then apply every rule family."""
        self.index.build(self.values.qualname)
        for name, line in self.index.imports:
            self.network.imported(name, line)
        self.taint.propagate()
        for call in self.index.calls:
            self._call(call)
        self._strings()
        self.environment.run()

    def _call(self, call: ast.Call) -> None:
        name = self.values.qualname(call.func) or ""
        last = last_name(call, name)
        line = call.lineno
        self.execution.code(call, name, last, line)
        if is_process_sink(name, last):
            self.processes.call(call, name, line)
        self.files.writes(call, name, line)
        self.network.called(name, last, line)
        self.execution.streams(call, name, line)
        self.files.credentials(call, line)

    def _strings(self) -> None:
        for constant in self.index.constants:
            if id(constant) in self.index.docstrings:
                continue
            value = constant.value
            line = constant.lineno
            self.network.urls(value, line)
            if len(value) < 512 and not any(c.isspace() for c in value):
                self.files.credential(value, line)
