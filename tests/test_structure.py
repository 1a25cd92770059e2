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

from bench.structure import (
    MAX_CLASS_LINES,
    MAX_MODULE_LINES,
    bypasses,
    cycles,
    import_graph,
    sizes,
)

JUDGED_BY_PATH = (
    "skillweave.agent",
    "workflows.agent",
    "workflows.runtime",
    "workflows._",
    "skillweave.engines.contract",
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
