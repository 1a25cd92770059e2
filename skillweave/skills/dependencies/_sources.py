"""Reading the dependency sources other than requirements files: ``SKILL.md`` frontmatter,
PEP 723 ``script`` blocks in ``scripts/**/*.py``, and ``package.json``.

Each reader adds what its source declares to a :class:`Declarations` (``_declarations``),
refusing what escapes the operator's index or registry. Called by discovery (``_inventory``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from typing import Final

from skillweave.errors import DependencyError, SkillFormatError
from skillweave.skills.dependencies._declarations import (
    Declarations,
    PythonEntry,
    all_strings,
    node_entry,
    refuse_url_or_path,
    source_text,
)
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.spec import declares_packages, package_dependency_problems

__all__ = [
    "PACKAGE_JSON",
    "SCRIPTS_PREFIX",
    "SKILL_FILE",
    "read_frontmatter",
    "read_package_json",
    "read_script",
]

SKILL_FILE: Final = "SKILL.md"
PACKAGE_JSON: Final = "package.json"
SCRIPTS_PREFIX: Final = "scripts/"

# PEP 723's reference regular expression, verbatim.
_PEP723_BLOCK: Final = re.compile(
    r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$"
)


def read_frontmatter(files: Mapping[str, bytes], declared: Declarations) -> None:
    if SKILL_FILE not in files:
        return
    try:
        data = parse_frontmatter(source_text(files, SKILL_FILE), path=SKILL_FILE).data
    except SkillFormatError as exc:
        raise DependencyError(f"{SKILL_FILE}: {exc.reason}") from None
    metadata = data.get("metadata")
    in_metadata = metadata.get("dependencies") if isinstance(metadata, Mapping) else None
    for field_name, value in (
        ("metadata.dependencies", in_metadata),
        ("dependencies", data.get("dependencies")),  # before extensions moved under metadata
    ):
        if not declares_packages(value):
            continue  # absent, or a string naming skills this one builds on
        if problems := package_dependency_problems(value):
            raise DependencyError(f"{SKILL_FILE}: {field_name}: {problems[0]}")
        source = f"{SKILL_FILE} {field_name}"
        python = value if isinstance(value, list) else value.get("python") or []
        node = {} if isinstance(value, list) else value.get("node") or {}
        for index, text in enumerate(python):
            declared.python.append(PythonEntry(text, f"{source} python[{index}]"))
        for name, version_range in node.items():
            declared.node.append(node_entry(name, version_range, f"{source} node.{name}"))
        if python or node:
            declared.contributed(source)


def read_script(files: Mapping[str, bytes], path: str, declared: Declarations) -> None:
    """Read the PEP 723 ``script`` block of one script, if it has one."""
    text = source_text(files, path)
    if "# /// script" not in text:  # the common case, without running the regex
        return
    blocks = [m for m in _PEP723_BLOCK.finditer(text) if m.group("type") == "script"]
    if not blocks:
        return
    if len(blocks) > 1:
        raise DependencyError(f"{path}: {len(blocks)} '# /// script' blocks; PEP 723 allows one")
    # The reference implementation's content rule: drop '# ', or '#' on a bare '#' line.
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:]
        for line in blocks[0].group("content").splitlines(keepends=True)
    )
    source = f"{path} (PEP 723)"
    try:
        metadata = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise DependencyError(f"{source}: the block is not valid TOML: {exc}") from None
    dependencies = metadata.get("dependencies", [])
    if not isinstance(dependencies, list) or not all_strings(dependencies):
        raise DependencyError(f"{source}: 'dependencies' must be a list of requirement strings")
    requires_python = metadata.get("requires-python")
    if requires_python is not None and not isinstance(requires_python, str):
        raise DependencyError(f"{source}: 'requires-python' must be a string")
    for index, requirement in enumerate(dependencies):
        where = f"{source} dependencies[{index}]"
        refuse_url_or_path(requirement, where)
        declared.python.append(PythonEntry(requirement, where))
    if requires_python is not None:
        declared.requires_python.append(PythonEntry(requires_python, source))
    if dependencies or requires_python is not None:
        declared.contributed(source)


def read_package_json(files: Mapping[str, bytes], declared: Declarations) -> None:
    try:
        data = json.loads(source_text(files, PACKAGE_JSON))
    except (ValueError, RecursionError) as exc:
        raise DependencyError(f"{PACKAGE_JSON}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DependencyError(f"{PACKAGE_JSON}: must be a JSON object")
    dependencies = data.get("dependencies", {})
    if not isinstance(dependencies, dict):
        raise DependencyError(f"{PACKAGE_JSON}: 'dependencies' must map names to version ranges")
    for name, version_range in dependencies.items():
        declared.node.append(node_entry(name, version_range, f"{PACKAGE_JSON} dependencies.{name}"))
    if dependencies:
        declared.contributed(PACKAGE_JSON)
