"""What a user typed as a skill source, read: a git URL, a ZIP or a folder (:class:`SkillSource`).

:func:`parse_source` tells the kinds apart and refuses insecure transports (``http://``,
``git://``, ``ext::``), bad refs and paths that leave the source; :func:`source_allowed` judges
a source against the API's allowlist before anything is read; :func:`is_git_url` says whether
a location is a URL rather than a local path. Called by the CLI's and the API's installs, the
lock file (``_lockfile``) and the fetcher (``_fetched``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from skillweave.errors import PackageError
from skillweave.skills.confinement import matches_allowlist
from skillweave.skills.stored import SourceKind

__all__ = ["SkillSource", "is_git_url", "parse_source", "source_allowed"]

_GIT_URL: Final = re.compile(r"^(?:https://|ssh://|file://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)")
_INSECURE_URL: Final = re.compile(r"^(?:http|git|ext|fd)://|^ext::|^fd::", re.IGNORECASE)
_DOT_SEGMENT: Final = re.compile(r"/\.\.?(?:/|$)|%2e", re.IGNORECASE)
_REF: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@+-]{0,199}$")


class SkillSource(BaseModel):
    """Where to install from: what the user typed, read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SourceKind
    location: str = Field(description="A git URL as given, or an absolute local path.")
    ref: str | None = None
    path: str | None = Field(default=None, description="A sub-folder of the source.")


def is_git_url(location: str) -> bool:
    """Whether `location` is a git URL (``https://``, ``ssh://``, ``file://``,
    ``git@host:path``) rather than a local path."""
    return bool(_GIT_URL.match(location))


def parse_source(text: str, *, ref: str | None = None, path: str | None = None) -> SkillSource:
    """Read what a user typed as a source.

    Raises:
        PackageError: an insecure or unreadable source, a bad ref or path (one line).
    """
    text = text.strip()
    if not text or "\x00" in text or len(text) > 2048:
        raise PackageError("a skill source must be a git URL, a ZIP or a folder")
    if ref is not None and not _REF.match(ref):
        raise PackageError(f"--ref {ref!r}: not a branch, tag or commit name")
    sub = _sub_path(path) if path else None
    if _INSECURE_URL.match(text):
        raise PackageError(
            f"{text}: http://, git:// and ext:: sources carry no integrity; use https:// or ssh://"
        )
    if is_git_url(text):
        return SkillSource(kind="git", location=text, ref=ref, path=sub)
    local = Path(text).expanduser().absolute()
    if local.is_file() and local.suffix.lower() == ".zip":
        kind: SourceKind = "zip"
    elif local.is_dir():
        kind = "git" if _is_repository(local) else "folder"
    elif local.exists():
        raise PackageError(f"{text}: not a ZIP, a folder or a git repository")
    else:
        raise PackageError(f"{text}: no such file or folder, and not a git URL")
    if kind != "git" and ref is not None:
        raise PackageError(f"{text}: --ref needs a git repository; this is a {kind}")
    return SkillSource(kind=kind, location=str(local), ref=ref, path=sub)


def source_allowed(text: str, patterns: Sequence[str]) -> bool:
    """Whether the source a user typed matches one of `patterns` (``SKILLS__INSTALL_SOURCES``),
    judged before anything is read (a refusal says nothing of what exists). A local path is
    made absolute and its ``..`` resolved first; a URL with a dot segment never matches."""
    text = text.strip()
    if is_git_url(text):
        if _DOT_SEGMENT.search(text):
            return False
        location = text
    else:
        location = os.path.abspath(os.path.expanduser(text))
    return matches_allowlist(location, patterns)


def _sub_path(path: str) -> str:
    pure = PurePosixPath(path.replace("\\", "/").strip("/"))
    if path.startswith("/") or any(part in ("..", "") for part in pure.parts) or "\x00" in path:
        raise PackageError(f"--path {path!r}: must be a relative path inside the source")
    return pure.as_posix()


def _is_repository(folder: Path) -> bool:
    return (folder / ".git").exists() or (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    )
