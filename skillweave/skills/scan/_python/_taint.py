"""Decoded or fetched data followed through names: :class:`Taint`.

A value is *decoded* or *fetched* when a source (``_flow.call_source``, a reversed constant)
is found in its expression, or in what a name it uses was assigned, or in what a function it
calls returns: followed to a fixed point, three rounds. The execution rules ask it what makes
an argument suspect. This is the seam a data-flow analysis replaces.
"""

from __future__ import annotations

import ast

from skillweave.skills.scan._python._flow import call_source, reversed_slice
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._values import Values

__all__ = ["Taint"]


class Taint:
    """The module's names and functions that hold or return decoded or fetched data.

    Args:
        index: the module's index (assignments and returns).
        values: resolves callees and approximates arguments.
    """

    def __init__(self, index: ModuleIndex, values: Values) -> None:
        self.index = index
        self.values = values
        self.names: set[str] = set()
        self.functions: set[str] = set()

    def propagate(self) -> None:
        """Mark the names and functions whose values come from a source (after the walk)."""
        for _ in range(3):
            before = len(self.names) + len(self.functions)
            for name, values in self.index.assigned.items():
                if name not in self.names and any(self.source(v) for v in values):
                    self.names.add(name)
            for name, values in self.index.returns.items():
                if name not in self.functions and any(self.source(v) for v in values):
                    self.functions.add(name)
            if len(self.names) + len(self.functions) == before:
                break

    def source(self, node: ast.AST) -> str | None:
        """What makes `node` decoded or fetched data (``base64.b64decode``, ``a network
        read``...); None when nothing does."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in self.names:
                return f"{inner.id}, which holds decoded or fetched data"
            if isinstance(inner, ast.Subscript) and reversed_slice(inner):
                return "a reversed string"
            if not isinstance(inner, ast.Call):
                continue
            if isinstance(inner.func, ast.Name) and inner.func.id in self.functions:
                return f"{inner.func.id}(), which returns decoded or fetched data"
            found = call_source(inner, self.values)
            if found is not None:
                return found
        return None
