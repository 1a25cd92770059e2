"""The packages a skill's scripts import without declaring them: :func:`infer_imports`.

Skills written for agents whose image has the common packages preinstalled import ``pypdf`` or
``openpyxl`` and declare nothing. Inference reads what the scripts import and names the
distributions to install, so that such a skill runs unchanged (the environment builder installs
inferred packages on a best-effort basis: one that the index lacks is skipped and logged, never
fatal; ``sandbox.environments.infer_imports`` turns inference off).

Python (``.py`` files anywhere in the package): the ``import`` and ``from … import`` statements
found by :mod:`ast`. Left out: the standard library (``sys.stdlib_module_names``), relative
imports, modules the package holds itself (a ``name.py`` or ``name/`` folder anywhere in it),
imports inside a ``try`` that catches ``ImportError`` (an optional dependency) and under
``if TYPE_CHECKING``, and files that do not parse. An import name maps to its distribution by
:data:`PYTHON_DISTRIBUTIONS` where the two differ (``PIL`` → ``pillow``), else is its own name.

Node (``.js``, ``.mjs``, ``.cjs``): ``require('x')``, ``import … from 'x'``, ``import 'x'``,
``import('x')`` and ``export … from 'x'``, read with regular expressions (no JavaScript parser
is a Python library worth its weight here). Left out: relative and absolute paths, ``node:``
and the built-in modules (:data:`NODE_BUILTINS`); ``lodash/fp`` is ``lodash``, ``@scope/pkg/x``
is ``@scope/pkg``.

Called by dependency discovery (``skillweave.skills.dependencies``); pure (bytes in, names out).
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "NODE_BUILTINS",
    "PYTHON_DISTRIBUTIONS",
    "InferredImports",
    "infer_imports",
]

PYTHON_DISTRIBUTIONS: Final[dict[str, str]] = {
    "PIL": "pillow",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "yaml": "pyyaml",
    "cv2": "opencv-python-headless",
    "fitz": "pymupdf",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "pyjwt",
    "magic": "python-magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "Crypto": "pycryptodome",
    "Cryptodome": "pycryptodomex",
    "OpenSSL": "pyopenssl",
    "nacl": "pynacl",
    "attr": "attrs",
    "zmq": "pyzmq",
    "psycopg2": "psycopg2-binary",
    "MySQLdb": "mysqlclient",
    "pdfminer": "pdfminer.six",
    "git": "gitpython",
    "github": "pygithub",
    "slugify": "python-slugify",
    "multipart": "python-multipart",
    "socks": "pysocks",
    "kafka": "kafka-python",
    "jose": "python-jose",
    "odf": "odfpy",
    "Levenshtein": "levenshtein",
    "speech_recognition": "SpeechRecognition",
    "pkg_resources": "setuptools",
    "google.protobuf": "protobuf",
    "googleapiclient": "google-api-python-client",
    "markdown_it": "markdown-it-py",
    "sentence_transformers": "sentence-transformers",
    "tesserocr": "tesserocr",
    "pytesseract": "pytesseract",
    "win32api": "pywin32",
    "wx": "wxpython",
    "gi": "pygobject",
}
"""Import names whose distribution is called something else; the key may be a dotted prefix
(``google.protobuf``) for namespace packages."""

NODE_BUILTINS: Final = frozenset(
    {
        "assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants",
        "crypto", "dgram", "diagnostics_channel", "dns", "domain", "events", "fs", "http",
        "http2", "https", "inspector", "module", "net", "os", "path", "perf_hooks", "process",
        "punycode", "querystring", "readline", "repl", "stream", "string_decoder", "sys",
        "test", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm", "wasi",
        "worker_threads", "zlib",
    }
)  # fmt: skip
"""Node's built-in modules (``require('module').builtinModules``, without their subpaths)."""

_NAMESPACE_PACKAGES: Final = frozenset({"google", "azure"})
"""Top-level names that are namespaces of many distributions: never inferred on their own."""
_NODE_SUFFIXES: Final = (".js", ".mjs", ".cjs")
_NODE_SPECIFIER: Final = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bimport\s+|\bfrom\s+)(['"])([^'"\n]{1,214})\1"""
)
_NPM_NAME: Final = re.compile(r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*")
_IMPORT_ERRORS: Final = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})
_MAX_FILE_BYTES: Final = 1024 * 1024
PARSE_LOCK: Final = threading.Lock()
"""One Python parse at a time in the whole process: CPython 3.11 keeps the AST constructor's
recursion depth in shared state and concurrent parses fail spuriously. Every parser of skill
code holds it: this module's, and the scanner's (``skills.scan``, bandit's run included)."""


@dataclass(frozen=True, slots=True)
class InferredImports:
    """What a skill's scripts import and do not hold: distribution → the first file that
    imports it, per language, in file order."""

    python: Mapping[str, str]
    node: Mapping[str, str]


def infer_imports(files: Mapping[str, bytes]) -> InferredImports:
    """The third-party packages the scripts in `files` (relative POSIX path → bytes) import.

    Returns:
        Python distribution names and Node package names, each with the file that imports it.
    """
    local = _local_modules(files)
    python: dict[str, str] = {}
    node: dict[str, str] = {}
    for path in sorted(files):
        data = files[path]
        if len(data) > _MAX_FILE_BYTES:
            continue
        if path.endswith(".py"):
            for name in _python_imports(data):
                top = name.split(".", 1)[0]
                if top in local or top in sys.stdlib_module_names:
                    continue
                distribution = _distribution(name)
                if distribution is not None:
                    python.setdefault(distribution, path)
        elif path.endswith(_NODE_SUFFIXES):
            for name in _node_imports(data):
                node.setdefault(name, path)
    return InferredImports(python=python, node=node)


def _local_modules(files: Mapping[str, bytes]) -> set[str]:
    """Names a script's import could find in the package itself: every ``x.py`` and every
    folder, wherever it is (a script's own folder is first on its ``sys.path``)."""
    names: set[str] = set()
    for path in files:
        parts = path.split("/")
        names.update(parts[:-1])
        stem, extension = posixpath.splitext(parts[-1])
        if extension in (".py", ".so", ".pyd"):
            names.add(stem.split(".", 1)[0])
    return names


def _distribution(name: str) -> str | None:
    """The distribution an import name comes from; None for a bare namespace package."""
    for prefix in (name, *_prefixes(name)):
        if prefix in PYTHON_DISTRIBUTIONS:
            return PYTHON_DISTRIBUTIONS[prefix]
    top = name.split(".", 1)[0]
    if top in _NAMESPACE_PACKAGES:
        return None
    return top.replace("_", "-").lower() if top.isidentifier() else None


def _prefixes(name: str) -> Iterator[str]:
    parts = name.split(".")
    for end in range(len(parts) - 1, 0, -1):
        yield ".".join(parts[:end])


def _python_imports(data: bytes) -> list[str]:
    """Absolute module names a Python file imports unconditionally, in order."""
    try:
        # One parse at a time: CPython 3.11's AST constructor keeps its recursion depth in
        # shared state, and parses in several threads at once fail ("recursion depth
        # mismatch"): a manager infers for concurrent first runs in threads.
        with PARSE_LOCK:
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return []  # not Python this interpreter reads (or built to exhaust the parser)
    found: list[str] = []
    optional: set[int] = set()  # ids of nodes inside an optional-import guard
    for node in ast.walk(tree):
        if _guards_imports(node):
            body = node.body  # type: ignore[attr-defined]
            optional.update(id(inner) for stmt in body for inner in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def _guards_imports(node: ast.AST) -> bool:
    """A ``try`` that catches ImportError, or an ``if TYPE_CHECKING``: its body's imports
    are optional."""
    if isinstance(node, ast.Try):
        return any(_catches_import_error(handler) for handler in node.handlers)
    return isinstance(node, ast.If) and _is_type_checking(node.test)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True  # a bare except
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id in _IMPORT_ERRORS for kind in kinds)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _node_imports(data: bytes) -> list[str]:
    """Package names a Node file requires or imports, in order."""
    text = data.decode("utf-8", "replace")
    found: list[str] = []
    for match in _NODE_SPECIFIER.finditer(text):
        specifier = match.group(2).strip()
        if specifier.startswith((".", "/", "node:")) or ":" in specifier:
            continue
        parts = specifier.split("/")
        name = "/".join(parts[:2]) if specifier.startswith("@") else parts[0]
        if name in NODE_BUILTINS or not _NPM_NAME.fullmatch(name):
            continue
        found.append(name)
    return found
