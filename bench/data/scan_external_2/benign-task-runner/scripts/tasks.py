#!/usr/bin/env python3
"""Run common developer tasks, dispatching to cmd_<task> methods."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time


class Tasks:
    ALLOWED = ("lint", "format", "test", "typecheck", "build", "clean")

    def __init__(self, root: str = ".") -> None:
        self.root = root

    def _run(self, *argv: str) -> dict:
        if not shutil.which(argv[0]):
            return {"skipped": f"{argv[0]} not installed"}
        t0 = time.monotonic()
        p = subprocess.run(list(argv), cwd=self.root, capture_output=True, text=True, timeout=1800)
        return {"ok": p.returncode == 0, "seconds": round(time.monotonic() - t0, 1), "tail": (p.stdout + p.stderr).strip().splitlines()[-15:]}

    def _has(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.root, name))

    def cmd_lint(self) -> dict:
        return self._run("ruff", "check", ".") if shutil.which("ruff") else self._run("npm", "run", "lint")

    def cmd_format(self) -> dict:
        return self._run("ruff", "format", "--check", ".") if shutil.which("ruff") else self._run("black", "--check", ".")

    def cmd_test(self) -> dict:
        return self._run("npm", "test") if self._has("package.json") and not self._has("pyproject.toml") else self._run("pytest", "-q", "-x")

    def cmd_typecheck(self) -> dict:
        return self._run("mypy", ".") if shutil.which("mypy") else self._run("pyright")

    def cmd_build(self) -> dict:
        return self._run("python3", "-m", "build") if self._has("pyproject.toml") else self._run("npm", "run", "build")

    def cmd_clean(self) -> dict:
        removed = []
        for d in ("build", "dist", ".pytest_cache", ".mypy_cache"):
            p = os.path.join(self.root, d)
            if os.path.isdir(p):
                shutil.rmtree(p)
                removed.append(d)
        return {"ok": True, "removed": removed}

    def dispatch(self, task: str) -> dict:
        if task not in self.ALLOWED:
            return {"error": f"unknown task {task!r}; choose from {', '.join(self.ALLOWED)}"}
        handler = getattr(self, f"cmd_{task}")
        return handler()


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"tasks": sys.argv[1:] or ["lint", "test"]}
    runner = Tasks()
    print(json.dumps({t: runner.dispatch(t) for t in a.get("tasks", ["lint", "test"])}))
