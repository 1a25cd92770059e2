"""The structure holds (issue 43): no import cycle, no module over 600 lines, no class over 300,
and imports from another package go through its front.

The figures come from ``bench/structure.py``, the report anyone can run
(``python -m bench.structure``). The one kind of import allowed past a front: the agent loop and
the workflow's own code take the pure modules they use by path (``skillweave.llm.messages``,
``skillweave.storage.base``...), so that the import-linter contracts that keep workflow code
deterministic and the agent loop free of I/O judge exactly the modules they load; a front
resolves its names on first use, which the contracts cannot follow.
"""

from __future__ import annotations

import ast
import importlib.util

from bench.structure import (
    MAX_CLASS_LINES,
    MAX_MODULE_LINES,
    bypasses,
    cycles,
    import_graph,
    sizes,
    source_files,
)

JUDGED_BY_PATH = (
    "skillweave.agent",
    "workflows.agent",
    "workflows.evals",
    "workflows.runtime",
    "workflows._",
    "skillweave.engines.contract",
    "skillweave.engines.run_start",
    "skillweave.evals.batch",
    "skillweave.evals.effects",
    "skillweave.evals.results",
    "skillweave.evals.suite",
)
"""The modules the determinism and no-I/O contracts judge (pyproject.toml): they import by path."""


def test_no_import_cycles_not_even_inside_functions_or_for_type_checkers() -> None:
    assert cycles(import_graph().edges) == []


def test_no_module_over_600_lines_and_no_class_over_300() -> None:
    modules, classes = sizes()
    assert [m for m in modules if m.lines > MAX_MODULE_LINES] == []
    assert [c for c in classes if c.lines > MAX_CLASS_LINES] == []


def test_imports_from_another_package_go_through_its_front() -> None:
    past = bypasses(import_graph())
    assert [pair for pair in past if not pair[0].startswith(JUDGED_BY_PATH)] == []


def test_no_private_name_is_imported_from_another_module() -> None:
    # A name two modules need is public in the lower one; a private module (``_x.py``) may be
    # imported by its own package, a private name by nobody.
    crossing = []
    for module, path in source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                crossing += [
                    f"{module}:{node.lineno} {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                    and not alias.name.startswith("__")
                    and not _is_module(f"{node.module}.{alias.name}")
                ]
    assert crossing == []


def _is_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None if name.count(".") else False
