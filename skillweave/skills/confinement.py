"""Where an install may read: the one judgement of a local install source, made before
anything of it is read, and git run with nothing of this machine.

:func:`confine` is called by :func:`skillweave.skills.install.fetched`, which every install
goes through (``skillweave skills install``, ``POST /v1/skills/install``, a ``skills.lock``
re-install). A source is judged by what would be read, not by what it is named: its real path
(symlinks resolved) must match ``SKILLS__INSTALL_SOURCES`` as its name did (when the caller
has an allowlist: the API), and every pointer that would lead a reader out of that real
folder is refused in one line naming it and what to do:

* the source path itself, or one of its components, a symlink to somewhere not allowed;
* a symlink inside a folder source (where the reader looks) or inside a repository's git
  directory, leading outside the source;
* a ``.git`` file (``gitdir:``, a linked worktree's or a submodule's) or a ``.git`` symlink
  to a folder outside, a ``commondir`` outside;
* ``objects/info/alternates`` outside (followed recursively), ``objects/info/http-alternates``
  and ``info/grafts`` (a local source has no use for them);
* a repository config (``config``, ``config.worktree``) setting ``include.path``,
  ``includeIf.*.path``, ``core.worktree``, a promisor remote (``extensions.partialClone``,
  ``remote.*.promisor``: objects fetched lazily from elsewhere) or
  ``core.alternateRefsCommand``;
* a ``file://`` URL is read as the path it names: percent-escapes, a host, a query are refused.

What git is then given is the judged git directory itself, as a ``file://`` URL served by
``git-upload-pack --strict`` (no ``/.git`` or ``.git`` guessing, no ``.git`` file read by
git), under an environment built from nothing (:func:`git_env`: no ``GIT_DIR``,
``GIT_COMMON_DIR``, ``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES``, no user
or system config). Submodules are never read: the clone neither recurses nor initialises
them, and :mod:`skillweave.skills.install` refuses a gitlink inside a skill it installs.

Left open, and said so: the judgement and git's read are not atomic, so a writer racing
inside an allowed source between them is not stopped; hard links and bind mounts inside a
source are read as the source's own files (making either needs the access that reading the
target directly would).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillweave.errors import PackageError
from skillweave.skills.files import is_skipped_dir
from skillweave.skills.stored import SourceKind

__all__ = [
    "FILE_URL",
    "Confined",
    "confine",
    "git_env",
    "matches_allowlist",
    "run_git",
]

FILE_URL: Final = "file://"
MAX_ENTRIES: Final = 1_000_000
"""Entries a judgement walks (a git directory's loose objects included) before it refuses."""
MAX_POINTER_BYTES: Final = 64 * 1024
"""A ``.git`` file, ``commondir`` or ``alternates`` longer than this is no pointer git wrote."""
MAX_ALTERNATES: Final = 16
GIT_SECONDS: Final = 300.0

# Keys of a repository's own config that make git read another path or another repository.
_POINTER_KEYS: Final = (
    "include.path",
    "includeif.*.path",
    "core.worktree",
    "core.alternaterefscommand",
    "extensions.partialclone",
    "remote.*.promisor",
)
_CONFIG_FILES: Final = ("config", "config.worktree")
# Read by git only when it runs hooks; serving objects (upload-pack) never does.
_UNREAD_GIT_DIRS: Final = frozenset({"hooks"})


@dataclass(frozen=True, slots=True)
class Confined:
    """A source judged: the real folder it is read from (None for a remote URL), and for a
    local repository the exact git directory git is to read."""

    root: Path | None
    git_dir: Path | None


def matches_allowlist(location: str, patterns: Sequence[str]) -> bool:
    """Whether `location` (a URL, or an absolute path) matches one of `patterns` whole."""
    return any(fnmatch.fnmatchcase(location, pattern) for pattern in patterns)


def confine(
    kind: SourceKind,
    location: str,
    *,
    remote: bool,
    allowed: Sequence[str] | None,
    scratch: Path,
) -> Confined:
    """Judge a source before anything of it is read.

    Args:
        kind: what the source is (``parse_source``'s reading).
        location: the source as parsed: a URL, or an absolute path.
        remote: `location` is a URL of another host (https, ssh): nothing local to judge.
        allowed: ``SKILLS__INSTALL_SOURCES`` when the caller has one (the API), which the
            real path must match too; None: any source its user can read (the CLI).

    Raises:
        PackageError: one line naming what leads outside the source and what to do.
    """
    if remote and not location.startswith(FILE_URL):
        return Confined(root=None, git_dir=None)
    named = _file_url_path(location) if location.startswith(FILE_URL) else location
    named = os.path.abspath(named)
    real = Path(os.path.realpath(named))
    if allowed is not None:
        prefix = FILE_URL if location.startswith(FILE_URL) else ""
        if not matches_allowlist(prefix + str(real), allowed):
            raise PackageError(
                f"{location}: its real path (symlinks resolved) is not one SKILLS__INSTALL_SOURCES"
                " allows: name the source by a path the operator allows, or have them allow"
                " the folder it leads to"
            )
    if kind == "zip":
        return Confined(root=real, git_dir=None)
    if not real.is_dir():
        raise PackageError(f"{location}: not a folder")
    if kind == "folder":
        _Judge(real, location, scratch).folder()
        return Confined(root=real, git_dir=None)
    return Confined(root=real, git_dir=_Judge(real, location, scratch).repository())


class _Judge:
    """The walk over one source's real folder `root`; `what` names the source in errors."""

    def __init__(self, root: Path, what: str, scratch: Path) -> None:
        self.root = root
        self.what = what
        self.scratch = scratch
        self.entries = 0

    def refuse(self, entry: Path | str, reason: str) -> PackageError:
        where = entry if isinstance(entry, str) else self.relative(entry)
        return PackageError(f"{self.what}: {where}: {reason}")

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def inside(self, path: Path, *, entry: Path, reason: str) -> Path:
        """`path` resolved, which must lie inside the source, else the refusal `reason`."""
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.root):
            raise self.refuse(entry, reason)
        return real

    # --- a folder: what find_skills and the packager walk -------------------------------

    def folder(self) -> None:
        """Refuse a symlink leading outside wherever the reader looks (hidden folders and
        dependency caches are never read, so never judged)."""
        stack = [self.root]
        while stack:
            for entry in self._scan(stack.pop()):
                if is_skipped_dir(entry.name):
                    continue
                path = Path(entry.path)
                if entry.is_symlink():
                    self.inside(
                        path,
                        entry=path,
                        reason="a symlink to outside the source; an install reads only what is"
                        " inside it: copy the files in, or install from where it leads",
                    )
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(path)

    # --- a repository: what git-upload-pack reads ---------------------------------------

    def repository(self) -> Path:
        """The git directory to read (judged whole), after refusing every pointer outside."""
        git_dir = self._git_dir()
        self._walk_git(git_dir)
        common = git_dir
        pointer = git_dir / "commondir"
        if os.path.lexists(pointer):
            target = self._read_pointer(pointer).strip()
            common = self.inside(
                git_dir / target,
                entry=pointer,
                reason="points at another repository's objects and refs (a linked worktree's);"
                " install from that repository itself",
            )
            if not common.is_dir():
                raise self.refuse(pointer, "names no folder; repair or re-clone the repository")
            self._walk_git(common)
        for where in (git_dir, common):
            grafts = where / "info" / "grafts"
            if os.path.lexists(grafts):
                raise self.refuse(
                    grafts,
                    "grafts rewrite history and are not read by an install: convert them with"
                    " `git replace --convert-graft-file`, or install from a fresh clone",
                )
        self._alternates(common / "objects")
        for where in dict.fromkeys((common, git_dir)):
            for name in _CONFIG_FILES:
                self._config(where / name)
        return git_dir

    def _git_dir(self) -> Path:
        dotgit = self.root / ".git"
        if not os.path.lexists(dotgit):
            return self.root  # a bare repository
        if dotgit.is_symlink():
            target = self.inside(
                dotgit,
                entry=dotgit,
                reason="a symlink to a git directory outside the source; install from the"
                " repository it leads to",
            )
        elif dotgit.is_file():
            text = self._read_pointer(dotgit)
            if not text.startswith("gitdir:"):
                raise self.refuse(dotgit, "a file that is no 'gitdir:' pointer; remove it")
            target = self.inside(
                self.root / text.removeprefix("gitdir:").strip(),
                entry=dotgit,
                reason="a file pointing at another repository (gitdir:); an install reads only"
                " what is inside its source: install from the repository it points to",
            )
        else:
            target = dotgit
        if not target.is_dir():
            raise self.refuse(dotgit, "leads to no git directory; repair or re-clone it")
        return target

    def _walk_git(self, top: Path) -> None:
        """Refuse a symlink out of `top`; a symlink to a folder inside is walked too."""
        seen = {top}
        stack = [top]
        while stack:
            folder = stack.pop()
            for entry in self._scan(folder):
                path = Path(entry.path)
                if folder == top and entry.name in _UNREAD_GIT_DIRS:
                    continue
                if entry.is_symlink():
                    target = self.inside(
                        path,
                        entry=path,
                        reason="a symlink to outside the source, which git would read; install"
                        " from a fresh clone (`git clone --no-local`)",
                    )
                    if target.is_dir() and target not in seen:
                        seen.add(target)
                        stack.append(target)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(path)

    def _alternates(self, objects: Path) -> None:
        http = objects / "info" / "http-alternates"
        if os.path.lexists(http):
            raise self.refuse(
                http,
                "names other places to fetch objects from; remove it, or install from a"
                " fresh clone",
            )
        todo, seen = [objects], {objects}
        while todo:
            current = todo.pop()
            listing = current / "info" / "alternates"
            if not os.path.lexists(listing):
                continue
            for raw in self._read_pointer(listing).splitlines():
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith('"'):
                    raise self.refuse(
                        listing, "a quoted alternate; run `git repack -a -d` and remove the file"
                    )
                target = self.inside(
                    current / line,
                    entry=listing,
                    reason="points at another repository's objects (alternates: a --shared or"
                    " --reference clone); run `git repack -a -d` in it and remove the file, or"
                    " install from the repository it points to",
                )
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
                    if len(seen) > MAX_ALTERNATES:
                        raise self.refuse(listing, f"more than {MAX_ALTERNATES} alternates")

    def _config(self, path: Path) -> None:
        if not path.is_file():
            return
        names = run_git(
            ["config", "--file", str(path), "--no-includes", "--null", "--name-only", "--list"],
            cwd=self.scratch,
            env=git_env(self.scratch),
            what=f"{self.what}: {self.relative(path)}",
        )
        for name in names.split("\0"):
            key = name.strip().lower()
            if any(fnmatch.fnmatchcase(key, pattern) for pattern in _POINTER_KEYS):
                raise self.refuse(
                    path,
                    f"sets {name.strip()}, which leads git outside the source; remove it, or"
                    " install from a fresh clone",
                )

    def _read_pointer(self, path: Path) -> str:
        real = self.inside(path, entry=path, reason="a symlink to outside the source")
        try:
            with real.open("rb") as handle:
                data = handle.read(MAX_POINTER_BYTES + 1)
        except OSError as exc:
            raise self.refuse(path, f"cannot be read: {exc.strerror}") from None
        if len(data) > MAX_POINTER_BYTES:
            raise self.refuse(path, f"over {MAX_POINTER_BYTES} bytes; no pointer git wrote")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise self.refuse(path, "not UTF-8 text; no pointer git wrote") from None

    def _scan(self, folder: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except FileNotFoundError:
            return []  # gone since its parent was listed (a `git gc` packing loose objects)
        except OSError as exc:
            raise self.refuse(folder, f"cannot be read: {exc.strerror}") from None
        self.entries += len(entries)
        if self.entries > MAX_ENTRIES:
            raise self.refuse(
                folder,
                f"more than {MAX_ENTRIES} entries to judge: name a smaller folder, or pack a"
                " repository's loose objects (`git gc`) first",
            )
        return entries


def _file_url_path(location: str) -> str:
    path = location.removeprefix(FILE_URL)
    if not path.startswith("/") or any(c in path for c in "%?#\\"):
        raise PackageError(
            f"{location}: a file:// source is read as the path it names: write it as"
            " file:///absolute/path without a host, query or percent-escape, or as the path"
        )
    return path


# --- git, run with nothing of this machine --------------------------------------------------


def git_env(home: Path) -> dict[str, str]:
    """Git with nothing of this machine's user: built from nothing, so no ``GIT_DIR``,
    ``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES`` or other ``GIT_*`` of the
    caller reaches it; no config, no credentials helper, no prompt, no lazy fetch."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_ALLOW_PROTOCOL": "https:ssh:file",
        "GIT_NO_LAZY_FETCH": "1",
        # ssh keys and agents stay usable for private repositories over ssh
        **{k: v for k, v in os.environ.items() if k in ("SSH_AUTH_SOCK", "GIT_SSH_COMMAND")},
    }


_GIT_OPTIONS: Final = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.symlinks=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "advice.detachedHead=false",
)


def run_git(args: Sequence[str], *, cwd: Path | None, env: dict[str, str], what: str) -> str:
    """Run git (the options above first) and return its output.

    Raises:
        PackageError: git is missing, slow, or fails (its last line, for `what`).
    """
    git = shutil.which("git")
    if git is None:
        raise PackageError("git is not installed: install it to install skills from git")
    try:
        done = subprocess.run(
            [git, *_GIT_OPTIONS, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise PackageError(f"{what}: git took over {GIT_SECONDS:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1].removeprefix("fatal: ").strip() if lines else f"exit {done.returncode}"
        raise PackageError(f"{what}: {reason[:300]}")
    return done.stdout.strip()
