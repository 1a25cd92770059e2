"""What a skill declares against what its scripts do: network destinations and packages,
and where its packages would be installed from (:func:`check_sources`).

Nothing is parsed twice here. The network declaration is read by the egress policy's own
parser (``skillweave.skills.network.declared_destinations``) and matched with its own
``Destination.matches``; declared packages come from ``skills.dependencies`` and imported ones
from ``skills.imports``, whose difference (``DependencySpec.inferred``) is exactly "imported
but not declared".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import islice
from typing import Any, Final
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from skillweave.errors import DependencyError, EgressPolicyError
from skillweave.skills.dependencies import discover_dependencies
from skillweave.skills.imports import PYTHON_DISTRIBUTIONS, infer_imports
from skillweave.skills.network import Destination, declared_destinations
from skillweave.skills.scan._text import URL, Collector, FileFacts, Url, excerpt
from skillweave.skills.scan._typosquat import typosquat_of

SKILL_FILE = "SKILL.md"
_RESERVED_SUFFIXES: Final = (".example", ".test", ".invalid")
_MAX_RESERVED_URLS: Final = 50
_MAX_FILES: Final = 200
_MAX_LINES: Final = 2000
_INDEX_OPTION: Final = re.compile(
    r"(--(?:extra-)?index-url|-i|--find-links|-f|--trusted-host)(?:\s*=\s*|\s+)(\S+)", re.I
)
_UV_INDEX: Final = re.compile(r"\s*(?:extra-index-url|index-url|find-links|url)\s*=", re.I)
_SOURCE_URL: Final = re.compile(r"(?:git\+|hg\+|svn\+|bzr\+)?(?:https?|ssh|ftp|git)://[^\s\"'\],]+")
_INDEX_HOSTS: Final = frozenset({"pypi.org", "files.pythonhosted.org", "pypi.python.org",
                                 "test.pypi.org", "registry.npmjs.org",
                                 "registry.yarnpkg.com"})  # fmt: skip
_JSON_KEY: Final = re.compile(r'\s*"([^"]{1,214})"\s*:\s*')
_NODE_DEPENDENCY_MAPS: Final = frozenset({"dependencies", "devDependencies",
                                          "optionalDependencies", "peerDependencies",
                                          "overrides", "resolutions"})  # fmt: skip
_CODE_HOSTS: Final = frozenset({"github.com", "gitlab.com", "bitbucket.org",
                                "codeload.github.com"})  # fmt: skip
"""Public code hosts a direct or VCS requirement may name over https."""


def declared_network(
    frontmatter: Mapping[str, Any] | None, skill_text: str, out: Collector
) -> tuple[Destination, ...] | None:
    """The destinations ``metadata.network`` declares; None when it cannot be read (a
    finding says why)."""
    metadata = frontmatter.get("metadata") if frontmatter else None
    value = metadata.get("network") if isinstance(metadata, Mapping) else None
    try:
        return declared_destinations(value)
    except EgressPolicyError as exc:
        line = _line_of(skill_text, r"^\s*network\s*:")
        out.add("network.invalid-declaration", SKILL_FILE, line,
                f"metadata.network cannot be read: {exc}", _shown(skill_text, line))  # fmt: skip
        return None


def check_network(
    declared: tuple[Destination, ...] | None,
    facts: Mapping[str, FileFacts],
    texts: Mapping[str, str],
    skill_text: str,
    out: Collector,
) -> None:
    """Network use without a declaration, URLs to undeclared hosts, declared hosts unused."""
    if declared is None:
        return
    for path in sorted(facts):
        fact = facts[path]
        if fact.network and not declared:
            line, what = fact.network[0]
            out.add("network.undeclared", path, line,
                    f"{what}, but the skill declares no metadata.network",
                    _shown(texts.get(path, ""), line))  # fmt: skip
        reserved = _reserved_urls(texts.get(path, "")) if _declares_reserved(declared) else []
        for url in [*fact.urls, *reserved]:
            if any(d.matches(url.host, url.port) for d in declared):
                continue
            out.add("network.undeclared", path, url.line,
                    f"{url.host}:{url.port} is not among the declared destinations",
                    _shown(texts.get(path, ""), url.line),
                    severity="medium" if fact.network else "low")  # fmt: skip
    line = _line_of(skill_text, r"^\s*network\s*:")
    for destination in declared:
        if not _named(destination, facts, texts):
            out.add("network.unused-declaration", SKILL_FILE, line,
                    f"{destination} is declared but no script names it",
                    _shown(skill_text, line))  # fmt: skip


def _declares_reserved(declared: tuple[Destination, ...]) -> bool:
    """Whether the skill declares a host of a reserved domain (``api.tool.example``): it
    connects to such hosts, so its scripts' URLs in those domains are destinations too."""
    return any(d.host.removeprefix("*.").endswith(_RESERVED_SUFFIXES) for d in declared)


def _reserved_urls(text: str) -> list[Url]:
    """The URLs of a reserved domain in `text` (``collect_urls`` passes them over as
    documentation), at most :data:`_MAX_RESERVED_URLS`."""
    found: list[Url] = []
    for match in islice(URL.finditer(text), _MAX_RESERVED_URLS * 4):
        try:
            parts = urlsplit(match.group())
            host, port = (parts.hostname or "").rstrip(".").lower(), parts.port
        except ValueError:
            continue
        if host.endswith(_RESERVED_SUFFIXES) and len(found) < _MAX_RESERVED_URLS:
            line = text.count("\n", 0, match.start()) + 1
            found.append(Url(line, match.group(), host, port or 443))
    return found


def _named(
    destination: Destination, facts: Mapping[str, FileFacts], texts: Mapping[str, str]
) -> bool:
    if any(destination.matches(u.host, u.port) for f in facts.values() for u in f.urls):
        return True
    host = destination.host.removeprefix("*.")
    return any(host in texts.get(path, "").lower() for path in facts)


def check_dependencies(files: Mapping[str, bytes], *, frontmatter_ok: bool, out: Collector) -> None:
    """Packages imported and not declared, declared and not imported, declarations that
    cannot be used, and install sources outside the default index (:func:`check_sources`)."""
    check_sources(files, out)
    readable = files if frontmatter_ok else {p: d for p, d in files.items() if p != SKILL_FILE}
    try:
        spec = discover_dependencies(readable, infer=True)
    except DependencyError as exc:
        path, line = _where(str(exc), files)
        out.add("dependencies.invalid", path, line,
                f"the dependency declarations cannot be used: {exc}")  # fmt: skip
        return
    imported = infer_imports(files)
    for name in spec.inferred:
        where = imported.python.get(name) or imported.node.get(name)
        if where is None:  # canonical names differ from what infer_imports returned
            where = next(
                (p for d, p in imported.python.items() if canonicalize_name(d) == name), None
            )
        line = _import_line(files.get(where or "", b""), name) if where else None
        out.add("dependencies.undeclared", where or SKILL_FILE, line,
                f"imports {name}, which nothing declares (requirements.txt, PEP 723, "
                "package.json or metadata.dependencies)",
                _shown(_text(files.get(where or "", b"")), line))  # fmt: skip
    used_python = {canonicalize_name(name) for name in imported.python}
    declared = spec.declared()
    for requirement in declared.python:
        try:
            name = canonicalize_name(Requirement(requirement).name)
        except InvalidRequirement:
            continue
        target = typosquat_of(name)
        if target is not None:
            path, line = _declared_at(files, name)
            out.add("dependencies.typosquat", path, line,
                    f"declares {name}, one keystroke from the popular package {target} "
                    "(a typosquat installs the attacker's code)",
                    _shown(_text(files.get(path, b"")), line))  # fmt: skip
        if name not in used_python:
            path, line = _declared_at(files, name)
            out.add("dependencies.unused", path, line,
                    f"{name} is declared but no script imports it")  # fmt: skip
    for name, _ in declared.node:
        if name not in imported.node:
            path, line = _declared_at(files, name)
            out.add("dependencies.unused", path, line,
                    f"{name} is declared but no script requires it")  # fmt: skip


def check_sources(files: Mapping[str, bytes], out: Collector) -> None:
    """Install sources outside the default index in ``requirements*.txt``, PEP 723
    blocks, package.json dependency maps and SKILL.md's ``metadata.dependencies``:
    ``dependencies.untrusted-source``.

    An index option (``--index-url``, ``--extra-index-url``, ``--find-links``, uv's
    ``index-url``/``extra-index-url``/``[[tool.uv.index]] url``) naming a host other than
    PyPI's or plain http, a ``--trusted-host`` (TLS checks off for it), and a direct URL
    or VCS requirement (``name @ https://...``, ``git+https://...``, a node spec that is a
    tarball URL or a git remote) over plain http or git, or
    from a host that is neither PyPI nor a public code host: each lets a package the skill
    names come from wherever the line says (dependency confusion, a wheel swapped on a
    mirror). These lines are read here as text, because ``skills.dependencies`` refuses
    them (``dependencies.invalid``) rather than parse them."""
    for path in sorted(files)[:_MAX_FILES]:
        name = path.rsplit("/", 1)[-1].lower()
        if name.startswith("requirements") and name.endswith((".txt", ".in")):
            lines = enumerate(_text(files[path]).splitlines()[:_MAX_LINES], 1)
        elif name.endswith(".py") and b"# /// script" in files[path]:
            lines = _script_block(_text(files[path]))
        elif name == "package.json":
            lines = _package_dependency_lines(_text(files[path]))
        elif path == SKILL_FILE:
            lines = _metadata_dependency_lines(_text(files[path]))
        else:
            continue
        for number, line in lines:
            reason = _untrusted(line)
            if reason is not None:
                out.add("dependencies.untrusted-source", path, number, reason,
                        excerpt(line.strip()))  # fmt: skip


def _script_block(text: str) -> list[tuple[int, str]]:
    """The lines of a PEP 723 ``# /// script`` block, with their numbers."""
    found: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(text.splitlines()[:_MAX_LINES], 1):
        stripped = line.strip()
        if stripped == "# /// script":
            inside = True
        elif stripped == "# ///":
            inside = False
        elif inside and stripped.startswith("#"):
            found.append((number, stripped[1:]))
    return found


def _package_dependency_lines(text: str) -> list[tuple[int, str]]:
    """The ``"name": "spec"`` lines of a package.json's dependency maps, as ``name @ spec``
    (a spec that is a URL or a git remote installs from wherever it names)."""
    found: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(text.splitlines()[:_MAX_LINES], 1):
        key = _JSON_KEY.match(line)
        if key and line.rstrip().endswith("{"):
            inside = key.group(1) in _NODE_DEPENDENCY_MAPS
        elif inside and key:
            found.append((number, f"{key.group(1)} @ {line[key.end() :]}"))
        elif line.strip().startswith("}"):
            inside = False
    return found


def _metadata_dependency_lines(text: str) -> list[tuple[int, str]]:
    """The lines of SKILL.md's frontmatter block under ``dependencies:`` (``metadata.
    dependencies``: its node specs and Python requirements)."""
    found: list[tuple[int, str]] = []
    indent: int | None = None
    for number, line in enumerate(text.splitlines()[:_MAX_LINES], 1):
        if number > 1 and line.strip() == "---":
            break
        depth = len(line) - len(line.lstrip())
        if indent is not None and line.strip() and depth <= indent:
            indent = None
        if indent is not None:
            found.append((number, line.replace('"', " ").replace("'", " ")))
        elif re.match(r"\s*dependencies\s*:\s*$", line):
            indent = depth
    return found


def _untrusted(line: str) -> str | None:
    """Why `line` installs from an untrusted source; None when it does not."""
    text = line.split(" #", 1)[0].strip()
    if text.startswith("#") or not text:
        return None
    option = _INDEX_OPTION.match(text)
    if option and option.group(1).lower() == "--trusted-host":
        host = option.group(2).split(":", 1)[0].lower()
        return None if host in _INDEX_HOSTS else f"turns TLS checks off for {host} (--trusted-host)"
    for match in _SOURCE_URL.finditer(text):
        url = match.group(0)
        scheme = url.split("://", 1)[0].lower().removeprefix("git+")
        host = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0].lower()
        index = option is not None or _UV_INDEX.match(text) is not None
        trusted = _INDEX_HOSTS if index else _INDEX_HOSTS | _CODE_HOSTS
        if scheme in ("http", "git") or host not in trusted:
            what = "packages from the index" if index else "a package directly from"
            plain = f" over plain {scheme}" if scheme in ("http", "git") else ""
            return f"installs {what} {url[:120]}{plain}, outside the default index"
    return None


def _where(message: str, files: Mapping[str, bytes]) -> tuple[str, int | None]:
    match = re.match(r"([^\s:]{1,300}?)(?::(\d{1,7}))?:\s", message)
    if match and match.group(1) in files:
        return match.group(1), int(match.group(2)) if match.group(2) else None
    return SKILL_FILE, None


def _import_line(data: bytes, distribution: str) -> int | None:
    names = {k.split(".")[0] for k, v in PYTHON_DISTRIBUTIONS.items() if v == distribution}
    names.add(distribution.replace("-", "_"))
    text = _text(data)
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    pattern = (
        rf"^\s*(?:import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*|from\s+)(?:{alternatives})\b"
        rf"|\b(?:require\s*\(|from\s*|import\s*\(?)\s*"
        rf"['\"]{re.escape(distribution)}(?:/[^'\"]*)?['\"]"
    )
    match = re.search(pattern, text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _declared_at(files: Mapping[str, bytes], name: str) -> tuple[str, int | None]:
    for path in ("requirements.txt", "package.json", SKILL_FILE):
        if path in files:
            line = _line_of(_text(files[path]), rf"(?i)^[\s\"'-]*{re.escape(name)}\b")
            if line is not None:
                return path, line
    for path in sorted(files):
        if path.startswith("scripts/") and path.endswith(".py"):
            line = _line_of(_text(files[path]), rf"(?i)^#\s+[\"']{re.escape(name)}\b")
            if line is not None:
                return path, line
    return SKILL_FILE, None


def _line_of(text: str, pattern: str) -> int | None:
    match = re.search(pattern, text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _text(data: bytes) -> str:
    return data[: 1024 * 1024].decode("utf-8", "replace")


def _shown(text: str, line: int | None) -> str:
    if line is None:
        return ""
    lines = text.split("\n", line)
    return excerpt(lines[line - 1]) if len(lines) >= line else ""
