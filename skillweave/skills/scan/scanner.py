"""Scanning a skill version: :func:`scan_files` (the core), :func:`scan_folder` and
:func:`scan_package`.

Install, upload and agent drafts call :func:`scan_files` with a package's files before a
version may be enabled; what the report decides comes from ``skills.scan.policy``. A scan
never raises: every file is read within limits, and whatever fails becomes a finding.

Limits: at most :data:`MAX_FILES` files and :data:`MAX_FILE_BYTES` of each are scanned (the
rest of a file is reported as ``scan.truncated``, the files past the count as
``scan.skipped``); a ZIP is read in memory, member by member, reading at most
:data:`MAX_FILE_BYTES` + 1 bytes of each and :data:`MAX_PACKAGE_BYTES` in all, and only
stored or deflated members (zipfile bounds neither bzip2 nor lzma output).
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from skillweave.config import Severity
from skillweave.errors import SkillFormatError
from skillweave.skills.files import (
    SKILL_FILE,
    is_skipped_dir,
    is_skipped_file,
    iter_package_files,
)
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.scan._bandit import bandit_version, run_bandit
from skillweave.skills.scan._escalation import (
    escalate_install_scripts,
    escalate_undeclared_network,
)
from skillweave.skills.scan._javascript import (
    JavaScriptModules,
    JavaScriptScan,
    check_package_json,
)
from skillweave.skills.scan._manifest import check_dependencies, check_network, declared_network
from skillweave.skills.scan._prose import Region, hidden_text, remote_pipes, scan_prose
from skillweave.skills.scan._python import PythonPackage, PythonScan, parse
from skillweave.skills.scan._shell import ShellScan, ShellScripts
from skillweave.skills.scan._shipped_targets import check_shipped_targets
from skillweave.skills.scan._text import (
    Collector,
    Language,
    Lines,
    Source,
    blobs,
    long_lines,
    scan_text_rules,
)
from skillweave.skills.scan.report import ScanReport, severity_rank
from skillweave.skills.scan.rules import RULES_VERSION
from skillweave.skills.versioning import package_version

__all__ = [
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_PACKAGE_BYTES",
    "SCANNER",
    "package_files",
    "scan_files",
    "scan_folder",
    "scan_package",
]

MAX_FILES: Final = 1000
MAX_FILE_BYTES: Final = 1024 * 1024
MAX_PACKAGE_BYTES: Final = 64 * 1024 * 1024
SCANNER: Final = f"skillweave-scan/{RULES_VERSION} bandit/{bandit_version()}"
"""The rule set's version, recorded in every report."""

_EXTENSIONS: Final[dict[str, Language]] = {
    **dict.fromkeys((".py", ".pyw"), "python"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts"), "javascript"),
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh", ".command", ".bat", ".cmd"), "shell"),
    **dict.fromkeys((".ps1", ".psm1"), "powershell"),
    **dict.fromkeys((".md", ".markdown", ".mdx", ".txt", ".rst", ".html", ".htm", ".adoc"),
                    "prose"),
}  # fmt: skip
_SHEBANGS: Final[tuple[tuple[str, Language], ...]] = (
    ("python", "python"), ("node", "javascript"), ("deno", "javascript"), ("bun", "javascript"),
    ("pwsh", "powershell"), ("sh", "shell"),
)  # fmt: skip
_EXECUTABLE_MAGIC: Final = (
    b"\x7fELF",
    b"\xcf\xfa\xed\xfe",
    b"\xfe\xed\xfa\xcf",
    b"\xca\xfe\xba\xbe",
    b"MZ",
)
_CHR_CHAIN: Final = re.compile(r"(?:\bchr\(\s*[\w^+*-]{1,20}\s*\)\s*\+\s*){5,}\bchr\(")
_FRONTMATTER_OPEN: Final = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_FRONTMATTER_CLOSE: Final = re.compile(r"\r?\n---[ \t]*(?:\r?\n|\Z)")
_TOP_FIELDS: Final = frozenset({"name", "description"})
_MAX_FRONTMATTER_STRINGS: Final = 500


def scan_files(files: Mapping[str, bytes], *, version: str) -> ScanReport:
    """Scan a skill package's files.

    Args:
        files: relative POSIX path → bytes, ``SKILL.md`` at the root.
        version: the package's digest (``skills.versioning``), recorded in the report.

    Returns:
        The report; it never raises, whatever the files hold.
    """
    out = Collector()
    try:
        _Scan(files, out).run()
    except Exception as exc:
        out.add("scan.error", SKILL_FILE, None, f"the scan stopped: {_error(exc)}")
    return _report(out, version)


def scan_folder(path: Path) -> ScanReport:
    """Scan the skill in folder `path` (its own files: no hidden files, caches or child
    skills, as ``skills.files`` decides), version computed from its files."""
    files: dict[str, bytes] = {}
    entries: list[tuple[str, str]] = []
    out = Collector()
    try:
        for relative, entry in iter_package_files(path):
            entries.append((relative, entry.path))
            files[relative] = _read_capped(entry.path)
        version = package_version(entries)
    except Exception as exc:
        out.add("scan.skipped", SKILL_FILE, None, f"the folder cannot be read: {_error(exc)}")
        return _report(out, "")
    return scan_files(files, version=version)


def scan_package(data: bytes, version: str) -> ScanReport:
    """Scan the skill in a ZIP package, read in memory (one top folder is stripped, as
    packages are built; hidden files, caches and child skills are left out as in
    :func:`scan_folder`)."""
    out = Collector()
    files: dict[str, bytes] = {}
    try:
        files = _read_package(data, out)
    except Exception as exc:
        out.add("scan.skipped", "package.zip", None, f"the package cannot be read: {_error(exc)}")
    report = scan_files(files, version=version)
    return _report(Collector.merged(out, report.findings), version)


def package_files(data: bytes) -> dict[str, bytes]:
    """The files of a ZIP package as :func:`scan_package` reads them (the same caps and
    exclusions; entries it would not scan left out), for the model review
    (``skills.review``); empty when the package cannot be read. Never raises."""
    try:
        return _read_package(data, Collector())
    except Exception:
        return {}


# --- the scan of one package -----------------------------------------------------------------


class _Scan:
    def __init__(self, files: Mapping[str, bytes], out: Collector) -> None:
        self.files = files
        self.out = out
        self.python: dict[str, bytes] = {}
        self.texts: dict[str, str] = {}
        self.frontmatter: dict[str, Any] | None = None
        self.skill_text = ""
        self.package = PythonPackage({})
        self.modules = JavaScriptModules(files)  # what one script imports from another
        self.scripts = ShellScripts(files)  # what one shell script sources from another
        self.received: dict[str, list[tuple[int, str, str, str]]] = {}

    def run(self) -> None:
        paths = sorted(self.files)
        if len(paths) > MAX_FILES:
            self.out.add("scan.skipped", SKILL_FILE, None,
                         f"{len(paths) - MAX_FILES} files past the first {MAX_FILES} were not "
                         "scanned")  # fmt: skip
            paths = paths[:MAX_FILES]
        frontmatter_ok = self._skill_file()
        try:  # every Python module analysed first: their summaries serve one another
            self.package = PythonPackage({
                p: self.files[p][:MAX_FILE_BYTES]
                for p in paths if _language(p, self.files[p]) == "python"
            })  # fmt: skip
        except Exception as exc:
            self.out.add("scan.error", SKILL_FILE, None, f"analysing failed: {_error(exc)}")
        for path in paths:
            try:
                self._file(path)
            except Exception as exc:
                self.out.add("scan.error", path, None, f"analysing failed: {_error(exc)}")
        try:
            run_bandit(self.python, self.out)
        except Exception as exc:
            self.out.add("scan.error", SKILL_FILE, None, f"bandit failed: {_error(exc)}")
        self._exfiltration()
        declared = declared_network(self.frontmatter, self.skill_text, self.out)
        check_network(declared, self.out.facts, self.texts, self.skill_text, self.out)
        escalate_undeclared_network(self.out, self.received, declared or ())
        escalate_install_scripts(self.out)
        own = {p: self.files[p] for p in paths}
        check_dependencies(own, frontmatter_ok=frontmatter_ok, out=self.out)
        check_shipped_targets(own, self.out)

    def _skill_file(self) -> bool:
        data = self.files.get(SKILL_FILE)
        if data is None:
            self.out.add("skill.frontmatter", SKILL_FILE, None,
                         "the package has no SKILL.md at its root")  # fmt: skip
            return False
        self.skill_text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
        try:
            self.frontmatter = parse_frontmatter(self.skill_text).data
        except SkillFormatError as exc:
            self.out.add("skill.frontmatter", SKILL_FILE, None,
                         f"the frontmatter cannot be read: {exc.reason}")  # fmt: skip
            return False
        return True

    def _file(self, path: str) -> None:
        data = self.files[path]
        if len(data) > MAX_FILE_BYTES:
            message = f"{len(data):,} bytes; only the first {MAX_FILE_BYTES:,} were scanned"
            self.out.add("scan.truncated", path, None, message)
            data = data[:MAX_FILE_BYTES]
        language = _language(path, data)
        in_scripts = path.startswith("scripts/") or "/scripts/" in path
        if language == "binary":
            if data.startswith(_EXECUTABLE_MAGIC) and (in_scripts or not data.startswith(b"MZ")):
                self.out.add("script.binary", path, None,
                             "a native executable: what it does cannot be read")  # fmt: skip
            return
        text = data.decode("utf-8", "replace")
        source = Source(path, text, language, in_scripts, Lines(text))
        catalog = self._body_offset() if path == SKILL_FILE else 0
        hidden_text(source, self.out, frontmatter_end=catalog)
        if posixpath.basename(path) == "package.json":
            check_package_json(source, self.out)
        if language in {"prose", "data"}:
            self._prose(source)
            return
        self.texts[path] = text
        self.out.facts_of(path)
        scan_prose(source, [Region(text, 0, None, "medium", path)], self.out)
        if language == "python":
            scan_text_rules(source, self.out)
            self._python(source, data)
            return
        analyser = (
            JavaScriptScan(source, self.out, self.modules)
            if language == "javascript"
            else ShellScan(source, self.out, self.scripts)
        )
        scan_text_rules(source, self.out, analyser.code)  # comments blanked, offsets kept
        analyser.run()

    def _python(self, source: Source, data: bytes) -> None:
        analysed = self.package.analysis(source.path)
        tree = analysed if analysed is not None else parse(data, source.path)
        if isinstance(tree, str):
            self.out.add("script.syntax-error", source.path, _syntax_line(tree),
                         f"does not parse as Python ({tree}); only the text rules ran",
                         severity="medium" if source.in_scripts else "low")  # fmt: skip
            long_lines(source, self.out, dynamic=True)
        else:
            scan = PythonScan(source, tree, self.out, self.package)
            scan.run()
            self.received[source.path] = scan.received
            self.python[source.path] = data
            long_lines(source, self.out, dynamic=True)
        for match in _CHR_CHAIN.finditer(source.text):
            self.out.at(source, "obfuscation.packed-code", match.start(),
                        "builds a string from chr() calls")  # fmt: skip

    def _prose(self, source: Source) -> None:
        blobs(source, self.out, script=False)
        remote_pipes(source, self.out)
        if source.path != SKILL_FILE:
            scan_prose(source, [Region(source.text, 0, None, "high", source.path)], self.out)
            return
        regions = [Region(source.text[self._body_offset() :], self._body_offset(), None,
                          "high", "SKILL.md")]  # fmt: skip
        for key, value in _strings(self.frontmatter or {}):
            top = key.split(".", 1)[0]
            severity: Severity = "critical" if top in _TOP_FIELDS else "high"
            line = _key_line(self.skill_text, key)
            regions.append(Region(value, None, line, severity, f"the frontmatter's {key}"))
        scan_prose(source, regions, self.out)

    def _body_offset(self) -> int:
        if self.frontmatter is None:
            return 0
        opening = _FRONTMATTER_OPEN.match(self.skill_text)
        if opening is None:
            return 0
        closing = _FRONTMATTER_CLOSE.search(self.skill_text, opening.end() - 1)
        return closing.end() if closing else 0

    def _exfiltration(self) -> None:
        """The environment or a credential, read by a script that also uses the network."""
        for path in sorted(self.out.facts):
            facts = self.out.facts[path]
            if facts.network:
                network = facts.network[0][1]
                for line, text in facts.env_dumps[:1]:
                    self.out.add("secrets.exfiltration", path, line,
                                 f"the whole environment is serialised in a script that "
                                 f"{network}", text)  # fmt: skip
                for line, what, text in facts.credentials[:1]:
                    self.out.add("secrets.exfiltration", path, line,
                                 f"{what} read in a script that {network}", text)  # fmt: skip
            else:
                for line, text in facts.env_dumps:
                    message = "the whole environment is serialised or written out"
                    self.out.add("secrets.env-dump", path, line, message, text)


# --- helpers -----------------------------------------------------------------------------------


def _language(path: str, data: bytes) -> Language:
    if b"\x00" in data[:8192]:
        return "binary"
    extension = posixpath.splitext(path)[1].lower()
    if extension in _EXTENSIONS:
        return _EXTENSIONS[extension]
    if data.startswith(b"#!"):
        first = data[:200].split(b"\n", 1)[0].decode("latin-1").lower()
        for word, language in _SHEBANGS:
            if word in first:
                return language
    return "data"


def _strings(data: Any) -> list[tuple[str, str]]:
    """Every string value in a frontmatter mapping, with its dotted key (bounded)."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack and len(found) < _MAX_FRONTMATTER_STRINGS:
        key, value, depth = stack.pop()
        if isinstance(value, str):
            found.append((key or "value", value))
        elif depth < 8 and isinstance(value, Mapping):
            for name, inner in value.items():
                stack.append((f"{key}.{name}" if key else str(name), inner, depth + 1))
        elif depth < 8 and isinstance(value, list | tuple):
            for inner in value[:100]:
                stack.append((key, inner, depth + 1))
    return sorted(found)


def _key_line(text: str, key: str) -> int | None:
    last = key.rsplit(".", 1)[-1]
    match = re.search(rf"^[ \t-]*['\"]?{re.escape(last)}['\"]?[ \t]*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _syntax_line(reason: str) -> int | None:
    match = re.match(r"line (\d+):", reason)
    return int(match.group(1)) if match else None


def _read_capped(path: str) -> bytes:
    """At most :data:`MAX_FILE_BYTES` + 1 bytes of a file (one more tells it is longer)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks: list[bytes] = []
        left = MAX_FILE_BYTES + 1
        while left and (chunk := os.read(fd, min(left, 256 * 1024))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_package(data: bytes, out: Collector) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        tops = {i.filename.split("/", 1)[0] for i in infos}
        strip = len(tops) == 1 and all("/" in i.filename for i in infos)
        names = [i.filename.split("/", 1)[1] if strip else i.filename for i in infos]
        skill_folders = {posixpath.dirname(n) for n in names if posixpath.basename(n) == SKILL_FILE}
        for info, name in zip(infos, names, strict=True):
            problem = _member_problem(info, name)
            if problem is not None:
                out.add("scan.skipped", "package.zip", None,
                        f"entry {info.filename[:200]!r} not scanned: {problem}")  # fmt: skip
                continue
            parts = name.split("/")
            if any(is_skipped_dir(p) for p in parts[:-1]) or is_skipped_file(parts[-1]):
                continue
            if any("/".join(parts[:i]) in skill_folders for i in range(1, len(parts))):
                continue  # a child skill: a package of its own
            if len(files) >= MAX_FILES + 1 or total >= MAX_PACKAGE_BYTES:
                out.add("scan.skipped", "package.zip", None,
                        f"the package is over {MAX_FILES} files or {MAX_PACKAGE_BYTES:,} bytes; "
                        "the rest was not scanned")  # fmt: skip
                break
            with archive.open(info) as member:
                content = member.read(MAX_FILE_BYTES + 1)
            total += len(content)
            files[name] = content
    return files


def _member_problem(info: zipfile.ZipInfo, name: str) -> str | None:
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return "compressed with a method whose output cannot be bounded"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    if not name or name.startswith("/") or "\\" in name or ".." in name.split("/") or ":" in name:
        return "an unsafe path"
    return None


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}".replace("\n", " ")


def _report(out: Collector, version: str) -> ScanReport:
    # Code run from decoded data is one finding, not also a dynamic-code one on its line.
    decoded = {(f.path, f.line) for f in out.findings if f.rule == "exec.decoded-payload"}
    findings = sorted(
        (
            f
            for f in out.findings
            if not (f.rule == "exec.dynamic-code" and (f.path, f.line) in decoded)
        ),
        key=lambda f: (-severity_rank(f.severity), f.path, f.line or 0, f.rule, f.message),
    )
    return ScanReport(scanner=SCANNER, version=version, findings=tuple(findings))
