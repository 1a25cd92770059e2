"""The ecosystem's ways of naming a skill repository, read into one canonical git address
(:class:`RepositoryAddress`: git URL, ref, path).

The forms are those the open ``skills`` CLI (``npx skills add``) takes:

* ``owner/repo`` and ``owner/repo/sub/path``: a repository of the git host
  (``SKILLS__GIT_HOST``, GitHub by default), cloned from ``{git_host}/owner/repo.git``; with a
  ``file://`` host, the folder ``{host}/owner/repo.git`` or else ``{host}/owner/repo`` (bare or
  not), so that a folder of repositories stands in for a host in tests and offline;
* ``{host}/owner/repo/tree/REF/PATH`` (GitHub's tree URLs, of github.com or of the git host):
  the repository's git URL, ``REF`` (its first segment; ``--ref`` names a ref with slashes)
  and ``PATH``; ``{host}/group/repo/-/tree/REF/PATH`` (GitLab's) likewise, on any host;
* ``{host}/owner/repo`` and ``{host}/owner/repo.git`` of github.com or of the git host: that
  repository's git URL (``.git``, as the ``skills`` CLI clones it).

Names are judged strictly before anything is read: an owner is GitHub's (letters, digits and
single inner hyphens, at most 39), a repository letters, digits, ``.``, ``_`` and ``-`` (never
``.``/``..`` or a leading ``-``, which git would read as an option), a path never leaves the
repository, and a tree URL with a query, a fragment or percent-escapes is refused rather than
guessed at. Called by :func:`~skillweave.skills.install._source.parse_source` and
:func:`~skillweave.skills.install._source.source_allowed`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote

from skillweave.errors import PackageError

__all__ = ["RepositoryAddress", "is_shorthand", "read_address"]

GITHUB: Final = "https://github.com"
"""The host whose tree URLs are read whatever ``SKILLS__GIT_HOST`` is."""

_OWNER: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
_REPO: Final = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]{0,99}$")
_SEGMENT: Final = re.compile(r"^[A-Za-z0-9._@+][A-Za-z0-9._@+ -]{0,254}$")
_SHAPE: Final = re.compile(r"^[^/:\\~]+/[^/:\\]+(?:/[^:\\]*)?$")
_GITLAB_TREE: Final = re.compile(r"^(https://[^/]+)/(.+?)/-/tree/(.+)$")


@dataclass(frozen=True, slots=True)
class RepositoryAddress:
    """A git repository named in one of the ecosystem's forms: its git URL, the ref the form
    named (None: its HEAD) and the folder inside it (None: the root)."""

    url: str
    ref: str | None = None
    path: str | None = None


def is_shorthand(text: str) -> bool:
    """Whether `text` has the shape of ``owner/repo[/path]`` (not whether its names are
    valid): no scheme, no ``user@host:``, not starting with ``.``, ``/`` or ``~``."""
    return bool(_SHAPE.match(text)) and not text.startswith((".", "/", "-"))


def read_address(text: str, *, git_host: str | None) -> RepositoryAddress | None:
    """The repository `text` names in one of the forms above; None when it is in none of
    them (a URL of another host, as given; a local path).

    Args:
        text: what the user typed.
        git_host: ``SKILLS__GIT_HOST`` (``https://…``, ``ssh://…`` or ``file://…``, no
            trailing slash); None: ``owner/repo`` is refused (the caller knows no host).

    Raises:
        PackageError: a form of these with a bad owner, repository, ref or path (one line).
    """
    hosts = [host for host in (git_host, GITHUB) if host]
    for host in hosts:
        if text.startswith(host + "/"):
            return _on_host(text, host, rest=text[len(host) + 1 :])
    gitlab = _GITLAB_TREE.match(text)
    if gitlab:
        base, repository, tail = gitlab.groups()
        _plain(text)
        for part in repository.split("/"):
            _name(part, _REPO, "repository", text)
        ref, path = _ref_and_path(tail, text)
        return RepositoryAddress(
            url=f"{base}/{repository.removesuffix('.git')}.git", ref=ref, path=path
        )
    if not is_shorthand(text):
        return None
    if git_host is None:
        raise PackageError(
            f"{text}: an owner/repo source needs a git host (SKILLS__GIT_HOST); none was given"
        )
    if "@" in text:
        raise PackageError(f"{text}: write owner/repo --skill NAME to pick a skill")
    owner, repo, *sub = text.rstrip("/").split("/")
    return RepositoryAddress(
        url=_repository_url(git_host, owner, repo, text), path=_path("/".join(sub), text)
    )


def _on_host(text: str, host: str, *, rest: str) -> RepositoryAddress:
    _plain(text)
    parts = rest.rstrip("/").split("/")
    if len(parts) < 2:
        raise PackageError(f"{text}: name a repository as {host}/OWNER/REPO")
    owner, repo, *tail = parts
    url = _repository_url(host, owner, repo, text)
    if not tail:
        return RepositoryAddress(url=url)
    if tail[0] != "tree" or len(tail) < 2:
        raise PackageError(
            f"{text}: not a repository or tree URL; write {host}/OWNER/REPO/tree/REF/PATH"
        )
    ref, path = _ref_and_path("/".join(tail[1:]), text)
    return RepositoryAddress(url=url, ref=ref, path=path)


def _repository_url(host: str, owner: str, repo: str, text: str) -> str:
    _name(owner, _OWNER, "owner", text)
    repo = repo.removesuffix(".git")
    _name(repo, _REPO, "repository", text)
    if not host.startswith("file://"):
        return f"{host}/{owner}/{repo}.git"
    # A folder of repositories standing in for a host: `repo.git` (bare, as a host keeps
    # them) when there is one, else `repo`.
    base = Path(unquote(host.removeprefix("file://")))
    bare = base / owner / f"{repo}.git"
    return f"{host}/{owner}/{repo}.git" if bare.exists() else f"{host}/{owner}/{repo}"


def _ref_and_path(tail: str, text: str) -> tuple[str, str | None]:
    ref, _, path = tail.partition("/")
    if not ref:
        raise PackageError(f"{text}: the tree URL names no ref")
    return ref, _path(path, text)


def _path(path: str, text: str) -> str | None:
    parts = [part for part in path.split("/") if part]
    if not parts:
        return None
    for part in parts:
        if part in (".", "..") or not _SEGMENT.match(part):
            raise PackageError(
                f"{text}: {part[:100]!r} is not a folder name read from a URL or owner/repo;"
                " name the folder with --path"
            )
    return "/".join(parts)


def _name(value: str, pattern: re.Pattern[str], what: str, text: str) -> None:
    if value in (".", "..") or not pattern.match(value):
        raise PackageError(f"{text}: {value[:100]!r} is not a valid {what} name")


def _plain(text: str) -> None:
    if any(mark in text for mark in ("?", "#", "%", "\\")) or "//" in text.split("://", 1)[-1]:
        raise PackageError(
            f"{text}: a URL with a query, fragment, escapes or empty segments is not read;"
            " write the repository's URL with --ref and --path"
        )
