"""A skill package's dependency inventory: every source read, what the scripts import added
when asked, all merged and counted against the limit (:func:`discover_dependencies`,
:func:`package_dependencies`), and the operator's base environment read by the same rules
(:func:`base_environment`).

Called by the manager (``mcp_manager.executions``: the environment a run needs), the scan
(``skills.scan``) and ``skillweave skills build``/``show``.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from typing import Final

from packaging.utils import canonicalize_name

from skillweave.errors import DependencyError
from skillweave.skills.dependencies._declarations import (
    IMPORTS_SOURCE,
    Declarations,
    NodeEntry,
    PythonEntry,
    node_entry,
)
from skillweave.skills.dependencies._dependency_spec import BASE_SOURCE, DependencySpec
from skillweave.skills.dependencies._merging import (
    counted_name,
    merge_node,
    merge_python,
    merge_requires_python,
)
from skillweave.skills.dependencies._requirements_file import REQUIREMENTS_FILE, read_requirements
from skillweave.skills.dependencies._sources import (
    PACKAGE_JSON,
    SCRIPTS_PREFIX,
    read_frontmatter,
    read_package_json,
    read_script,
)
from skillweave.skills.imports import infer_imports

__all__ = [
    "DEFAULT_MAX_DEPENDENCIES",
    "base_environment",
    "discover_dependencies",
    "package_dependencies",
]

DEFAULT_MAX_DEPENDENCIES: Final = 200
"""Most distinct packages (Python and Node together) a skill may declare by default; the
manager passes ``sandbox.environments.max_dependencies``."""
_PACKAGE_FILE_BYTES: Final = 4 * 1024 * 1024
"""Files of a package larger than this are not read at all (discovery refuses a source over
:data:`MAX_SOURCE_BYTES` itself, so an oversized requirements file is still reported)."""


def base_environment(python: Sequence[str], node: Mapping[str, str]) -> DependencySpec:
    """The operator's base environment (``sandbox.environments.base_python`` and
    ``base_node``) as a spec, read by the rules a skill's declarations are read by.

    Raises:
        DependencyError: a requirement or a Node dependency is invalid (named).
    """
    declared = Declarations()
    for index, text in enumerate(python):
        declared.python.append(PythonEntry(text, f"base_python[{index}]"))
    for name, version_range in node.items():
        declared.node.append(node_entry(name, version_range, f"base_node.{name}"))
    for entry in declared.python:
        counted_name(entry)
    sources = (BASE_SOURCE,) if python or node else ()
    return DependencySpec(
        python=merge_python(declared.python),
        node=merge_node(declared.node),
        sources=sources,
    )


def discover_dependencies(
    files: Mapping[str, bytes],
    *,
    max_dependencies: int = DEFAULT_MAX_DEPENDENCIES,
    infer: bool = False,
) -> DependencySpec:
    """Read every dependency source of a skill package and merge them into one spec.

    Args:
        files: the skill package's files, relative POSIX path → bytes (``SKILL.md`` at the
            root of the paths).
        max_dependencies: most distinct packages (Python and Node together) accepted.
        infer: add what the scripts import and nothing declares (``skills.imports``), marked
            in :attr:`DependencySpec.inferred`.

    Returns:
        The merged spec; :attr:`DependencySpec.empty` when the skill declares nothing.

    Raises:
        DependencyError: a source cannot be read or is over :data:`MAX_SOURCE_BYTES`, a
            requirement is invalid (the file and line are named), an option, URL or path that
            escapes the index is used, two declarations conflict (both are named), or more
            than `max_dependencies` packages are declared.
        ValueError: `max_dependencies` is below 1.
    """
    if max_dependencies < 1:
        raise ValueError("max_dependencies must be at least 1")
    declared = Declarations()
    read_frontmatter(files, declared)
    if REQUIREMENTS_FILE in files:
        read_requirements(files, REQUIREMENTS_FILE, declared, including=(), seen=set())
    for path in sorted(files):
        if path.startswith(SCRIPTS_PREFIX) and path.endswith(".py"):
            read_script(files, path, declared)
    if PACKAGE_JSON in files:
        read_package_json(files, declared)
    inferred = _infer(files, declared) if infer else []

    count = len({counted_name(entry) for entry in declared.python}) + len(
        {entry.name for entry in declared.node}
    )
    if count > max_dependencies:
        raise DependencyError(
            f"{count} dependencies declared, the limit is {max_dependencies} "
            f"(from {', '.join(declared.sources)})"
        )
    return DependencySpec(
        python=merge_python(declared.python),
        node=merge_node(declared.node),
        requires_python=merge_requires_python(declared.requires_python),
        sources=tuple(declared.sources),
        inferred=tuple(inferred),
    )


def package_dependencies(
    package: bytes, *, max_dependencies: int = DEFAULT_MAX_DEPENDENCIES, infer: bool = False
) -> DependencySpec:
    """:func:`discover_dependencies` of the skill in `package` (its ZIP bytes), the paths
    relative to the skill folder (one top folder is stripped).

    Raises:
        DependencyError: as :func:`discover_dependencies`; also a package that is no ZIP.
    """
    files: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            entries = [i for i in archive.infolist() if not i.is_dir()]
            tops = {i.filename.split("/", 1)[0] for i in entries}
            strip = len(tops) == 1 and all("/" in i.filename for i in entries)
            for info in entries:
                name = info.filename.split("/", 1)[1] if strip else info.filename
                if info.file_size <= _PACKAGE_FILE_BYTES:  # any file: includes may name any
                    files[name] = archive.read(info)
    except zipfile.BadZipFile as exc:
        raise DependencyError(f"the skill package cannot be read: {exc}") from None
    return discover_dependencies(files, max_dependencies=max_dependencies, infer=infer)


def _infer(files: Mapping[str, bytes], declared: Declarations) -> list[str]:
    """Add to `declared` what the scripts import and it does not have; the names added."""
    found = infer_imports(files)
    have = {counted_name(entry) for entry in declared.python}
    added: list[str] = []
    for distribution, where in found.python.items():
        name = canonicalize_name(distribution)
        if name not in have:
            have.add(name)
            declared.python.append(PythonEntry(name, f"{where} (imports)"))
            declared.contributed(f"{where}{IMPORTS_SOURCE}")
            added.append(name)
    names = {entry.name for entry in declared.node}
    for package, where in found.node.items():
        if package not in names:
            names.add(package)
            declared.node.append(NodeEntry(package, "*", f"{where} (imports)"))
            declared.contributed(f"{where}{IMPORTS_SOURCE}")
            added.append(package)
    return added
