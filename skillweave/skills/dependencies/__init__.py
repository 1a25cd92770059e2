"""Dependency discovery: the packages a skill version declares, merged into one spec.

Skill authors declare dependencies the way they already do, and :func:`discover_dependencies`
reads all of it from the package's files (relative POSIX path → bytes; no filesystem) into one
:class:`DependencySpec`, which the environment builder installs and stores beside the build.
The sources, all relative to the skill's root (the folder with ``SKILL.md``):

``SKILL.md`` frontmatter
    ``metadata.dependencies: {python: [...], node: {name: range}}`` or a plain list of Python
    requirements (our extension; its shape is the spec module's to check). The same at the top
    level is read too, for skills written before extensions moved under ``metadata`` (lenient
    loading warns about it, strict validation refuses it). A ``dependencies`` *string* names
    skills, not packages, and is ignored here.
``requirements.txt``
    One PEP 508 requirement a line; comments, blank lines, ``\\`` continuations and ``-r FILE``
    includes of files inside the package (relative to the including file; no escaping the
    package, no loops; a file included twice is read once). Every other option (``-i``,
    ``--index-url``, ``--extra-index-url``, ``-f``, ``--no-index``, ``-e``, ``-c``, ...) and
    every URL or path given as a requirement is refused: the index is the operator's choice
    (``sandbox.environments`` settings) and a skill must not redirect it. ``--hash`` options
    are ignored, so ``pip-compile --generate-hashes`` output reads unchanged: environments come
    from the index the operator trusts, and the pins stay.
``scripts/**/*.py``
    PEP 723 inline script metadata: the ``# /// script`` ... ``# ///`` block, found with the
    PEP's reference regular expression (line ends normalised to LF first, as Python reads a
    script; bytes read as UTF-8), its ``dependencies`` and ``requires-python``. Two ``script``
    blocks in one file are an error; blocks of other types, unclosed blocks and ``.py`` files
    outside ``scripts/`` are ignored.
``package.json``
    ``dependencies`` (name → version range). ``devDependencies`` and ``peerDependencies`` are
    ignored, and so are ``optionalDependencies``: npm tolerates their failure (they are mostly
    platform-specific), which a spec of plain requirements cannot express; a dependency a
    script needs belongs in ``dependencies``. ``file:``, ``link:``, git, GitHub shorthand,
    URL and other protocol specs are refused: they escape the index.

Merging, one rule each, kept simple on purpose:

* Python: one requirement per canonical (PEP 503) project name. The same project from several
  places has its specifier sets intersected (``SpecifierSet &``) and its extras united; its
  markers must be equal. A conflict (a :class:`DependencyError` naming both requirements and
  where each came from) is an exact pin (``==X``) that another declaration excludes (``==1.0``
  and ``==2.0``, ``==1.0`` and ``>=2``), or two different markers. Other contradictions
  (``>=2`` and ``<1``) are left for the resolver, whose build error names the package.
* Node: the same name twice must have textually equal ranges (whitespace aside).
* ``requires-python``: the specifier sets of all scripts intersected, pins checked as above.

Limits: a source file over :data:`MAX_SOURCE_BYTES`, or more than ``max_dependencies``
distinct Python and Node packages in all, is a :class:`DependencyError`; the count is taken on
names before any requirement is parsed, so a huge list costs little to refuse. pip's own
requirements parser is not a public library (and would follow options we refuse), so the
small subset above is read here.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import re
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from skillweave.errors import DependencyError, SkillFormatError
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.imports import infer_imports
from skillweave.skills.spec import declares_packages, package_dependency_problems

__all__ = [
    "BASE_SOURCE",
    "DEFAULT_MAX_DEPENDENCIES",
    "MAX_SOURCE_BYTES",
    "DependencySpec",
    "base_environment",
    "dependency_lines",
    "discover_dependencies",
    "package_dependencies",
]

DEFAULT_MAX_DEPENDENCIES: Final = 200
"""Most distinct packages (Python and Node together) a skill may declare by default; the
manager passes ``sandbox.environments.max_dependencies``."""
MAX_SOURCE_BYTES: Final = 1024 * 1024
"""Largest file read as a dependency source (requirements, scripts, package.json, SKILL.md)."""
_PACKAGE_FILE_BYTES: Final = 4 * 1024 * 1024
"""Files of a package larger than this are not read at all (discovery refuses a source over
:data:`MAX_SOURCE_BYTES` itself, so an oversized requirements file is still reported)."""
MAX_NODE_RANGE_LENGTH: Final = 256
MAX_NODE_NAME_LENGTH: Final = 214  # npm's own limit

SKILL_FILE: Final = "SKILL.md"
REQUIREMENTS_FILE: Final = "requirements.txt"
PACKAGE_JSON: Final = "package.json"
SCRIPTS_PREFIX: Final = "scripts/"
BASE_SOURCE: Final = "base environment"
"""The source of what the operator's base environment adds (``DependencySpec.sources``)."""
_IMPORTS_SOURCE: Final = " (imports)"

# PEP 723's reference regular expression, verbatim.
_PEP723_BLOCK: Final = re.compile(
    r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$"
)
_COMMENT: Final = re.compile(r"(^|\s+)#.*$")
# A requirement's leading name, loosely (the full parse comes later): enough to count names.
_LEADING_NAME: Final = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_URL_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ARCHIVE_SUFFIXES: Final = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")
# validate-npm-package-name: URL-safe characters, lowercase scopes, no leading '.' or '_'
# (uppercase is allowed for the old packages that have it, such as JSONStream).
_NPM_NAME: Final = re.compile(r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*")
_NPM_RESERVED: Final = frozenset({"node_modules", "favicon.ico"})
_NPM_RANGE: Final = re.compile(r"[0-9A-Za-z.^~<>=|*+\- ]*")
_INCLUDE_OPTIONS: Final = ("-r", "--requirement")
_HASH_OPTION: Final = "--hash"


@dataclass(frozen=True, slots=True)
class DependencySpec:
    """Everything a skill version declares, normalised and merged.

    Attributes:
        python: PEP 508 requirement strings (``str(Requirement)``, the name canonical), one per
            project, sorted by canonical name.
        node: ``(package name, version range)`` pairs, sorted by name.
        requires_python: the merged ``requires-python`` of the scripts' PEP 723 blocks, or
            None when none says.
        sources: what contributed, in reading order (``"SKILL.md dependencies"``,
            ``"requirements.txt"``, an included file's path, ``"scripts/x.py (PEP 723)"``,
            ``"package.json"``, ``"scripts/x.py (imports)"``, ``"base environment"``). Not
            part of the digest: moving a requirement between files does not change what is
            installed.
        inferred: the entries of `python` (their canonical names) and of `node` (their names)
            that nothing declared: the scripts import them (``skills.imports``). The builder
            installs them on a best-effort basis.
    """

    python: tuple[str, ...] = ()
    node: tuple[tuple[str, str], ...] = ()
    requires_python: str | None = None
    sources: tuple[str, ...] = ()
    inferred: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to install (a ``requires-python`` alone needs no
        environment)."""
        return not self.python and not self.node

    def digest(self) -> str:
        """sha256 (hex) of a canonical JSON of what is installed: python, node and
        requires_python; equal specs have equal digests whatever order they were declared in."""
        payload = {
            "node": [list(pair) for pair in self.node],
            "python": list(self.python),
            "requires_python": self.requires_python,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict, stored beside a built environment; :meth:`from_json` reads it."""
        return {
            "python": list(self.python),
            "node": dict(self.node),
            "requires_python": self.requires_python,
            "sources": list(self.sources),
            "inferred": list(self.inferred),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DependencySpec:
        """Read what :meth:`to_json` wrote.

        Raises:
            DependencyError: the data does not have that shape.
        """
        python = data.get("python", [])
        node = data.get("node", {})
        requires_python = data.get("requires_python")
        sources = data.get("sources", [])
        inferred = data.get("inferred", [])
        shaped = (
            _all_strings(python)
            and isinstance(node, Mapping)
            and _all_strings(list(node))
            and _all_strings(list(node.values()))
            and (requires_python is None or isinstance(requires_python, str))
            and _all_strings(sources)
            and _all_strings(inferred)
        )
        if not shaped:
            raise DependencyError("a stored dependency spec is malformed")
        return cls(
            python=tuple(sorted(python, key=_python_sort_key)),
            node=tuple(sorted(node.items())),
            requires_python=requires_python,
            sources=tuple(sources),
            inferred=tuple(inferred),
        )

    def is_inferred(self, entry: str) -> bool:
        """Whether `entry` (a requirement of `python`, or a name of `node`) was inferred."""
        return entry in self.inferred or _python_sort_key(entry) in self.inferred

    def declared(self) -> DependencySpec:
        """This spec without what was inferred."""
        return DependencySpec(
            python=tuple(p for p in self.python if not self.is_inferred(p)),
            node=tuple(pair for pair in self.node if pair[0] not in self.inferred),
            requires_python=self.requires_python,
            sources=tuple(s for s in self.sources if not s.endswith(_IMPORTS_SOURCE)),
        )

    def with_base(self, base: DependencySpec) -> DependencySpec:
        """This spec with the operator's base environment added: a project or package this
        spec has keeps its own requirement; the base's requires_python does not apply."""
        if base.empty:
            return self
        own = {_python_sort_key(p) for p in self.python}
        names = {name for name, _ in self.node}
        python = [*self.python, *(p for p in base.python if _python_sort_key(p) not in own)]
        node = [*self.node, *(pair for pair in base.node if pair[0] not in names)]
        return DependencySpec(
            python=tuple(sorted(python, key=_python_sort_key)),
            node=tuple(sorted(node)),
            requires_python=self.requires_python,
            sources=(*self.sources, BASE_SOURCE),
            inferred=self.inferred,
        )


def base_environment(python: Sequence[str], node: Mapping[str, str]) -> DependencySpec:
    """The operator's base environment (``sandbox.environments.base_python`` and
    ``base_node``) as a spec, read by the rules a skill's declarations are read by.

    Raises:
        DependencyError: a requirement or a Node dependency is invalid (named).
    """
    declared = _Declared()
    for index, text in enumerate(python):
        declared.python.append(_Python(text, f"base_python[{index}]"))
    for name, version_range in node.items():
        declared.node.append(_node(name, version_range, f"base_node.{name}"))
    for entry in declared.python:
        _counted_name(entry)
    sources = (BASE_SOURCE,) if python or node else ()
    return DependencySpec(
        python=_merge_python(declared.python),
        node=_merge_node(declared.node),
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
    declared = _Declared()
    _read_frontmatter(files, declared)
    if REQUIREMENTS_FILE in files:
        _read_requirements(files, REQUIREMENTS_FILE, declared, including=(), seen=set())
    for path in sorted(files):
        if path.startswith(SCRIPTS_PREFIX) and path.endswith(".py"):
            _read_script(files, path, declared)
    if PACKAGE_JSON in files:
        _read_package_json(files, declared)
    inferred = _infer(files, declared) if infer else []

    count = len({_counted_name(entry) for entry in declared.python}) + len(
        {entry.name for entry in declared.node}
    )
    if count > max_dependencies:
        raise DependencyError(
            f"{count} dependencies declared, the limit is {max_dependencies} "
            f"(from {', '.join(declared.sources)})"
        )
    return DependencySpec(
        python=_merge_python(declared.python),
        node=_merge_node(declared.node),
        requires_python=_merge_requires_python(declared.requires_python),
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


def dependency_lines(spec: DependencySpec) -> list[str]:
    """One line per package of `spec`, marked when it was inferred from the scripts' imports
    rather than declared: what ``skills build`` and ``skills show`` print."""
    lines = []
    for requirement in spec.python:
        lines.append(f"python {requirement}{_origin(spec, requirement)}")
    for name, version_range in spec.node:
        lines.append(f"node {name}@{version_range}{_origin(spec, name)}")
    return lines


def _origin(spec: DependencySpec, entry: str) -> str:
    if spec.is_inferred(entry):
        return " (inferred from the scripts' imports)"
    return ""


def _infer(files: Mapping[str, bytes], declared: _Declared) -> list[str]:
    """Add to `declared` what the scripts import and it does not have; the names added."""
    found = infer_imports(files)
    have = {_counted_name(entry) for entry in declared.python}
    added: list[str] = []
    for distribution, where in found.python.items():
        name = canonicalize_name(distribution)
        if name not in have:
            have.add(name)
            declared.python.append(_Python(name, f"{where} (imports)"))
            declared.contributed(f"{where}{_IMPORTS_SOURCE}")
            added.append(name)
    names = {entry.name for entry in declared.node}
    for package, where in found.node.items():
        if package not in names:
            names.add(package)
            declared.node.append(_Node(package, "*", f"{where} (imports)"))
            declared.contributed(f"{where}{_IMPORTS_SOURCE}")
            added.append(package)
    return added


# --- what the sources declare, before merging ------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Python:
    text: str
    where: str  # "requirements.txt:3", "scripts/x.py (PEP 723)", "SKILL.md dependencies"


@dataclass(frozen=True, slots=True)
class _Node:
    name: str
    version_range: str
    where: str


@dataclass(slots=True)
class _Declared:
    python: list[_Python] = field(default_factory=list)
    node: list[_Node] = field(default_factory=list)
    requires_python: list[_Python] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def contributed(self, source: str, *, at: int | None = None) -> None:
        if source not in self.sources:
            self.sources.insert(len(self.sources) if at is None else at, source)


def _text(files: Mapping[str, bytes], path: str) -> str:
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


def _read_frontmatter(files: Mapping[str, bytes], declared: _Declared) -> None:
    if SKILL_FILE not in files:
        return
    try:
        data = parse_frontmatter(_text(files, SKILL_FILE), path=SKILL_FILE).data
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
            declared.python.append(_Python(text, f"{source} python[{index}]"))
        for name, version_range in node.items():
            declared.node.append(_node(name, version_range, f"{source} node.{name}"))
        if python or node:
            declared.contributed(source)


def _read_requirements(
    files: Mapping[str, bytes],
    path: str,
    declared: _Declared,
    *,
    including: tuple[str, ...],
    seen: set[str],
) -> None:
    """Read one requirements file and, depth first, the files it includes.

    `including` is the chain of files that led here (a loop is an error); `seen` holds every
    file already read, so a file included from two places is read once, and a fan of includes
    cannot make the work grow past the number of files.
    """
    seen.add(path)
    chain = (*including, path)
    contributed = False
    position = len(declared.sources)  # an including file is listed before what it includes
    for line_number, line in _logical_lines(_text(files, path)):
        where = f"{path}:{line_number}"
        if line.startswith("-"):
            target = _include_target(line, where)
            included = _resolve_include(files, path, target, where)
            if included in chain:
                loop = " -> ".join((*chain, included))
                raise DependencyError(f"{where}: include loop: {loop}")
            if included not in seen:
                _read_requirements(files, included, declared, including=chain, seen=seen)
            continue
        requirement = _strip_hash_options(line, where)
        _refuse_url_or_path(requirement, where)
        declared.python.append(_Python(requirement, where))
        contributed = True
    if contributed:
        declared.contributed(path, at=position)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` of each non-empty logical line: backslash continuations
    joined, then comments (``#`` at the start or after whitespace) removed, as pip does."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, physical in enumerate(text.split("\n"), start=1):
        if not pending:
            start = number
        if physical.endswith("\\") and not _COMMENT.match(physical):
            pending.append(physical[:-1])
            continue
        pending.append(physical)
        logical = _COMMENT.sub("", "".join(pending)).strip()
        pending = []
        if logical:
            lines.append((start, logical))
    if pending and (logical := _COMMENT.sub("", "".join(pending)).strip()):
        lines.append((start, logical))
    return lines


def _include_target(line: str, where: str) -> str:
    """The file named by an ``-r`` line; any other option is refused."""
    option, *rest = line.split(None, 1)
    option, equals, value = option.partition("=")
    rest = rest[0].strip() if rest else ""
    if option in _INCLUDE_OPTIONS:
        target = value if equals else rest
    elif option.startswith("-r") and not option.startswith("--"):
        target = option[2:] + (equals + value if equals else "")
    else:
        raise DependencyError(
            f"{where}: option {option!r} is not accepted: the package index and install "
            "options are the operator's choice (sandbox.environments settings); a skill's "
            "requirements may hold only requirements and '-r FILE' includes"
        )
    if not target:
        raise DependencyError(f"{where}: {option} names no file")
    return target


def _resolve_include(files: Mapping[str, bytes], path: str, target: str, where: str) -> str:
    """The package path of an included file, relative to the including one; inside the package."""
    if _URL_SCHEME.match(target) or target.startswith(("/", "~")) or "\\" in target:
        raise DependencyError(
            f"{where}: '-r {target}' must name a file inside the skill package, by a relative path"
        )
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        raise DependencyError(f"{where}: '-r {target}' leaves the skill package")
    if resolved not in files:
        raise DependencyError(f"{where}: '-r {target}': no such file in the skill package")
    return resolved


def _strip_hash_options(line: str, where: str) -> str:
    """The requirement part of a line; ``--hash`` options after it are dropped, other
    per-requirement options refused (pip splits them off at the first `` -`` word too)."""
    words = line.split()
    for index, word in enumerate(words):
        if index and word.startswith("-"):
            options = words[index:]
            _check_hash_options(options, where)
            return " ".join(words[:index])
    return line


def _check_hash_options(options: list[str], where: str) -> None:
    expect_value = False
    for word in options:
        if expect_value:
            expect_value = False
        elif word == _HASH_OPTION:
            expect_value = True
        elif not word.startswith(f"{_HASH_OPTION}="):
            raise DependencyError(
                f"{where}: option {word.partition('=')[0]!r} is not accepted after a "
                "requirement (only --hash, which is ignored)"
            )


def _refuse_url_or_path(text: str, where: str) -> None:
    """A URL, VCS link, archive or local path given as a requirement escapes the index."""
    first = re.split(r"[\s;]", text, maxsplit=1)[0]
    if (
        _URL_SCHEME.match(first)
        or first.startswith((".", "/", "~"))
        or "/" in first
        or "\\" in first
        or first.lower().endswith(_ARCHIVE_SUFFIXES)
    ):
        raise DependencyError(
            f"{where}: {text!r} is a URL or a path: a skill's dependencies come from the "
            "operator's package index, by name and version range"
        )


def _read_script(files: Mapping[str, bytes], path: str, declared: _Declared) -> None:
    """Read the PEP 723 ``script`` block of one script, if it has one."""
    text = _text(files, path)
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
    if not isinstance(dependencies, list) or not _all_strings(dependencies):
        raise DependencyError(f"{source}: 'dependencies' must be a list of requirement strings")
    requires_python = metadata.get("requires-python")
    if requires_python is not None and not isinstance(requires_python, str):
        raise DependencyError(f"{source}: 'requires-python' must be a string")
    for index, requirement in enumerate(dependencies):
        where = f"{source} dependencies[{index}]"
        _refuse_url_or_path(requirement, where)
        declared.python.append(_Python(requirement, where))
    if requires_python is not None:
        declared.requires_python.append(_Python(requires_python, source))
    if dependencies or requires_python is not None:
        declared.contributed(source)


def _read_package_json(files: Mapping[str, bytes], declared: _Declared) -> None:
    try:
        data = json.loads(_text(files, PACKAGE_JSON))
    except (ValueError, RecursionError) as exc:
        raise DependencyError(f"{PACKAGE_JSON}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DependencyError(f"{PACKAGE_JSON}: must be a JSON object")
    dependencies = data.get("dependencies", {})
    if not isinstance(dependencies, dict):
        raise DependencyError(f"{PACKAGE_JSON}: 'dependencies' must map names to version ranges")
    for name, version_range in dependencies.items():
        declared.node.append(_node(name, version_range, f"{PACKAGE_JSON} dependencies.{name}"))
    if dependencies:
        declared.contributed(PACKAGE_JSON)


def _node(name: Any, version_range: Any, where: str) -> _Node:
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
        _URL_SCHEME.match(normalized)
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
    return _Node(name, normalized, where)


# --- merging -----------------------------------------------------------------------------------


def _counted_name(entry: _Python) -> str:
    """The canonical name a requirement will count as; an unreadable one fails here, early."""
    match = _LEADING_NAME.match(entry.text)
    if match is None:
        raise DependencyError(
            f"{entry.where}: invalid requirement {entry.text!r}: it must start with a project name"
        )
    return canonicalize_name(match.group(1))


def _parse(entry: _Python) -> Requirement:
    try:
        requirement = Requirement(entry.text)
    except InvalidRequirement as exc:
        raise DependencyError(
            f"{entry.where}: invalid requirement {entry.text!r}: {exc}".replace("\n", " ")
        ) from None
    if requirement.url:
        raise DependencyError(
            f"{entry.where}: {entry.text!r} is a direct reference (a URL): a skill's "
            "dependencies come from the operator's package index, by name and version range"
        )
    return requirement


@dataclass(slots=True)
class _Project:
    """One Python project as merged so far, and every declaration that made it."""

    extras: set[str]
    specifier: SpecifierSet
    marker: Marker | None
    declarations: list[tuple[Requirement, str]]


def _merge_python(entries: list[_Python]) -> tuple[str, ...]:
    projects: dict[str, _Project] = {}
    for entry in entries:
        requirement = _parse(entry)
        name = canonicalize_name(requirement.name)
        extras = {canonicalize_name(extra) for extra in requirement.extras}
        project = projects.get(name)
        if project is None:
            projects[name] = _Project(
                extras, requirement.specifier, requirement.marker, [(requirement, entry.where)]
            )
            continue
        for earlier, earlier_where in project.declarations:
            if str(earlier.marker) != str(requirement.marker):
                _conflict(name, (earlier, earlier_where), (requirement, entry.where), "markers")
            _check_pins(name, (earlier, earlier_where), (requirement, entry.where))
        project.extras |= extras
        project.specifier &= requirement.specifier
        project.declarations.append((requirement, entry.where))
    merged = []
    for name in sorted(projects):
        project = projects[name]
        extras = f"[{','.join(sorted(project.extras))}]" if project.extras else ""
        marker = f"; {project.marker}" if project.marker is not None else ""
        merged.append(str(Requirement(f"{name}{extras}{project.specifier}{marker}")))
    return tuple(merged)


def _check_pins(name: str, first: tuple[Any, str], second: tuple[Any, str]) -> None:
    """Conflict when either declaration pins an exact version the other excludes.

    Each side is ``(thing with a .specifier, where)``: a Requirement, or a requires-python.
    """
    for pinned, other in ((first, second), (second, first)):
        for specifier in pinned[0].specifier:
            if specifier.operator != "==" or specifier.version.endswith(".*"):
                continue
            if not other[0].specifier.contains(specifier.version, prereleases=True):
                _conflict(name, pinned, other, "exact versions")


def _conflict(name: str, first: tuple[Any, str], second: tuple[Any, str], what: str) -> None:
    reason = {
        "markers": "the markers differ (declare it once, or with the same marker)",
        "exact versions": "an exact pin the other excludes",
    }[what]
    raise DependencyError(
        f"conflicting requirements for {name!r}: {first[0]} (from {first[1]}) and "
        f"{second[0]} (from {second[1]}): {reason}"
    )


def _merge_node(entries: list[_Node]) -> tuple[tuple[str, str], ...]:
    chosen: dict[str, _Node] = {}
    for entry in entries:
        earlier = chosen.setdefault(entry.name, entry)
        if earlier.version_range != entry.version_range:
            raise DependencyError(
                f"conflicting Node dependency {entry.name!r}: {earlier.version_range!r} "
                f"(from {earlier.where}) and {entry.version_range!r} (from {entry.where}): "
                "ranges of one package must be written the same everywhere"
            )
    return tuple(sorted((name, entry.version_range) for name, entry in chosen.items()))


@dataclass(frozen=True, slots=True)
class _RequiresPython:
    specifier: SpecifierSet

    def __str__(self) -> str:
        return f"requires-python {self.specifier}"


def _merge_requires_python(entries: list[_Python]) -> str | None:
    if not entries:
        return None
    merged = SpecifierSet()
    seen: list[tuple[_RequiresPython, str]] = []
    for entry in entries:
        try:
            declared = _RequiresPython(SpecifierSet(entry.text))
        except InvalidSpecifier as exc:
            raise DependencyError(
                f"{entry.where}: invalid requires-python {entry.text!r}: {exc}"
            ) from None
        for earlier in seen:
            _check_pins("python", earlier, (declared, entry.where))
        seen.append((declared, entry.where))
        merged &= declared.specifier
    return str(merged)


def _python_sort_key(requirement: str) -> str:
    match = _LEADING_NAME.match(requirement)
    return canonicalize_name(match.group(1)) if match else requirement


def _all_strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)
