"""What a build's log says: the package pip or npm blamed, and the part of the log kept.

:func:`diagnose` reads a failed install's output for the culprit package and the line that
says why (the build sandbox, ``_sandbox``, calls it when pip or npm exits non-zero);
:func:`read_log` is what the builder (``_builder``) stores of a build's log: all of it, or its
head and tail when it is over :data:`MAX_LOG_BYTES`. Neither pip nor npm reports its culprit in
a form to parse, so this reads their human output by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, Literal
from urllib.parse import unquote

__all__ = ["MAX_LOG_BYTES", "Tool", "diagnose", "read_log"]

Tool = Literal["pip", "npm"]
"""The installers a build runs."""

MAX_LOG_BYTES: Final = 4 * 1024 * 1024
"""Kept of a build log: the head and the tail."""
_LOG_HEAD_BYTES: Final = 256 * 1024
_MAX_DETAIL_CHARS: Final = 400

_PACKAGE_NAME: Final = re.compile(r"@?[A-Za-z0-9][A-Za-z0-9._~-]*(?:/[A-Za-z0-9._~-]+)?")
_EXCEPTION_LINE: Final = re.compile(
    r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.+)$", re.MULTILINE
)
# What a build backend said, indented inside pip's report of the subprocess.
_BACKEND_ERROR: Final = re.compile(r"^\s+error: (?!subprocess-exited-with-error).+$", re.MULTILINE)
_PIP_CULPRITS: Final = (
    re.compile(r"No matching distribution found for (\S+)"),
    re.compile(r"Could not find a version that satisfies the requirement (\S+)"),
    re.compile(r"Encountered error while generating package metadata\.\s*\n\s*╰─> (\S+)"),
    re.compile(r"Failed to build installable wheels[^\n]*?(?:\(|\n\s*╰─>\s*)(\S+?)\)?\s*$", re.M),
    re.compile(r"Failed building wheel for (\S+)"),
    re.compile(r"Could not build wheels for (\S+?),"),
    re.compile(r"Cannot install (\S+?)(?:,| and | because)"),
)
_NPM_CULPRITS: Final = (
    re.compile(r"No matching version found for (\S+?)\.?\s*$", re.MULTILINE),
    re.compile(r"404\s+'(\S+?)' is not in (?:this|the npm) registry"),
    re.compile(r"The requested resource '(\S+?)' could not be found"),
    re.compile(r"E404\b.*?GET \S*/(\S+?)\s", re.DOTALL),
)


def diagnose(tool: Tool, output: str) -> tuple[str | None, str]:
    """The package pip or npm blamed (None when it named none) and the line that says why.

    The line, best first: the last exception of build code (``OSError: [Errno 30]
    Read-only file system: …``), an ``error:`` a build backend printed, the first of the
    tool's own error lines, the last line.
    """
    patterns = _PIP_CULPRITS if tool == "pip" else _NPM_CULPRITS
    package = None
    for pattern in patterns:
        match = pattern.search(output)
        if match is not None:
            found = _PACKAGE_NAME.match(unquote(match.group(1)).strip("'\"`"))
            if found is not None:
                package = found.group(0)
                break
    candidates = [m.group(0).strip() for m in _EXCEPTION_LINE.finditer(output)][-1:]
    if tool == "pip":
        candidates += [m.group(0).strip() for m in _BACKEND_ERROR.finditer(output)][-1:]
        candidates += [line for line in output.splitlines() if line.startswith("ERROR:")][:1]
    else:
        said = (
            line.removeprefix("npm error").removeprefix("npm ERR!").strip()
            for line in output.splitlines()
            if line.startswith(("npm error", "npm ERR!"))
        )
        boring = ("code ", "A complete log", "Log files")
        candidates += [
            line for line in said if line.strip("0123456789 ") and not line.startswith(boring)
        ][:1]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    candidates += [line for line in lines if not line.startswith(("hint:", "note:"))][-1:]
    return package, (candidates or ["no output"])[0][:_MAX_DETAIL_CHARS]


def read_log(path: Path) -> bytes:
    """The log, or its head and tail when it is over the cap (pip and npm end with the error)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return b""
    with path.open("rb") as handle:
        if size <= MAX_LOG_BYTES:
            return handle.read()
        head = handle.read(_LOG_HEAD_BYTES)
        tail_bytes = MAX_LOG_BYTES - _LOG_HEAD_BYTES
        handle.seek(size - tail_bytes)
        tail = handle.read()
    skipped = size - _LOG_HEAD_BYTES - tail_bytes
    return head + f"\n[... {skipped} bytes of the log left out ...]\n".encode() + tail
