"""bandit's general Python checks, run once over all of a skill's Python files.

bandit (PyCQA, ``bandit.core.manager.BanditManager``) reads each file's AST with its plugin
set; only the tests that say something about a skill are kept (:data:`TESTS`), mapped to our
rule ids, and its severity becomes ours (HIGH → high, MEDIUM → medium, LOW → low), one step
lower when bandit's confidence is LOW. ``# nosec`` comments are ignored: a skill's author
must not be able to silence its own scan. B202 (archive extraction) is read again on our own
AST (:class:`Extractions`): bandit flags any ``extractall`` in a file that imports
``tarfile``, also a ``zipfile`` one and a tar one with a PEP 706 filter other than the
literal ``"data"``, which are safe.

bandit reads files from disk, so the files are written to a private temporary folder for the
one run (a few milliseconds for a typical skill). Its import (~0.1 s, plugin discovery) is
done once, on first use, with stevedore's deprecation warning silenced; its error log lines
about files it cannot parse are silenced too (our own parse reports them).
"""

from __future__ import annotations

import ast
import logging
import os
import tempfile
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from skillweave.config import Severity
from skillweave.skills.imports import PARSE_LOCK
from skillweave.skills.scan._python import parse
from skillweave.skills.scan._text import Collector, excerpt

TESTS: Final[dict[str, tuple[str, str]]] = {
    # test id: (our rule, why it matters for a skill)
    "B602": ("exec.shell", "subprocess with shell=True"),
    "B604": ("exec.shell", "any call with shell=True"),
    "B605": ("exec.shell", "os.system, os.popen, popen2 and friends start a shell"),
    "B609": ("exec.shell", "wildcards handed to a shell command"),
    "B301": ("exec.deserialization", "pickle runs code while it loads"),
    "B506": ("exec.deserialization", "yaml.load without a safe loader builds objects"),
    "B614": ("exec.deserialization", "torch.load unpickles"),
    "B615": ("exec.deserialization", "Hugging Face downloads without a pinned revision"),
    "B202": ("fs.unsafe-extract", "tarfile.extractall writes where members say"),
    "B323": ("network.insecure-tls", "an unverified SSL context"),
    "B501": ("network.insecure-tls", "requests with verify=False"),
    "B502": ("network.insecure-tls", "SSL with a broken protocol version"),
    "B503": ("network.insecure-tls", "SSL defaults with a broken protocol version"),
    "B504": ("network.insecure-tls", "SSL without a protocol version"),
    "B507": ("network.insecure-tls", "SSH without host key verification"),
}
"""Left out on purpose: eval/exec (B102, B307) and marshal (B302), which our AST walk reads
with their data flow (decoded or fetched code is critical); bidi characters (B613), which
the text rules find in every language; and the tests about code quality or web apps rather
than what a skill does to its host (asserts, weak hashes and random, bare excepts, SQL, XML
parsers, Flask/Django/Jinja, hard-coded passwords and /tmp, subprocess without a shell,
imports of subprocess/pickle, requests without a timeout)."""

_SAFE_FILTERS: Final = frozenset({"data", "tar", "data_filter", "tar_filter"})
"""PEP 706's extraction filters that refuse absolute paths, ``..`` and links out."""
_EXTRACTS: Final = frozenset({"extractall", "extract"})

_SEVERITIES: Final[dict[str, Severity]] = {"HIGH": "high", "MEDIUM": "medium", "LOW": "low"}
_LOWER: Final[dict[Severity, Severity]] = {
    "critical": "high", "high": "medium", "medium": "low", "low": "low"
}  # fmt: skip


@cache
def _bandit() -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stevedore: verify_requirements is deprecated
        # bandit's extension manager tries every output formatter it knows; one whose extra
        # is not installed (sarif) is logged as an ERROR, and we use none of them.
        logging.getLogger("stevedore.extension").setLevel(logging.CRITICAL)
        from bandit.core import config, manager

        logging.getLogger("bandit").setLevel(logging.CRITICAL)
        return config.BanditConfig(), manager


def bandit_loaded() -> None:
    """Import bandit now (the first scan of Python files otherwise does)."""
    _bandit()


def bandit_version() -> str:
    """bandit's version, read from its metadata (no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bandit")
    except PackageNotFoundError:  # pragma: no cover - it is a locked dependency
        return "absent"


def run_bandit(files: Mapping[str, bytes], out: Collector) -> None:
    """bandit's kept tests over `files` (relative path → Python source), findings into `out`."""
    if not files:
        return
    config, manager = _bandit()
    with tempfile.TemporaryDirectory(prefix="skillweave-scan-") as folder:
        by_disk: dict[str, str] = {}
        for index, (path, data) in enumerate(sorted(files.items())):
            disk = os.path.join(folder, f"{index}.py")  # no package path reaches the disk
            with open(disk, "wb") as handle:
                handle.write(data)
            by_disk[disk] = path
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runner = manager.BanditManager(
                config, "file", ignore_nosec=True, quiet=True, profile={"include": set(TESTS)}
            )
            runner.discover_files(sorted(by_disk))
            runner.run_tests()
            issues = runner.get_issue_list()
    extractions: dict[str, Extractions | None] = {}
    for issue in issues:
        mapped = TESTS.get(issue.test_id)
        path = by_disk.get(os.path.normpath(issue.fname)) or by_disk.get(issue.fname)
        if mapped is None or path is None:
            continue
        if issue.test_id == "B202" and issue.lineno:
            if path not in extractions:
                tree = parse(files[path], path)
                extractions[path] = Extractions(tree) if isinstance(tree, ast.Module) else None
            found = extractions[path]
            if found is not None and found.safe(int(issue.lineno)):
                continue
        severity = _SEVERITIES.get(str(issue.severity), "low")
        if str(issue.confidence) == "LOW":
            severity = _LOWER[severity]
        line = int(issue.lineno) if issue.lineno else None
        text = files[path].decode("utf-8", "replace").split("\n")
        shown = text[line - 1] if line and line <= len(text) else ""
        message = f"{issue.text.rstrip('.')} (bandit {issue.test_id})".replace("\n", " ")
        out.add(mapped[0], path, line, message, excerpt(shown), severity=severity)


class Extractions:
    """One file's archive extractions, indexed once (:meth:`safe` is asked per bandit B202
    issue, so a file full of them stays linear).

    Args:
        tree: the parsed file.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.calls: dict[int, list[ast.Call]] = {}
        self.bound: dict[str, list[ast.expr]] = {}
        self.filtered = False
        """``TarFile.extraction_filter`` is set somewhere: every extraction is filtered."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in _EXTRACTS:
                    self.calls.setdefault(node.lineno, []).append(node)
            elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                self.bound.setdefault(node.optional_vars.id, []).append(node.context_expr)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bound.setdefault(target.id, []).append(node.value)
            elif isinstance(node, ast.Attribute) and node.attr == "extraction_filter":
                self.filtered = self.filtered or isinstance(node.ctx, ast.Store)

    def safe(self, line: int) -> bool:
        """Whether every extraction at `line` is one bandit's B202 misjudges: a tar
        extraction with a PEP 706 filter (``filter="data"``/``"tar"``,
        ``tarfile.data_filter``, or ``TarFile.extraction_filter`` set for the module), or a
        ``zipfile`` extraction (which drops absolute paths and ``..`` from member names
        itself and makes no links)."""
        calls = self.calls.get(line)
        return bool(calls) and all(
            self.filtered or _safe_filter(call) or self._zip(call.func.value)  # type: ignore[attr-defined]
            for call in calls or ()
        )

    def _zip(self, receiver: ast.expr) -> bool:
        """`receiver` is a ``ZipFile``: made there, or a name only ever bound to one."""
        if isinstance(receiver, ast.Call):
            return _zip_call(receiver)
        made = self.bound.get(receiver.id, []) if isinstance(receiver, ast.Name) else []
        return bool(made) and all(isinstance(m, ast.Call) and _zip_call(m) for m in made)


def _safe_filter(call: ast.Call) -> bool:
    value = next((k.value for k in call.keywords if k.arg == "filter"), None)
    if isinstance(value, ast.Constant):
        return value.value in _SAFE_FILTERS
    if isinstance(value, ast.Attribute):
        return value.attr in _SAFE_FILTERS
    return isinstance(value, ast.Name) and value.id in _SAFE_FILTERS


def _zip_call(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("ZipFile", "PyZipFile")
