"""The Python rules about strings built from constant pieces: :class:`BuiltStrings`.

A URL, a credential path or a download piped into a shell spelled in pieces
(``"https://ev" + "il.io"``, ``"".join([".en", "v"])``, ``"".join(map(chr, [...]))``) is
folded (``_fold``) and judged as the literal would be: URLs become network facts, credential
paths are reported (``_files``), and a remote pipe in the folded text is
``exec.remote-pipe`` as the text rules (``_text.REMOTE_PIPES``) would find it in the file.
Every call argument and every assigned value of the module is looked at once. Called by
``PythonScan`` after the calls.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._files import FileRules
from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._network import NetworkRules
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import REMOTE_PIPES

__all__ = ["BuiltStrings"]

_MAX_EXPRESSIONS: Final = 5000


class BuiltStrings:
    """Constant strings assembled from pieces, judged as literals.

    Args:
        findings: where to report.
        index: the module's calls and assignments.
        values: folds expressions.
        files: reports credential paths.
        network: notes URLs.
    """

    def __init__(
        self,
        findings: Findings,
        index: ModuleIndex,
        values: Values,
        *,
        files: FileRules,
        network: NetworkRules,
    ) -> None:
        self.findings = findings
        self.index = index
        self.values = values
        self.files = files
        self.network = network

    def run(self) -> None:
        """Fold every built argument and assigned value, and judge what it spells."""
        seen: set[int] = set()
        for node in self._candidates():
            if id(node) in seen or len(seen) >= _MAX_EXPRESSIONS:
                continue
            seen.add(id(node))
            if isinstance(node, ast.Constant | ast.Name) or not hasattr(node, "lineno"):
                continue
            text = self.values.folder.text(node)
            if not text:
                continue
            line = node.lineno
            self.network.urls(text, line)
            if len(text) < 512 and not any(c.isspace() for c in text):
                self.files.credential(text, line)
            for pattern in REMOTE_PIPES:
                if pattern.search(text):
                    self.findings.add("exec.remote-pipe", line,
                                      f"a download piped into an interpreter, spelled in "
                                      f"pieces: {text[:120]!r}")  # fmt: skip
                    break

    def _candidates(self) -> list[ast.expr]:
        found: list[ast.expr] = []
        for call in self.index.calls:
            found.extend(call.args)
            found.extend(k.value for k in call.keywords)
            for argument in call.args:  # ["bash", "-c", "".join([...])]
                if isinstance(argument, ast.List | ast.Tuple):
                    found.extend(argument.elts)
        for values in self.index.assigned.values():
            found.extend(values)
        return found
