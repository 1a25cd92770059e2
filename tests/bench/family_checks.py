"""What the tests of the mutation families share (``test_scan_families*.py``): running a script
before and after mutation, the calls a Python source makes, and checking that a JavaScript or
shell mutant still parses (``node --check``, ``bash -n``; skipped without the tool), and that a
family is deterministic and bounded on hostile input."""

from __future__ import annotations

import ast
import random
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

NODE = shutil.which("node")
BASH = shutil.which("bash")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: JS mutants unrun")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def run(folder: Path, command: list[str], name: str, text: str) -> str:
    """Write `text` as `name` in a new `folder`, run it with `command`; its output."""
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [*command, name],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout


def calls(source: str) -> set[str]:
    """The dotted names a Python source calls (``?`` for what is not a name chain)."""

    def dotted(node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{dotted(node.value)}.{node.attr}"
        return "?"

    return {dotted(n.func) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)}


def node_check(tmp_path: Path, text: str) -> None:
    """`text` parses as JavaScript (nothing checked without node)."""
    if NODE is None:
        return
    path = tmp_path / "check.js"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def bash_check(tmp_path: Path, text: str) -> None:
    """`text` parses as a bash script."""
    path = tmp_path / "check.sh"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [BASH or "bash", "-n", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


HOSTILE_TEXTS: tuple[str, ...] = (
    "",
    "\x00\ud800",
    "(" * 50_000,
    "{" * 50_000 + "eval(x)",
    "def f(:\n",
    "curl " * 20_000,
    "x = '" + "a" * 100_000,
    "if true; then\n" * 5_000,
)
"""Inputs a family must survive: unbalanced brackets, unterminated strings, floods of words."""


def check_deterministic_and_bounded(
    transform: Callable[[str, str], dict[str, str]],
    script: str,
    *,
    seed: str,
    more: Iterable[str] = (),
) -> None:
    """`transform` gives the same mutant twice, and a dict within 10 s on every hostile input:
    :data:`HOSTILE_TEXTS`, `more`, and 60 random shuffles and cuts of `script` (from `seed`)."""
    assert transform(script, "f") == transform(script, "f")
    rng = random.Random(seed)
    hostile = [*HOSTILE_TEXTS, *more]
    hostile += ["".join(rng.choice(script) for _ in range(400)) for _ in range(30)]
    hostile += [script[: rng.randrange(len(script))] for _ in range(30)]
    for text in hostile:
        started = time.monotonic()
        out = transform(text, "f")
        assert isinstance(out, dict)
        assert time.monotonic() - started < 10
