"""What the dependency sources declare, before merging: one entry per declaration, with where
it came from, collected in :class:`Declarations`.

The rules every source shares live here: a source file is read as text no larger than
:data:`MAX_SOURCE_BYTES` (:func:`source_text`), a URL or path given as a requirement is refused
(:func:`refuse_url_or_path`), an npm dependency must be a registry name and range
(:func:`node_entry`). The lowest module of ``skills.dependencies``: the readers
(``_requirements_file``, ``_sources``), the merge (``_merging``), the spec
(``_dependency_spec``) and discovery (``_inventory``) build on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from packaging.utils import canonicalize_name

from skillweave.errors import DependencyError

__all__ = [
    "IMPORTS_SOURCE",
    "MAX_NODE_NAME_LENGTH",
    "MAX_NODE_RANGE_LENGTH",
    "MAX_SOURCE_BYTES",
    "Declarations",
    "NodeEntry",
    "PythonEntry",
    "all_strings",
    "has_url_scheme",
    "leading_name",
    "node_entry",
    "refuse_url_or_path",
    "source_text",
]

MAX_SOURCE_BYTES: Final = 1024 * 1024
"""Largest file read as a dependency source (requirements, scripts, package.json, SKILL.md)."""
MAX_NODE_RANGE_LENGTH: Final = 256
MAX_NODE_NAME_LENGTH: Final = 214  # npm's own limit
IMPORTS_SOURCE: Final = " (imports)"
"""Ends the source of what was inferred from a script's imports (``scripts/x.py (imports)``)."""

# A requirement's leading name, loosely (the full parse comes later): enough to count names.
_LEADING_NAME: Final = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_URL_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ARCHIVE_SUFFIXES: Final = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")
# validate-npm-package-name: URL-safe characters, lowercase scopes, no leading '.' or '_'
# (uppercase is allowed for the old packages that have it, such as JSONStream).
_NPM_NAME: Final = re.compile(r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*")
_NPM_RESERVED: Final = frozenset({"node_modules", "favicon.ico"})
_NPM_RANGE: Final = re.compile(r"[0-9A-Za-z.^~<>=|*+\- ]*")


@dataclass(frozen=True, slots=True)
class PythonEntry:
    """One Python requirement (or ``requires-python``) as a source wrote it, and where."""

    text: str
    where: str  # "requirements.txt:3", "scripts/x.py (PEP 723)", "SKILL.md dependencies"


@dataclass(frozen=True, slots=True)
class NodeEntry:
    """One npm dependency, its range normalised, and where it was declared."""

    name: str
    version_range: str
    where: str


@dataclass(slots=True)
class Declarations:
    """Every entry the sources of one package declare, and the sources that contributed, in
    reading order."""

    python: list[PythonEntry] = field(default_factory=list)
    node: list[NodeEntry] = field(default_factory=list)
    requires_python: list[PythonEntry] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def contributed(self, source: str, *, at: int | None = None) -> None:
        """Note that `source` declared something (once; at position `at` when given)."""
        if source not in self.sources:
            self.sources.insert(len(self.sources) if at is None else at, source)


def source_text(files: Mapping[str, bytes], path: str) -> str:
    """The file at `path` as text, refused when over the size limit or not UTF-8."""
    raw = files[path]
    if len(raw) > MAX_SOURCE_BYTES:
        raise DependencyError(
            f"{path}: {len(raw):,} bytes; a dependency source may have at most "
            f"{MAX_SOURCE_BYTES:,} bytes"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DependencyError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # Line ends as Python's text mode reads them (universal newlines).
    return text.replace("\r\n", "\n").replace("\r", "\n")


def has_url_scheme(text: str) -> bool:
    """Whether `text` starts with a URL scheme (``https:``, ``file:``, ``git+ssh:``...)."""
    return bool(_URL_SCHEME.match(text))


def leading_name(text: str) -> str | None:
    """The canonical project name a requirement starts with, read loosely (enough to count
    and sort names before the full parse); None when it starts with none."""
    match = _LEADING_NAME.match(text)
    return canonicalize_name(match.group(1)) if match else None


def refuse_url_or_path(text: str, where: str) -> None:
    """A URL, VCS link, archive or local path given as a requirement escapes the index."""
    first = re.split(r"[\s;]", text, maxsplit=1)[0]
    if (
        has_url_scheme(first)
        or first.startswith((".", "/", "~"))
        or "/" in first
        or "\\" in first
        or first.lower().endswith(_ARCHIVE_SUFFIXES)
    ):
        raise DependencyError(
            f"{where}: {text!r} is a URL or a path: a skill's dependencies come from the "
            "operator's package index, by name and version range"
        )


def node_entry(name: Any, version_range: Any, where: str) -> NodeEntry:
    """A validated npm dependency: a registry name and a range that stays on the registry."""
    if not isinstance(version_range, str):
        raise DependencyError(f"{where}: the version range must be a string")
    if (
        not isinstance(name, str)
        or len(name) > MAX_NODE_NAME_LENGTH
        or name in _NPM_RESERVED
        or not _NPM_NAME.fullmatch(name)
    ):
        raise DependencyError(f"{where}: {name!r} is not a valid npm package name")
    normalized = " ".join(version_range.split()) or "*"
    if (
        has_url_scheme(normalized)
        or normalized.startswith((".", "/", "~/"))
        or "/" in normalized
        or "\\" in normalized
    ):
        raise DependencyError(
            f"{where}: {version_range!r} is a file, link, git or URL spec: a skill's Node "
            "dependencies come from the operator's registry, by name and version range"
        )
    if len(normalized) > MAX_NODE_RANGE_LENGTH or not _NPM_RANGE.fullmatch(normalized):
        raise DependencyError(f"{where}: {version_range!r} is not an npm version range")
    return NodeEntry(name, normalized, where)


def all_strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)
