"""Lazy re-exports for a package's front (PEP 562), written once for every package that needs it.

A package whose public names live in heavy modules (BM25 and numpy behind ``skillweave.skills``,
the minio client behind ``skillweave.storage``, HTTP clients behind ``skillweave.engines``)
keeps importing its front cheap: the front maps each name to the submodule that defines it,
and the name is imported on first use, then cached in the package's namespace. Importing one
module of such a package (the sandbox executor does, for ``skillweave.skills.package``) does
not pull in the rest.

Usage, in a package's ``__init__``::

    __getattr__, __dir__ = lazy_exports(__name__, {"SkillRegistry": "registry", ...})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of `package`'s front.

    Args:
        package: the package's ``__name__``.
        exports: each public name and the submodule (relative to `package`) defining it, or
            ``"submodule:attribute"`` where the front names it otherwise (the API's routers,
            each ``router`` in its own module, are ``agents_router``, ``runs_router``...).
    """

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        submodule, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), attribute or name)
        vars(sys.modules[package])[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
