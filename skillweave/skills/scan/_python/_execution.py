"""The Python rules about running code: :class:`ExecutionRules`.

``exec``/``eval``/``compile`` of decoded or fetched data (``exec.decoded-payload``, critical)
or of a value built at run time (``exec.dynamic-code``); ``__import__`` of a computed name;
functions built from decoded code; marshalled code and chr-joins (``obfuscation.packed-code``);
a socket wired to the standard streams (``exec.reverse-shell``). Called by ``PythonScan`` for
every call of the module.
"""

from __future__ import annotations

import ast

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import is_exec_sink, maps_chr
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._values import Values

__all__ = ["ExecutionRules"]


class ExecutionRules:
    """Dynamic code, packed code and reverse shells, call by call.

    Args:
        findings: where to report.
        values: resolves and approximates arguments.
        taint: says what makes an argument decoded or fetched data.
    """

    def __init__(self, findings: Findings, values: Values, taint: Taint) -> None:
        self.findings = findings
        self.values = values
        self.taint = taint

    def code(self, call: ast.Call, name: str, last: str, line: int) -> None:
        """Code run or built at run time, and packed code (`name`: the callee, `last` its
        last part)."""
        if is_exec_sink(name):
            self._exec(call, name, line)
        elif name in ("__import__", "importlib.import_module") and call.args:
            if self.values.approx(call.args[0]) is None:
                self.findings.add("exec.dynamic-code", line, "imports a module named at run time")
        elif name in ("types.FunctionType", "types.CodeType") and any(
            self.taint.source(a) for a in call.args
        ):
            self.findings.add("exec.decoded-payload", line, "builds a function from decoded code")
        if name in {"marshal.loads", "marshal.load"}:
            self.findings.add("obfuscation.packed-code", line, "loads marshalled code objects")
        if last == "join" and call.args and maps_chr(call.args[0], self.values):
            self.findings.add(
                "obfuscation.packed-code", line, "builds a string from character codes"
            )

    def streams(self, call: ast.Call, name: str, line: int) -> None:
        """A socket duplicated onto the standard streams (``os.dup2(s.fileno(), 0)``)."""
        if name == "os.dup2" and call.args and _calls_attribute(call.args[0], "fileno"):
            self.findings.add("exec.reverse-shell", line, "wires a socket to the standard streams")

    def _exec(self, call: ast.Call, name: str, line: int) -> None:
        if not call.args:
            return
        argument = call.args[0]
        source = self.taint.source(argument)
        if source is not None:
            self.findings.add("exec.decoded-payload", line, f"{name}() runs code from {source}")
        elif not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
            self.findings.add("exec.dynamic-code", line, f"{name}() of a value built at run time")


def _calls_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr == attribute)
    )
