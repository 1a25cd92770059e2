"""bandit's general Python checks, run once over all of a skill's Python files.

bandit (PyCQA, ``bandit.core.manager.BanditManager``) reads each file's AST with its plugin
set; only the tests that say something about a skill are kept (:data:`TESTS`), mapped to our
rule ids, and its severity becomes ours (HIGH → high, MEDIUM → medium, LOW → low), one step
lower when bandit's confidence is LOW. ``# nosec`` comments are ignored: a skill's author
must not be able to silence its own scan. B202 (archive extraction) is read again on our own
AST (:class:`Extractions`): bandit flags any ``extractall`` in a file that imports
``tarfile``, also a ``zipfile`` one and a tar one with a PEP 706 filter other than the
literal ``"data"``, which are safe. B506 (``yaml.load``) is read again too
(:class:`SafeLoaders`): a ``Loader`` that is a class of the file deriving, directly or through
the file's other classes, only from a safe loader (``SafeLoader``, ``BaseLoader`` and their C
forms) is safe, unless the file touches an unsafe constructor or rebinds a safe loader's name.

bandit reads files from disk, so the files are written to a private temporary folder for the
one run (a few milliseconds for a typical skill). Its import (~0.1 s, plugin discovery) is
done once, on first use, with stevedore's deprecation warning silenced; its error log lines
about files it cannot parse are silenced too (our own parse reports them).
"""

from __future__ import annotations

import ast
import logging
import os
import re
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
_SAFE_LOADERS: Final = frozenset(
    f"yaml.{module}{name}" for module in ("", "loader.", "cyaml.")
    for name in ("SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader")
)  # fmt: skip
"""PyYAML's loaders that build only plain data, by their dotted names."""
_UNSAFE_PARTS: Final = re.compile(
    r"Unsafe|Full|^Loader$|^CLoader$|^Constructor$|construct_python|^UnsafeConstructor$"
)
"""Names that reach PyYAML's object-building constructors (a class that mentions one, or a
file that hands one to ``add_constructor``, is not a safe loader)."""

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
    loaders: dict[str, SafeLoaders | None] = {}
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
        if issue.test_id == "B506" and issue.lineno:
            if path not in loaders:
                tree = parse(files[path], path)
                loaders[path] = SafeLoaders(tree) if isinstance(tree, ast.Module) else None
            known = loaders[path]
            if known is not None and known.safe(int(issue.lineno)):
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


class SafeLoaders:
    """One file's ``yaml.load`` calls and the loader classes it defines, indexed once
    (:meth:`safe` is asked per bandit B506 issue).

    Args:
        tree: the parsed file.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.imports: dict[str, str] = {}  # local name → dotted origin
        self.classes: dict[str, list[ast.ClassDef]] = {}
        self.bindings: dict[str, int] = {}  # how often each name is bound
        self.loads: dict[int, list[ast.Call]] = {}
        self.functions: set[str] = set()
        self.added: list[ast.expr | None] = []  # the handlers given to add_constructor
        self.tainted = False
        """The file reaches an unsafe constructor or rebinds a loader: no loader is safe."""
        for node in ast.walk(tree):
            self._index(node)
        self.tainted = self.tainted or any(
            not (isinstance(h, ast.Name) and h.id in self.functions) for h in self.added
        )

    def _index(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.imports[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                self.tainted = self.tainted or bool(_UNSAFE_PARTS.search(alias.name))
        elif isinstance(node, ast.ClassDef):
            self.classes.setdefault(node.name, []).append(node)
            self.bindings[node.name] = self.bindings.get(node.name, 0) + 1
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            self.bindings[node.id] = self.bindings.get(node.id, 0) + 1
        elif isinstance(node, ast.Attribute):
            stored = not isinstance(node.ctx, ast.Load) and "Loader" in node.attr
            self.tainted = self.tainted or stored or bool(_UNSAFE_PARTS.search(node.attr))
        elif isinstance(node, ast.FunctionDef):
            self.functions.add(node.name)
        elif isinstance(node, ast.Call):
            self._call(node)

    def _call(self, call: ast.Call) -> None:
        """A ``load`` kept; a constructor added from anything but the file's own function,
        or an attribute of PyYAML looked up by name, taints the file."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "load":
            self.loads.setdefault(call.lineno, []).append(call)
        elif name in ("add_constructor", "add_multi_constructor"):
            handler = call.args[1] if len(call.args) >= 2 else None
            self.added.append(handler)
        elif name == "getattr" and call.args:
            root = call.args[0]
            while isinstance(root, ast.Attribute):
                root = root.value
            looked_up = isinstance(root, ast.Name) and self.imports.get(root.id, "")
            self.tainted = self.tainted or str(looked_up).startswith("yaml")

    def safe(self, line: int) -> bool:
        """Whether every ``load`` at `line` is handed a loader class of the file that builds
        only plain data."""
        calls = self.loads.get(line)
        return bool(calls) and not self.tainted and all(self._safe_call(c) for c in calls or ())

    def _safe_call(self, call: ast.Call) -> bool:
        loader = next((k.value for k in call.keywords if k.arg == "Loader"), None)
        if loader is None and len(call.args) >= 2:
            loader = call.args[1]
        return isinstance(loader, ast.Name) and self._safe_class(loader.id, budget=20)

    def _safe_class(self, name: str, *, budget: int) -> bool:
        """`name` is one class of the file, bound once, whose every base is a safe loader."""
        defined = self.classes.get(name, [])
        if budget <= 0 or len(defined) != 1 or self.bindings.get(name) != 1:
            return False
        bases = defined[0].bases
        return (
            bool(bases)
            and not defined[0].keywords
            and all(self._safe_base(base, budget=budget - 1) for base in bases)
        )

    def _safe_base(self, base: ast.expr, *, budget: int) -> bool:
        dotted = _dotted(base, self.imports)
        if dotted in _SAFE_LOADERS:
            return True
        return (
            isinstance(base, ast.Name)
            and base.id not in self.imports
            and self._safe_class(base.id, budget=budget)
        )


def _dotted(node: ast.expr, imports: Mapping[str, str]) -> str | None:
    """The dotted name `node` spells, its first name read through the file's imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < 8:
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in imports:
        return None
    return ".".join([imports[node.id], *reversed(parts)])


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
