"""A skill's eval files, read from the version evaluated: :func:`read_suite` (its
``evals/evals.json`` and ``evals/triggers.json``) and :func:`read_skill_file` (any file of it,
such as an eval's input file).

A version is read where it lives: the library's skill folder while the library holds that
version, else the version's package in the store (any stored version: an upload, an install,
an earlier version kept for rollback). ``evals/`` is kept from the agent under evaluation
(``read_skill_resource`` refuses it), so these reads do not go through the resource rules:
the path is checked here, strictly, before any file is touched. Called by ``EvalServices``
(input files), the doors that plan a batch (the CLI, the API) and the eval summaries.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Final

from skillweave.errors import (
    ResourceNotFoundError,
    ResourcePathError,
    ResourceTooLargeError,
)
from skillweave.evals.suite import (
    EVALS_FILE,
    MAX_SUITE_BYTES,
    TRIGGERS_FILE,
    EvalSuite,
    EvalSuiteError,
    TriggerCase,
    parse_suite,
    parse_triggers,
)
from skillweave.skills import SkillRegistry, SkillVersionError, package_file
from skillweave.storage import ArtifactStore, keys

__all__ = ["MAX_SKILL_FILE_BYTES", "read_skill_file", "read_suite"]

MAX_SKILL_FILE_BYTES: Final = 16 * 1024 * 1024
"""The largest file of a skill read here (an eval's input file)."""
_VERSION: Final = re.compile(r"^[0-9a-f]{64}$")
_PART: Final = re.compile(r"^[A-Za-z0-9._-]+$")
_NO_EVALS: Final = "write one (docs/EVALS.md)"


def _checked(skill: str, path: str) -> str:
    """`path` if it is a plain relative path inside a skill, else ResourcePathError."""
    parts = path.split("/") if isinstance(path, str) else [""]
    if (
        not path
        or len(path) > 1024
        or any(part in ("", ".", "..") or not _PART.fullmatch(part) for part in parts)
    ):
        raise ResourcePathError(
            skill, str(path)[:200], "a relative path of letters, digits, '.', '_' and '-'"
        )
    return path


async def read_skill_file(
    registry: SkillRegistry,
    store: ArtifactStore,
    skill: str,
    version: str,
    path: str,
    *,
    max_bytes: int = MAX_SKILL_FILE_BYTES,
) -> bytes:
    """The bytes of `path` in `skill` at `version` (see the module docstring).

    Raises:
        ResourcePathError: `path` is not a plain relative path (checked before any read).
        SkillVersionError: `version` is not a version, or neither the library nor the store
            has it.
        ResourceNotFoundError: that version has no such file.
        ResourceTooLargeError: the file is larger than `max_bytes`.
        PackageError: the stored package cannot be read safely.
    """
    relative = _checked(skill, path)
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise SkillVersionError(skill, str(version), problem="malformed")
    if skill in registry and registry.get(skill).version == version:
        folder = str(registry.get(skill).path)
        data = await asyncio.to_thread(_read_in, folder, skill, relative, max_bytes)
    else:
        key = keys.skill_package_key(skill, version)
        ref = await store.stat(key)
        if ref is None:
            raise SkillVersionError(skill, version, problem="unknown")
        package = await store.get_bytes(ref)
        data = await asyncio.to_thread(package_file, package, relative, max_bytes=max_bytes)
    if data is None:
        raise ResourceNotFoundError(skill, relative, "no such file in this version of the skill")
    return data


def _read_in(folder: str, skill: str, relative: str, max_bytes: int) -> bytes | None:
    """`relative` in the skill folder, or None: a file that resolves outside it is refused."""
    root = os.path.realpath(folder)
    target = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, target]) != root:
        raise ResourcePathError(skill, relative, "the path leads outside the skill folder")
    if not os.path.isfile(target):
        return None
    with open(target, "rb") as handle:
        data = handle.read(max_bytes + 1)  # bounded even if the file grows after a stat
    if len(data) > max_bytes:
        raise ResourceTooLargeError(skill, relative, size=len(data), limit=max_bytes)
    return data


async def read_suite(
    registry: SkillRegistry, store: ArtifactStore, skill: str, version: str
) -> tuple[EvalSuite, tuple[TriggerCase, ...]]:
    """`skill`'s evals at `version`: its ``evals/evals.json`` and the cases of its
    ``evals/triggers.json`` (none when it has no such file).

    Raises:
        EvalSuiteError: no ``evals/evals.json`` (saying to write one), or a file that cannot
            be used (naming the file and the field).
        SkillVersionError: see :func:`read_skill_file`.
    """
    limit = MAX_SUITE_BYTES + 1  # so that parse_suite says the file is too large
    try:
        text = await read_skill_file(registry, store, skill, version, EVALS_FILE, max_bytes=limit)
    except ResourceNotFoundError:
        raise EvalSuiteError(f"{skill} has no {EVALS_FILE}", _NO_EVALS) from None
    except ResourceTooLargeError:
        raise EvalSuiteError(
            f"{skill}/{EVALS_FILE}", f"larger than {MAX_SUITE_BYTES} bytes"
        ) from None
    suite = parse_suite(text, source=f"{skill}/{EVALS_FILE}", skill=skill)
    try:
        triggers = await read_skill_file(
            registry, store, skill, version, TRIGGERS_FILE, max_bytes=limit
        )
    except ResourceNotFoundError:
        return suite, ()
    except ResourceTooLargeError:
        raise EvalSuiteError(
            f"{skill}/{TRIGGERS_FILE}", f"larger than {MAX_SUITE_BYTES} bytes"
        ) from None
    return suite, parse_triggers(triggers, source=f"{skill}/{TRIGGERS_FILE}")
