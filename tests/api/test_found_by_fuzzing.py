"""Regressions for what schemathesis found (``test_openapi_schema.py``), one test each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from skillweave.api import create_api, skills
from skillweave.api.agents import router as agents_router
from skillweave.api.problems import PROBLEM_JSON
from skillweave.api.runs import router as runs_router
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore


def _document(tmp_path: Path) -> dict[str, Any]:
    settings = Settings(_env_file=None, api={"token": SecretStr("t")})
    app = create_api(
        settings,
        store=LocalArtifactStore(tmp_path),
        routers=[skills.router, agents_router, runs_router],
    )
    return app.openapi()


def test_error_answers_are_documented_as_problem_json_with_every_4xx_status(
    tmp_path: Path,
) -> None:
    # Found: errors were documented as application/json (FastAPI's {"model": Problem}) while
    # served as application/problem+json, and the 404s and 409s of agents and runs were not
    # documented at all.
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, item in _document(tmp_path)["paths"].items()
        if path != "/healthz"
        for method, operation in item.items()
    ]
    assert operations
    for label, operation in operations:
        responses = operation["responses"]
        assert {"401", "413", "422", "4XX"} <= responses.keys(), label
        for status, response in responses.items():
            if status.startswith("4"):
                assert list(response["content"]) == [PROBLEM_JSON], (label, status)
                schema = response["content"][PROBLEM_JSON]["schema"]
                assert schema["required"] == ["title", "status"], (label, status)
