"""Public names re-exported lazily (PEP 562) all resolve, and importing one module of a
package does not drag in the heavy optional parts."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "package",
    [
        "skillweave.skills",
        "skillweave.storage",
        "skillweave.llm",
        "skillweave.agent",
        "skillweave.engines",
    ],
)
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert sorted(module.__all__) == sorted(set(module.__all__))


def test_executor_imports_stay_light() -> None:
    code = (
        "import sys, sandbox_executor.app; "
        "print(sorted(m for m in ('minio', 'bm25s', 'numpy', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_agent_loop_imports_no_http_client() -> None:
    # It runs inside Temporal's workflow sandbox: no httpx, minio or provider modules.
    code = (
        "import sys, skillweave.agent; "
        "print(sorted(m for m in ('httpx', 'minio', 'skillweave.llm.openai', "
        "'skillweave.llm.scripted', 'skillweave.storage.local') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
