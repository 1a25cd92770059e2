"""The Python rule about the environment taken wholesale: :class:`EnvironmentRules`.

``os.environ`` used as a whole (not one variable: ``os.environ.get``, ``os.environ["X"]``),
directly or through ``.copy()``/``.items()``/``.keys()``/``.values()``, a name assigned it or a
loop over it that does not filter (``if k.startswith("APP_")``), reaching a call that
serialises, logs or sends (``_flow.ENV_SINKS``, ``requests``/``httpx``) becomes an
environment-dump fact, which ``scanner`` turns into ``secrets.env-dump`` and, with network
use, ``secrets.exfiltration``. Called by ``PythonScan`` once per module.
"""

from __future__ import annotations

import ast

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import ENV_SINKS
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._values import Values

__all__ = ["EnvironmentRules"]


class EnvironmentRules:
    """Finds the environment dumped or sent.

    Args:
        findings: the file's facts.
        index: the module's tree, parents, assignments and calls.
        values: resolves callees.
    """

    def __init__(self, findings: Findings, index: ModuleIndex, values: Values) -> None:
        self.findings = findings
        self.index = index
        self.values = values

    def run(self, wrapped: list[ast.Call] | None = None) -> None:
        """Note each call that serialises, logs or sends the environment wholesale (also
        the calls `wrapped` stands for: wrappers read at their call sites)."""
        dumps: list[ast.AST] = []
        for node in ast.walk(self.index.tree):
            if isinstance(node, ast.Attribute | ast.Name) and self.values.is_environ(node):
                parent = self.index.parents.get(id(node))
                if isinstance(parent, ast.Attribute) and parent is not node:
                    if parent.attr in ("copy", "items", "keys", "values"):
                        dumps.append(self.index.parents.get(id(parent), parent))
                    continue  # os.environ.get / setdefault / pop: one variable
                if isinstance(parent, ast.Subscript | ast.Compare):
                    continue
                dumps.append(node)
        if not dumps:
            return
        dump_ids = {id(d) for d in dumps}
        names: set[str] = set()
        for name, values in self.index.assigned.items():
            if any(
                id(v) in dump_ids or any(id(n) in dump_ids for n in ast.walk(v)) for v in values
            ):
                names.add(name)
        for node in ast.walk(self.index.tree):
            if isinstance(node, ast.For | ast.comprehension) and any(
                id(n) in dump_ids for n in ast.walk(node.iter)
            ):
                if _filtered(node):
                    dump_ids -= {id(n) for n in ast.walk(node.iter)}
                    continue  # picks some variables (if k.startswith("APP_")): not the whole
                names.update(t.id for t in ast.walk(node.target) if isinstance(t, ast.Name))
        names = {
            name
            for name, values in self.index.assigned.items()
            if any(id(n) in dump_ids for v in values for n in ast.walk(v))
        } | {n for n in names if n not in self.index.assigned}
        for call in [*self.index.calls, *(wrapped or ())]:
            name = self.values.qualname(call.func) or ""
            sink = name.rsplit(".", 1)[-1]
            if sink not in ENV_SINKS and not name.startswith(("requests.", "httpx.")):
                continue
            values = [*call.args, *(k.value for k in call.keywords if k.arg != "env")]
            for value in values:
                if any(
                    id(n) in dump_ids or (isinstance(n, ast.Name) and n.id in names)
                    for n in ast.walk(value)
                ):
                    text = self.findings.excerpt(call.lineno)
                    self.findings.facts.env_dumps.append((call.lineno, text))
                    break


def _filtered(node: ast.For | ast.comprehension) -> bool:
    """A loop or comprehension that keeps only some items: an ``if`` filters them."""
    if isinstance(node, ast.comprehension):
        return bool(node.ifs)
    return any(isinstance(statement, ast.If) for statement in node.body)
