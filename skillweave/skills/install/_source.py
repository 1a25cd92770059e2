"""What a user typed as a skill source, read: a git URL, ``owner/repo`` or a tree URL (read by
``_address``), a ZIP or a folder (:class:`SkillSource`).

:func:`parse_source` tells the kinds apart and refuses insecure transports (``http://``,
``git://``, ``ext::``), bad refs, paths that leave the source, and a relative text that is both
a path here and an ``owner/repo``; :func:`source_allowed` judges
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
from skillweave.skills.install._address import (
    GITHUB,
    RepositoryAddress,
    is_shorthand,
    read_address,
)
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


def parse_source(
    text: str,
    *,
    ref: str | None = None,
    path: str | None = None,
    git_host: str | None = None,
    relative_paths: bool = True,
) -> SkillSource:
    """Read what a user typed as a source: a git URL, ``owner/repo[/path]``, a tree URL
    (``_address``), a local repository, a ZIP or a folder.

    A text shaped like ``owner/repo`` is that repository of `git_host`; when a file or folder
    of that name exists here too it is refused as ambiguous, with how to write each (``./x/y``
    is always the folder). `ref` and `path` given beside a form that names its own (a tree
    URL) must agree with it.

    Args:
        text: what the user typed.
        ref: ``--ref``: a branch, tag or commit.
        path: ``--path``: a sub-folder of the source.
        git_host: ``SKILLS__GIT_HOST``, where ``owner/repo`` lives; None: refused.
        relative_paths: whether a relative text may name a local path at all (the API's
            clients name local sources by absolute path: False, and nothing is looked up).

    Raises:
        PackageError: an insecure, ambiguous or unreadable source, a bad ref or path, or a
            ``--ref``/``--path`` that disagrees with the URL (one line).
    """
    text = text.strip()
    if not text or "\x00" in text or len(text) > 2048:
        raise PackageError("a skill source must be a git URL, owner/repo, a ZIP or a folder")
    if ref is not None and not _REF.match(ref):
        raise PackageError(f"--ref {ref!r}: not a branch, tag or commit name")
    if _INSECURE_URL.match(text):
        raise PackageError(
            f"{text}: http://, git:// and ext:: sources carry no integrity; use https:// or ssh://"
        )
    if relative_paths and is_shorthand(text) and os.path.lexists(os.path.expanduser(text)):
        _refuse_ambiguous(text, git_host)
        address = None
    else:
        address = read_address(text, git_host=git_host)
    if address is not None:
        ref, path = _agreed(text, address, ref=ref, path=path)
        sub = _sub_path(path) if path else None
        if ref is not None and not _REF.match(ref):
            raise PackageError(f"{text}: {ref!r} is not a branch, tag or commit name")
        return SkillSource(kind="git", location=address.url, ref=ref, path=sub)
    sub = _sub_path(path) if path else None
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
        raise PackageError(f"{text}: no such file or folder, and not a git URL or owner/repo")
    if kind != "git" and ref is not None:
        raise PackageError(f"{text}: --ref needs a git repository; this is a {kind}")
    return SkillSource(kind=kind, location=str(local), ref=ref, path=sub)


def source_allowed(text: str, patterns: Sequence[str], *, git_host: str | None = None) -> bool:
    """Whether the source a user typed matches one of `patterns` (``SKILLS__INSTALL_SOURCES``),
    judged before anything is read (a refusal says nothing of what exists). A form of
    ``_address`` (``owner/repo``, a tree URL) is judged by the repository's canonical git URL;
    a local path is made absolute and its ``..`` resolved first; a URL with a dot segment
    never matches."""
    text = text.strip()
    try:
        address = None if _INSECURE_URL.match(text) else read_address(text, git_host=git_host)
    except PackageError:
        return False
    if address is not None:
        location = address.url
    elif is_git_url(text):
        if _DOT_SEGMENT.search(text):
            return False
        location = text
    else:
        location = os.path.abspath(os.path.expanduser(text))
    return matches_allowlist(location, patterns)


def _refuse_ambiguous(text: str, git_host: str | None) -> None:
    """A relative path that exists here and is also a valid ``owner/repo``: refused, with how
    to write each. One that is no valid ``owner/repo`` is the local path, plainly."""
    try:
        address = read_address(text, git_host=git_host or GITHUB)
    except PackageError:
        return
    shown = address.url if address is not None else text
    raise PackageError(
        f"{text}: both a path here and the repository {shown}; write ./{text} for the path,"
        f" or {shown} for the repository"
    )


def _agreed(
    text: str, address: RepositoryAddress, *, ref: str | None, path: str | None
) -> tuple[str | None, str | None]:
    """The ref and path of a source: the address's, and ``--ref``/``--path`` when they agree
    with it. ``--ref`` may name a ref with slashes that a tree URL's first segment cut short
    (``tree/feature/x/skills`` with ``--ref feature/x``: path ``skills``)."""
    got_ref, got_path = address.ref, address.path
    if ref is not None and got_ref is not None and ref != got_ref:
        whole = "/".join(part for part in (got_ref, got_path) if part)
        if not (whole + "/").startswith(ref + "/"):
            raise PackageError(
                f"{text}: --ref {ref} disagrees with the URL's ref {got_ref}; give one of them"
            )
        got_path = whole[len(ref) + 1 :] or None
    if path is not None and got_path is not None and path.strip("/") != got_path:
        raise PackageError(
            f"{text}: --path {path} disagrees with the URL's path {got_path}; give one of them"
        )
    return ref or got_ref, path or got_path


def _sub_path(path: str) -> str:
    pure = PurePosixPath(path.replace("\\", "/").strip("/"))
    if path.startswith("/") or any(part in ("..", "") for part in pure.parts) or "\x00" in path:
        raise PackageError(f"--path {path!r}: must be a relative path inside the source")
    return pure.as_posix()


def _is_repository(folder: Path) -> bool:
    return (folder / ".git").exists() or (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    )
