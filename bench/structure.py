"""The structure report: module and class sizes, import cycles, and imports that bypass a front.

Run it from the repository root (``python -m bench.structure``); it reads the product packages'
source and their import graph (grimp, the library import-linter is built on) and prints one table
per target of issue 43. ``--check`` exits 1 when a target is missed, so CI and the tests can hold
the line; the numbers themselves go into the closing note and docs/BENCHMARKS.md.

What counts:
- *product code*: the packages ``skillweave``, ``workflows``, ``activities``, ``mcp_manager`` and
  ``sandbox_executor``; tests, benchmarks and the bundled skills are not product code.
- *a cycle*: a strongly connected set of two or more modules in the graph of direct imports,
  imports inside functions and under ``TYPE_CHECKING`` included (a hidden cycle is still one).
- *a bypass*: an import of a module that is not a package, from outside the package that holds
  it (``skillweave.api.runs`` importing ``skillweave.skills.catalog``, not ``skillweave.skills``).
  A module directly under a root package (``skillweave.errors``) is its own front, and a module
  the front itself hands out (``from skillweave.storage import keys``) goes through it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("skillweave", "workflows", "activities", "mcp_manager", "sandbox_executor")
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300


@dataclass(frozen=True)
class Sized:
    name: str
    lines: int


def source_files() -> Iterator[tuple[str, Path]]:
    """Every product module's dotted name and file."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def sizes() -> tuple[list[Sized], list[Sized]]:
    """Every product module's line count, and every class's (its ``class`` line to its end)."""
    modules: list[Sized] = []
    classes: list[Sized] = []
    for module, path in source_files():
        text = path.read_text(encoding="utf-8")
        modules.append(Sized(module, len(text.splitlines())))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                classes.append(Sized(f"{module}.{node.name}", node.end_lineno - node.lineno + 1))
    return modules, classes


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@dataclass(frozen=True)
class Imports:
    """The product modules' import graph."""

    edges: dict[str, set[str]]
    packages: set[str]
    through_front: set[tuple[str, str]]
    """(importer, imported) pairs where `imported` is a submodule taken from its package's
    front (``from skillweave.storage import keys``), not named by its own path."""


def import_graph() -> Imports:
    """Direct imports between product modules, and the set of modules that are packages."""
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    product = {module for module in graph.modules if module.split(".")[0] in PACKAGES}
    edges = {
        m: {i for i in graph.find_modules_directly_imported_by(m) if i in product} for m in product
    }
    packages = {m for m in product if any(other.startswith(m + ".") for other in product)}
    through_front = set()
    for importer, imported_set in edges.items():
        for imported in imported_set:
            parent = imported.rpartition(".")[0]
            lines = graph.get_import_details(importer=importer, imported=imported)
            if lines and all(
                d["line_contents"].startswith(f"from {parent} import ") for d in lines
            ):
                through_front.add((importer, imported))
    return Imports(edges, packages, through_front)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    return _strongly_connected(graph)


def _front_of(module: str, packages: set[str]) -> str | None:
    """The package whose front an outsider must import instead of ``module``, if any."""
    parent = module.rpartition(".")[0]
    if module in packages or "." not in parent:
        return None
    return parent


def bypasses(imports: Imports) -> list[tuple[str, str]]:
    """(importer, imported) pairs that reach past a package's front from outside it."""
    found = []
    for importer, imported_set in sorted(imports.edges.items()):
        for imported in sorted(imported_set):
            front = _front_of(imported, imports.packages)
            if front is None or importer == front or importer.startswith(front + "."):
                continue
            if (importer, imported) not in imports.through_front:
                found.append((importer, imported))
    return found


def _table(title: str, header: tuple[str, str], rows: Iterable[tuple[str, str]]) -> None:
    rows = list(rows)
    print(f"\n{title}")
    width = max([len(header[0])] + [len(r[0]) for r in rows])
    print(f"  {header[0]:<{width}}  {header[1]}")
    for left, right in rows:
        print(f"  {left:<{width}}  {right}")
    if not rows:
        print("  (none)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--bypasses", action="store_true", help="list every bypassing import")
    args = parser.parse_args(argv)

    modules, classes = sizes()
    imports = import_graph()
    big_modules = sorted((m for m in modules if m.lines > MAX_MODULE_LINES), key=lambda m: -m.lines)
    big_classes = sorted((c for c in classes if c.lines > MAX_CLASS_LINES), key=lambda c: -c.lines)
    found_cycles = cycles(imports.edges)
    found_bypasses = bypasses(imports)

    total = sum(m.lines for m in modules)
    print(f"product code: {len(modules)} modules, {total} lines, {len(classes)} classes")
    _table(
        f"modules over {MAX_MODULE_LINES} lines",
        ("module", "lines"),
        ((m.name, str(m.lines)) for m in big_modules),
    )
    _table(
        f"classes over {MAX_CLASS_LINES} lines",
        ("class", "lines"),
        ((c.name, str(c.lines)) for c in big_classes),
    )
    _table(
        "import cycles",
        ("cycle", "modules"),
        (
            (" <-> ".join(c) if len(c) <= 4 else " <-> ".join(c[:4]) + " ...", str(len(c)))
            for c in found_cycles
        ),
    )
    by_front: dict[str, int] = {}
    for _, imported in found_bypasses:
        front = _front_of(imported, imports.packages) or ""
        by_front[front] = by_front.get(front, 0) + 1
    _table(
        "imports that bypass a front",
        ("package", "imports"),
        sorted(((f, str(n)) for f, n in by_front.items()), key=lambda r: -int(r[1])),
    )
    if args.bypasses:
        _table("every bypass", ("importer", "imported"), found_bypasses)
    print(
        f"\nsummary: {len(big_modules)} modules > {MAX_MODULE_LINES}, "
        f"{len(big_classes)} classes > {MAX_CLASS_LINES}, {len(found_cycles)} cycles, "
        f"{len(found_bypasses)} bypasses"
    )
    if args.check and (big_modules or big_classes or found_cycles or found_bypasses):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
