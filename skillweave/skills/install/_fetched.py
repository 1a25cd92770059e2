"""A source's files in a temporary folder (:func:`fetched`): a git clone at a ref or a locked
commit, an unpacked ZIP, or a folder read in place.

Every local source is judged before anything is read
(:func:`skillweave.skills.confinement.confine`); git runs with no user or system
configuration, no hooks and no submodules (the tree's gitlinks come back as
:attr:`Fetched.submodules`, never read). Called by the install flow (``_installation``).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote

from skillweave.errors import PackageError
from skillweave.skills.confinement import FILE_URL, confine, git_env, run_git
from skillweave.skills.install._source import SkillSource, is_git_url
from skillweave.skills.package import extract_package

__all__ = ["Fetched", "fetched"]

_COMMIT: Final = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_ZIP_MAX_BYTES: Final = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Fetched:
    """A source read into a folder: its root, the commit of a git source, and the folders
    where its tree has a submodule (a gitlink: another repository's commit, never read)."""

    root: Path
    commit: str | None
    submodules: tuple[Path, ...] = ()


@contextmanager
def fetched(
    source: SkillSource, *, commit: str | None = None, allowed: Sequence[str] | None = None
) -> Iterator[Fetched]:
    """The source's files in a folder for the length of the context (removed after), judged
    first (:func:`~skillweave.skills.confinement.confine`): nothing is read of a source that
    leads outside itself.

    Args:
        source: what to read.
        commit: a git source is read at this commit (a locked install), not at its ref.
        allowed: the allowlist its real path must match too (the API's); None: none.

    Raises:
        PackageError: the source leads outside itself or cannot be read (one line).
    """
    if commit is not None and not _COMMIT.match(commit):
        raise PackageError(f"commit {commit!r}: not a full git commit id")
    with tempfile.TemporaryDirectory(prefix="skillweave-install-") as temp:
        work = Path(temp)
        scratch = work / "scratch"
        scratch.mkdir()
        judged = confine(
            source.kind,
            source.location,
            remote=is_git_url(source.location),
            allowed=allowed,
            scratch=scratch,
        )
        submodules: tuple[Path, ...] = ()
        if source.kind == "git":
            root, resolved, submodules = _clone(source, work, commit=commit, git_dir=judged.git_dir)
        elif source.kind == "zip":
            root, resolved = _unzip(judged.root or Path(source.location), work), None
        else:
            root, resolved = judged.root or Path(source.location), None
        if source.path:
            root = _inside(root, source.path, what=source.location)
        yield Fetched(root=root, commit=resolved, submodules=submodules)


def _inside(root: Path, sub: str, *, what: str) -> Path:
    target = (root / sub).resolve()
    if not target.is_relative_to(root.resolve()):
        raise PackageError(f"{what}: --path {sub!r} leaves the source")
    if not target.is_dir():
        raise PackageError(f"{what}: no folder {sub!r} in the source")
    return target


def _unzip(archive: Path, work: Path) -> Path:
    try:
        size = archive.stat().st_size
        if size > _ZIP_MAX_BYTES:
            raise PackageError(f"{archive}: over {_ZIP_MAX_BYTES} bytes")
        data = archive.read_bytes()
    except OSError as exc:
        raise PackageError(f"{archive}: cannot read: {exc.strerror}") from None
    root = work / "package"
    extract_package(data, root)
    return root


def _clone(
    source: SkillSource, work: Path, *, commit: str | None, git_dir: Path | None
) -> tuple[Path, str, tuple[Path, ...]]:
    """Clone the source (a local one from its judged git directory, exactly: served by
    ``git-upload-pack --strict``, which guesses no ``/.git`` and reads no ``.git`` file) and
    check out the commit; the submodules of its tree come back as the folders they would be."""
    env = git_env(work)
    checkout = work / "checkout"
    what = source.location
    if git_dir is None:
        location, local = source.location, []
    else:
        location = FILE_URL + quote(str(git_dir), safe="/")
        local = ["--upload-pack=git-upload-pack --strict"]
    run_git(
        [
            "clone",
            "--quiet",
            "--no-checkout",
            "--no-recurse-submodules",
            *local,
            "--",
            location,
            str(checkout),
        ],
        cwd=work,
        env=env,
        what=what,
    )
    target = commit or source.ref or "HEAD"
    if commit is None and source.ref is not None:
        # A branch of the origin, a tag, or a commit: whichever the name resolves to.
        for candidate in (f"origin/{source.ref}", f"refs/tags/{source.ref}", source.ref):
            try:
                target = run_git(
                    ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
                    cwd=checkout,
                    env=env,
                    what=what,
                )
                break
            except PackageError:
                continue
        else:
            raise PackageError(f"{what}: no branch, tag or commit {source.ref!r}")
    run_git(["checkout", "--quiet", "--detach", target, "--"], cwd=checkout, env=env, what=what)
    resolved = run_git(["rev-parse", "HEAD"], cwd=checkout, env=env, what=what)
    if commit is not None and resolved != commit:
        raise PackageError(f"{what}: commit {commit} is not in the repository")
    tree = run_git(["ls-tree", "-r", "-z", "--full-tree", "HEAD"], cwd=checkout, env=env, what=what)
    submodules = tuple(
        checkout / entry.split("\t", 1)[1]
        for entry in tree.split("\0")
        if entry.startswith("160000 ") and "\t" in entry
    )
    shutil.rmtree(checkout / ".git", ignore_errors=True)
    return checkout, resolved, submodules
