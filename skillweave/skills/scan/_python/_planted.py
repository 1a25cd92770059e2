"""What a write leaves behind that acts later on its own: :func:`package_config`,
:func:`startup_hook`, :func:`planted` and :func:`git_config`.

Two classes of file change what happens after the skill's run, wherever they sit:

- a **package-index configuration** (``pip.conf``/``pip.ini``, ``.pypirc``, ``.npmrc``,
  ``.yarnrc``, ``.condarc``, ``.pydistutils.cfg``, uv's and poetry's configuration, cargo's
  and gem's): written outside the workspace, it redirects every later install to the index
  it names (dependency confusion);
- **code planted where an interpreter, a shell or a scheduler runs it** (a ``.pth`` file,
  ``sitecustomize``/``usercustomize``, a ``PYTHONSTARTUP`` file, shell rc files, crontabs,
  systemd/launchd units, git hooks): what it does is judged as code. A ``.pth`` runs its
  lines that start with ``import``; Python hooks run whole; the rest is read as shell.

A ``git config --global`` (or ``--system``) of a key that makes git run a program
(``core.hooksPath``, ``core.fsmonitor``, ``core.sshCommand``, ``credential.helper``...) or
fetch from elsewhere (``url.<base>.insteadOf``) is the same kind of change, made through a
command: :func:`git_config`, read by ``_processes`` for every command a module runs.

Called by ``_files`` for every write whose target and content it could approximate. The
start-up locations themselves (``.pth``, rc files, cron...) are ``_text.write_target``'s.
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import Final

from skillweave.skills.scan._text import REMOTE_PIPES

__all__ = ["git_config", "planted", "startup_hook"]

_GIT_RUNS: Final = frozenset(
    {"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.askpass", "core.pager",
     "core.editor", "sequence.editor", "diff.external", "credential.helper", "include.path",
     "init.templatedir", "gpg.program"}
)  # fmt: skip
"""git configuration keys that make every later git command run a program (or read more
configuration) from where the value says."""
_GIT_SCOPES: Final = frozenset({"--global", "--system"})

_MAX_CODE: Final = 4096
_PYTHON_HOOK: Final = re.compile(
    r"(?:^|/)(?:site|user)customize\.py$|(?:^|/)\.?python(?:rc|startup)(?:\.py)?$", re.I
)
_SHELL_RUNS: Final = re.compile(
    r"\b(?:curl|wget|nc|ncat|socat|python[0-9.]*\s+-c|perl\s+-e|eval)\b|base64\s+(?:-d|--decode)"
    r"|/dev/tcp/",
    re.I,
)
_EXEC: Final = frozenset({"exec", "eval", "compile", "__import__", "execfile"})
_RUNS: Final = frozenset(
    {"system", "popen", "Popen", "run", "call", "check_call", "check_output", "spawnv",
     "execv", "execvp", "startfile"}
)  # fmt: skip
_FETCH: Final = frozenset({"urlopen", "urlretrieve", "recv", "create_connection", "b64decode",
                           "b85decode", "b32decode", "unhexlify", "fromhex", "decompress",
                           "loads"})  # fmt: skip
_HTTP_CLIENTS: Final = frozenset({"requests", "httpx", "urllib3", "session", "http"})


def startup_hook(path: str) -> bool:
    """Whether `path` names a file the Python interpreter runs at start-up (``.pth``,
    ``sitecustomize.py``, ``usercustomize.py``, a ``PYTHONSTARTUP`` file)."""
    return path.lower().endswith(".pth") or bool(_PYTHON_HOOK.search(path))


def planted(path: str, content: str) -> str | None:
    """What `content`, written to `path`, does when it runs later ("fetches and runs code
    (urlopen, exec)"); None when it neither runs nor fetches anything."""
    content = content[:_MAX_CODE]
    if path.lower().endswith(".pth"):
        lines = [line for line in content.splitlines() if line.startswith(("import ", "import\t"))]
        return _python("\n".join(lines)) if lines else None
    if startup_hook(path) or posixpath.splitext(path)[1].lower() == ".py":
        return _python(content)
    if any(p.search(content) for p in REMOTE_PIPES):
        return "downloads a script and runs it"
    found = _SHELL_RUNS.search(content)
    return f"runs {found.group(0)!r}" if found else None


def _python(code: str) -> str | None:
    """The calls in Python `code` that run code or processes, or fetch or decode data."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    runs: list[str] = []
    fetches: list[str] = []
    for count, node in enumerate(ast.walk(tree)):
        if count > 2000:
            break
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _EXEC or name in _RUNS:
            runs.append(name)
        elif name in _FETCH or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id.lower() in _HTTP_CLIENTS
        ):
            fetches.append(name)
    if not runs and not fetches:
        return None
    what = [f"fetches or decodes ({', '.join(sorted(set(fetches)))})"] if fetches else []
    what += [f"runs ({', '.join(sorted(set(runs)))})"] if runs else []
    return " and ".join(what)


def git_config(words: list[str]) -> str | None:
    """The key a ``git config --global``/``--system`` command (its `words`) sets that acts in
    every later git command (hooks, helpers, pagers, URL rewrites); None for any other."""
    lowered = [w.lower() for w in words[:16]]
    if not lowered or posixpath.basename(lowered[0]) not in ("git", "git.exe"):
        return None
    if "config" not in lowered[:5] or not _GIT_SCOPES & set(lowered):
        return None
    for word in lowered:
        if word in _GIT_RUNS or (word.startswith("url.") and word.endswith("insteadof")):
            return word
    return None
