"""The Python rules about running code: :class:`ExecutionRules`.

``exec``/``eval``/``compile`` (and ``timeit``, ``cProfile``, ``pdb`` given a string of
code) of decoded or fetched data (``exec.decoded-payload``, critical)
or of a value built at run time (``exec.dynamic-code``: high when it is a constant assembled
from pieces, or read from the environment or a file under the home folder; low for a
``compile()`` whose code object is thrown away, a syntax check, or that asks for a syntax
tree only); unsafe deserialisation of decoded or fetched bytes (``exec.deserialization``,
high; medium when reached through a lookup or a wrapper bandit cannot see); ``__import__``
of a computed name; functions built from decoded code; marshalled code and chr-joins
(``obfuscation.packed-code``); a socket wired to the standard streams
(``exec.reverse-shell``). Called by ``PythonScan`` for every call of the module.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import (
    CODE_RUNNERS,
    call_source,
    deserialiser,
    is_exec_sink,
    maps_chr,
    runner_code,
)
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._python._wrappers import Wrappers

__all__ = ["ExecutionRules"]

_RUN_FILES: Final = frozenset({"runpy.run_path", "execfile", "builtins.execfile"})
"""Calls that run the Python file at a path."""
_COMPILE: Final = frozenset({"compile", "builtins.compile"})
_ONLY_AST: Final = 0x400
"""``ast.PyCF_ONLY_AST``: ``compile()`` returns a syntax tree, which nothing can run."""
_ONLY_AST_NAMES: Final = frozenset({"ast.PyCF_ONLY_AST", "_ast.PyCF_ONLY_AST"})


class ExecutionRules:
    """Dynamic code, packed code and reverse shells, call by call.

    Args:
        findings: where to report.
        values: resolves and approximates arguments.
        taint: says what makes an argument decoded or fetched data.
        wrappers: says which calls read through a wrapper throw their result away.
    """

    def __init__(
        self, findings: Findings, values: Values, taint: Taint, wrappers: Wrappers | None = None
    ) -> None:
        self.findings = findings
        self.values = values
        self.taint = taint
        self.wrappers = wrappers
        self.received: list[tuple[int, str, str, str]] = []
        """(line, "decodes"/"deserialises"/"runs", what, excerpt) for each use of fetched
        data."""

    def code(self, call: ast.Call, name: str, last: str, line: int, *, hidden: bool) -> None:
        """Code run or built at run time, deserialisation, and packed code (`name`: the
        callee, `last` its last part; `hidden`: reached in a way bandit does not see)."""
        if is_exec_sink(name):
            self._exec(call, name, line)
        elif name in CODE_RUNNERS:
            self._runner(call, name, line)
        elif deserialiser(call, name):
            self._deserialise(call, name, line, hidden=hidden)
        elif name in ("__import__", "importlib.import_module") and call.args:
            if self.values.approx(call.args[0]) is None:
                self.findings.add("exec.dynamic-code", line, "imports a module named at run time")
        elif name in _RUN_FILES and call.args and (source := self._written(call)):
            self.findings.add("exec.decoded-payload", line,
                              f"{name} runs a file holding {source}")  # fmt: skip
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

        elif call.args and (decoder := call_source(call, self.values)) is not None:
            labels = self.taint.labels(call.args[0])
            # Plain base64 or gzip of a download is how images and archives travel; a
            # layered decode, a text codec or marshal of one is how payloads hide.
            if "fetched" in labels and ("decoded" in labels or _obfuscating(decoder)):
                self._received(line, "decodes", f"{decoder} of {labels['fetched']}")

    def _written(self, call: ast.Call) -> str | None:
        """What decoded or fetched data the file `call` names by path holds (the module
        wrote it there)."""
        labels = self.taint.file_labels(call)
        return labels.get("decoded") or labels.get("fetched")

    def _received(self, line: int, kind: str, what: str) -> None:
        self.received.append((line, kind, what, self.findings.excerpt(line)))

    def _runner(self, call: ast.Call, name: str, line: int) -> None:
        """``timeit.timeit(code)``, ``cProfile.run(code)``: judged as ``exec`` when the code is
        decoded, fetched, read from the environment or home folder, or spelled in pieces
        (given a callable or a plain constant, as they mostly are, nothing)."""
        for argument in runner_code(call):
            if self.taint.labels(argument) or self.values.folder.built(argument):
                self._exec(call, name, line, argument)
                return

    def _exec(self, call: ast.Call, name: str, line: int, argument: ast.expr | None = None) -> None:
        if argument is None and not call.args:
            return
        argument = argument if argument is not None else call.args[0]
        labels = self.taint.labels(argument)
        source = labels.get("decoded") or labels.get("fetched")
        if source is not None:
            self.findings.add("exec.decoded-payload", line, f"{name}() runs code from {source}")
            if (hidden := self.taint.revealed(argument)) is not None:
                self.findings.add("obfuscation.packed-code", line,
                                  f"{name}() runs code packed with {hidden[0]}: "
                                  f"{hidden[1][:100]!r}")  # fmt: skip
            elif "decoded" in labels and "fetched" not in labels:
                # decoded from a constant or a file the skill ships: the hiding is the attack
                packed = labels["decoded"]
                self.findings.add("obfuscation.packed-code", line,
                                  f"{name}() runs code packed with {packed}")  # fmt: skip
            if "fetched" in labels:
                self._received(line, "runs", f"{name}() of {labels['fetched']}")
        elif isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return
        elif self.values.folder.built(argument):
            shown = self.values.folder.text(argument) or ""
            message = f"{name}() runs code assembled from string pieces: {shown[:80]!r}"
            self.findings.add("exec.dynamic-code", line, message, severity="high")
            self.findings.add("obfuscation.packed-code", line, message)
        elif "environ" in labels or "home" in labels:
            where = labels.get("environ") or labels.get("home")
            self.findings.add("exec.dynamic-code", line, f"{name}() runs code from {where}",
                              severity="high")  # fmt: skip
        elif name in _COMPILE and self._only_ast(call):
            self.findings.add("exec.dynamic-code", line,
                              f"{name}() of a value built at run time into a syntax tree "
                              "(PyCF_ONLY_AST), not code", severity="low")  # fmt: skip
        elif name in _COMPILE and self._dropped(call):
            self.findings.add("exec.dynamic-code", line,
                              f"{name}() of a value built at run time, only to check its "
                              "syntax: the code object is never used", severity="low")  # fmt: skip
        else:
            self.findings.add("exec.dynamic-code", line, f"{name}() of a value built at run time")

    def _only_ast(self, call: ast.Call) -> bool:
        """Whether `call` of ``compile`` asks for a syntax tree only: its flags (the fourth
        argument) are ``ast.PyCF_ONLY_AST`` alone, or a constant with only that bit."""
        flags = call.args[3] if len(call.args) > 3 else None
        flags = next((k.value for k in call.keywords if k.arg == "flags"), flags)
        if isinstance(flags, ast.Constant):
            return flags.value == _ONLY_AST
        return flags is not None and self.values.qualname(flags) in _ONLY_AST_NAMES

    def _dropped(self, call: ast.Call) -> bool:
        """Whether what `call` returns is thrown away (``ModuleIndex.result_dropped``), also
        for a call a wrapper stands for whose wrapped call throws it away."""
        if self.wrappers is not None and self.wrappers.drops(call):
            return True
        return self.values.index.result_dropped(call)

    def _deserialise(self, call: ast.Call, name: str, line: int, *, hidden: bool) -> None:
        payload = [*call.args[:1], *(k.value for k in call.keywords if k.arg in ("data", "file"))]
        labels = self.taint.labels(payload[0]) if payload else {}
        labels = labels or self.taint.file_labels(call)  # a file the module wrote, by path
        source = labels.get("fetched") or labels.get("decoded")
        url = self.values.approx(payload[0]) if payload and source is None else None
        if url and url.split("://", 1)[0].lower() in ("http", "https", "ftp"):
            # pandas.read_pickle(url), joblib.load(url): the loader fetches what it loads
            source = f"what it downloads from {url[:100]}"
            labels = {"fetched": source}
            self.findings.facts.network.append((line, f"{name} reads {url[:100]}"))
        if source is not None:
            self.findings.add("exec.deserialization", line,
                              f"{name} deserialises {source}: loading it can run code",
                              severity="high")  # fmt: skip
            if "fetched" in labels:
                self._received(line, "deserialises", f"{name} of {labels['fetched']}")
        elif hidden:
            self.findings.add("exec.deserialization", line,
                              f"{name}, reached through a lookup or a wrapper, can run code "
                              "while it loads")  # fmt: skip


def _obfuscating(decoder: str) -> bool:
    """A decoder nobody needs for ordinary data: rot13 and other text codecs, marshal,
    hex, character codes."""
    return decoder.startswith("a ") or "marshal" in decoder or "hex" in decoder.lower()


def _calls_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr == attribute)
    )
