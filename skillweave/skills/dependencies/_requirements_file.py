"""Reading ``requirements.txt``: one PEP 508 requirement a line, with comments, ``\\``
continuations and ``-r FILE`` includes of files inside the package.

Every other option and every URL or path given as a requirement is refused: the index is the
operator's choice. ``--hash`` options are ignored, so ``pip-compile --generate-hashes`` output
reads unchanged. pip's own parser is not a public library (and would follow options we
refuse), so this small subset is read here. Called by discovery (``_inventory``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Final

from skillweave.errors import DependencyError
from skillweave.skills.dependencies._declarations import (
    Declarations,
    PythonEntry,
    has_url_scheme,
    refuse_url_or_path,
    source_text,
)

__all__ = ["REQUIREMENTS_FILE", "read_requirements"]

REQUIREMENTS_FILE: Final = "requirements.txt"

_COMMENT: Final = re.compile(r"(^|\s+)#.*$")
_INCLUDE_OPTIONS: Final = ("-r", "--requirement")
_HASH_OPTION: Final = "--hash"


def read_requirements(
    files: Mapping[str, bytes],
    path: str,
    declared: Declarations,
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
    for line_number, line in _logical_lines(source_text(files, path)):
        where = f"{path}:{line_number}"
        if line.startswith("-"):
            target = _include_target(line, where)
            included = _resolve_include(files, path, target, where)
            if included in chain:
                loop = " -> ".join((*chain, included))
                raise DependencyError(f"{where}: include loop: {loop}")
            if included not in seen:
                read_requirements(files, included, declared, including=chain, seen=seen)
            continue
        requirement = _strip_hash_options(line, where)
        refuse_url_or_path(requirement, where)
        declared.python.append(PythonEntry(requirement, where))
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
    if has_url_scheme(target) or target.startswith(("/", "~")) or "\\" in target:
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
