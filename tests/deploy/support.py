"""What the deploy tests share: paths, and checking environment variables against the settings.

A deployment's environment is only as good as its names: pydantic-settings ignores a variable it
does not know, so a misspelt ``SANDBOX__POOL_MAXX`` would deploy silently with the default.
:func:`setting_problem` finds such names; :func:`settings_from` reads an environment the way a
container would and so also checks the values.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest
from pydantic import BaseModel

from sandbox_executor.settings import ExecutorSettings
from skillweave.config import Settings

REPO: Final = Path(__file__).resolve().parents[2]
DEPLOY: Final = REPO / "deploy"
BUILT_IN_TEMPLATE: Final = REPO / "mcp_manager" / "sandbox_pod.yaml"

_EXECUTOR_PREFIX: Final = "EXECUTOR__"


def _model_of(annotation: object) -> type[BaseModel] | None:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def setting_problem(name: str) -> str | None:
    """Why `name` is not a skillweave (or executor) setting, or None when it is one.

    Names without ``__`` are not skillweave's (``MINIO_ROOT_USER``) and pass.
    """
    if "__" not in name:
        return None
    if name.startswith(_EXECUTOR_PREFIX):
        field = name.removeprefix(_EXECUTOR_PREFIX).lower()
        if field in ExecutorSettings.model_fields:
            return None
        return f"{name}: ExecutorSettings has no field {field!r}"
    model: type[BaseModel] = Settings
    parts = name.lower().split("__")
    for depth, part in enumerate(parts):
        field_info = model.model_fields.get(part)
        if field_info is None:
            return f"{name}: {model.__name__} has no field {part!r}"
        if depth == len(parts) - 1:
            return None
        nested = _model_of(field_info.annotation)
        if nested is None:
            # a dict field (SANDBOX__SKILL_SECRETS__<skill>__<NAME>) takes any key below it
            if typing.get_origin(field_info.annotation) is dict:
                return None
            return f"{name}: {model.__name__}.{part} has no fields below it"
        model = nested
    return None


def settings_from(env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings a process with exactly the skillweave variables of `env` reads."""
    for name in list(os.environ):
        if "__" in name:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings(_env_file=None)
