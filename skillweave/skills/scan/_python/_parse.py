"""Parsing a scanned Python file: :func:`parse`, which never raises.

Called by ``_package`` for every Python module of a skill, and by ``scanner`` (through the
package's ``parse``) for a module the package did not hold.
"""

from __future__ import annotations

import ast
import warnings

from skillweave.skills.imports import PARSE_LOCK

__all__ = ["parse"]


def parse(data: bytes, path: str) -> ast.Module | str:
    """The module's tree, or why it does not parse (one line)."""
    try:
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in scanned code warn
            return ast.parse(data, filename=path)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg)
    except (ValueError, RecursionError, MemoryError, SystemError, OverflowError) as exc:
        return f"{type(exc).__name__}: {exc}"[:160] or type(exc).__name__
