"""The dependency spec: everything a skill version declares (and, when asked, what its scripts
import), normalised and merged (:class:`DependencySpec`), and its lines as the CLI prints them.

The environment builder installs a spec and stores it beside the build (``to_json``,
``from_json``); its digest names the environment. Made by discovery (``_inventory``); read by
the manager's environments and executions, the scan and ``skillweave skills build``/``show``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from skillweave.errors import DependencyError
from skillweave.skills.dependencies._declarations import IMPORTS_SOURCE, all_strings, leading_name

__all__ = ["BASE_SOURCE", "DependencySpec", "dependency_lines"]

BASE_SOURCE: Final = "base environment"
"""The source of what the operator's base environment adds (``DependencySpec.sources``)."""


@dataclass(frozen=True, slots=True)
class DependencySpec:
    """Everything a skill version declares, normalised and merged.

    Attributes:
        python: PEP 508 requirement strings (``str(Requirement)``, the name canonical), one per
            project, sorted by canonical name.
        node: ``(package name, version range)`` pairs, sorted by name.
        requires_python: the merged ``requires-python`` of the scripts' PEP 723 blocks, or
            None when none says.
        sources: what contributed, in reading order (``"SKILL.md dependencies"``,
            ``"requirements.txt"``, an included file's path, ``"scripts/x.py (PEP 723)"``,
            ``"package.json"``, ``"scripts/x.py (imports)"``, ``"base environment"``). Not
            part of the digest: moving a requirement between files does not change what is
            installed.
        inferred: the entries of `python` (their canonical names) and of `node` (their names)
            that nothing declared: the scripts import them (``skills.imports``). The builder
            installs them on a best-effort basis.
    """

    python: tuple[str, ...] = ()
    node: tuple[tuple[str, str], ...] = ()
    requires_python: str | None = None
    sources: tuple[str, ...] = ()
    inferred: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to install (a ``requires-python`` alone needs no
        environment)."""
        return not self.python and not self.node

    def digest(self) -> str:
        """sha256 (hex) of a canonical JSON of what is installed: python, node and
        requires_python; equal specs have equal digests whatever order they were declared in."""
        payload = {
            "node": [list(pair) for pair in self.node],
            "python": list(self.python),
            "requires_python": self.requires_python,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict, stored beside a built environment; :meth:`from_json` reads it."""
        return {
            "python": list(self.python),
            "node": dict(self.node),
            "requires_python": self.requires_python,
            "sources": list(self.sources),
            "inferred": list(self.inferred),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DependencySpec:
        """Read what :meth:`to_json` wrote.

        Raises:
            DependencyError: the data does not have that shape.
        """
        python = data.get("python", [])
        node = data.get("node", {})
        requires_python = data.get("requires_python")
        sources = data.get("sources", [])
        inferred = data.get("inferred", [])
        shaped = (
            all_strings(python)
            and isinstance(node, Mapping)
            and all_strings(list(node))
            and all_strings(list(node.values()))
            and (requires_python is None or isinstance(requires_python, str))
            and all_strings(sources)
            and all_strings(inferred)
        )
        if not shaped:
            raise DependencyError("a stored dependency spec is malformed")
        return cls(
            python=tuple(sorted(python, key=_python_sort_key)),
            node=tuple(sorted(node.items())),
            requires_python=requires_python,
            sources=tuple(sources),
            inferred=tuple(inferred),
        )

    def is_inferred(self, entry: str) -> bool:
        """Whether `entry` (a requirement of `python`, or a name of `node`) was inferred."""
        return entry in self.inferred or _python_sort_key(entry) in self.inferred

    def declared(self) -> DependencySpec:
        """This spec without what was inferred."""
        return DependencySpec(
            python=tuple(p for p in self.python if not self.is_inferred(p)),
            node=tuple(pair for pair in self.node if pair[0] not in self.inferred),
            requires_python=self.requires_python,
            sources=tuple(s for s in self.sources if not s.endswith(IMPORTS_SOURCE)),
        )

    def with_base(self, base: DependencySpec) -> DependencySpec:
        """This spec with the operator's base environment added: a project or package this
        spec has keeps its own requirement; the base's requires_python does not apply."""
        if base.empty:
            return self
        own = {_python_sort_key(p) for p in self.python}
        names = {name for name, _ in self.node}
        python = [*self.python, *(p for p in base.python if _python_sort_key(p) not in own)]
        node = [*self.node, *(pair for pair in base.node if pair[0] not in names)]
        return DependencySpec(
            python=tuple(sorted(python, key=_python_sort_key)),
            node=tuple(sorted(node)),
            requires_python=self.requires_python,
            sources=(*self.sources, BASE_SOURCE),
            inferred=self.inferred,
        )


def dependency_lines(spec: DependencySpec) -> list[str]:
    """One line per package of `spec`, marked when it was inferred from the scripts' imports
    rather than declared: what ``skills build`` and ``skills show`` print."""
    lines = []
    for requirement in spec.python:
        lines.append(f"python {requirement}{_origin(spec, requirement)}")
    for name, version_range in spec.node:
        lines.append(f"node {name}@{version_range}{_origin(spec, name)}")
    return lines


def _origin(spec: DependencySpec, entry: str) -> str:
    if spec.is_inferred(entry):
        return " (inferred from the scripts' imports)"
    return ""


def _python_sort_key(requirement: str) -> str:
    name = leading_name(requirement)
    return requirement if name is None else name
