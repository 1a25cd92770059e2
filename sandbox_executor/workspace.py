"""The workspace of one execution: materialized from the request, read back after the run.

Layout on the host, inside the executor's folder (one fresh attempt folder per run, made while
the executor is warm, before its request arrives)::

    attempt/            0711, executor-owned: the sandbox user may pass, not list
      stdout, stderr    0600, executor-owned: the run's captured streams
      workspace/        0700, sandbox user: the script's cwd and HOME (``/workspace`` inside)
        skill/          the skill root (the package's top-most folder with a SKILL.md,
                        extracted straight here; nothing else of the package), read-only
        deps/           the skill's prepared environment, when it has one, read-only:
                        ``python/`` (on PYTHONPATH) and ``node/node_modules/`` (on NODE_PATH)
        inputs/         the input files, read-only
        outputs/        empty, writable: every regular file here is an output
      tmp/              0700, sandbox user: TMPDIR, only when the run has no sandbox of its
                        own (``none``; a contained run's /tmp is a tmpfs inside it)

Nothing else is made per run: on a busy host every file or folder made is an inode allocated
and freed again, which ext4 without a journal pays for with a walk over the inodes freed in
the last minutes (docs/BENCHMARKS.md).

Every path that comes from the request (script, input names) is checked before any file
access: relative, no ``..``, no empty or ``.`` parts, no backslashes or NUL, and resolved
without following a symlink. Outputs are read the same way, with ``O_NOFOLLOW`` from an open
folder, so a script that leaves symlinks behind cannot make the executor read a host file.

What the script leaves is hostile in shape too (a tree thousands of levels deep, a folder of
a million entries, names no store key can carry), so collection is iterative and bounded
(`MAX_OUTPUT_DEPTH`, `MAX_OUTPUT_ENTRIES`; what lies past a bound is listed as skipped with
the reason, and the other outputs are kept), and removal (``skills.files.remove_tree``) walks
any depth from open folders. Both are called by ``executor``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.sandbox_user import SandboxUser
from skillweave.errors import ExecutionRejectedError, InvalidKeyError, PackageError
from skillweave.sandbox import ExecutorFile, SkippedOutput, check_path
from skillweave.skills import extract_package, remove_tree
from skillweave.storage import keys

__all__ = [
    "MAX_INPUT_FILES",
    "MAX_OUTPUT_DEPTH",
    "MAX_OUTPUT_ENTRIES",
    "MAX_SKIPPED_LISTED",
    "OUTPUTS",
    "CollectedOutputs",
    "Workspace",
    "clear_workspace",
    "collect_outputs",
    "create_workspace",
    "fill_workspace",
    "iter_file",
    "open_beneath",
    "rehearse",
    "relative_parts",
    "remove_tree",
]

MAX_INPUT_FILES: Final = 256
OUTPUTS: Final = "outputs"
READ_ONLY_DIRS: Final = ("skill", "deps", "inputs")
MAX_ENVIRONMENT_BYTES: Final = 1024 * 1024 * 1024
"""The largest prepared environment unpacked (the manager's own cap is usually lower)."""
MAX_ENVIRONMENT_FILES: Final = 200_000
_CHUNK: Final = 1024 * 1024
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Workspace:
    """Host paths of one execution's files."""

    root: Path
    tmp: Path | None
    """The run's TMPDIR on the host; None when the run is contained (its /tmp is a tmpfs)."""

    @property
    def skill(self) -> Path:
        return self.root / "skill"

    @property
    def deps(self) -> Path:
        return self.root / "deps"

    @property
    def inputs(self) -> Path:
        return self.root / "inputs"

    @property
    def outputs(self) -> Path:
        return self.root / OUTPUTS


@dataclass(frozen=True)
class CollectedOutputs:
    """The output files of a run, or why they are not listed."""

    files: list[ExecutorFile]
    paths: dict[str, tuple[str, ...]]
    error: str | None = None
    skipped: list[SkippedOutput] = field(default_factory=list)


def relative_parts(path: str, *, what: str) -> tuple[str, ...]:
    """Split a request path into its parts, refusing anything that could leave its folder
    (the rule of ``skillweave.sandbox.validation``, which the manager applies first).

    Raises:
        RequestRejectedError: The path is empty, absolute, has ``..``, ``.`` or empty parts,
            a backslash or NUL, is not text, or is too long.
    """
    try:
        return check_path(path, what)
    except ExecutionRejectedError as exc:
        raise RequestRejectedError(exc.reason) from None


def create_workspace(
    folder: Path, *, user: SandboxUser | None, contained: bool = False
) -> Workspace:
    """Make the empty workspace of one execution in the empty attempt `folder`.

    The folders exist before the request does: a warm sandbox binds them at start, and the
    request's files are then written into them (never renamed over them, which would leave the
    bind on the old folder).

    Args:
        folder: A new folder of the executor's (mode 0711).
        user: The sandbox user, who will own the writable parts; None keeps the executor's.
        contained: The run has a sandbox of its own, whose /tmp is a tmpfs: no ``tmp/``.
    """
    workspace = Workspace(root=folder / "workspace", tmp=None if contained else folder / "tmp")
    writable = [workspace.root, workspace.outputs]
    workspace.root.mkdir(mode=0o700)
    if workspace.tmp is not None:
        workspace.tmp.mkdir(mode=0o700)
        writable.append(workspace.tmp)
    workspace.skill.mkdir(mode=0o755)
    workspace.deps.mkdir(mode=0o755)
    workspace.inputs.mkdir(mode=0o755)
    workspace.outputs.mkdir(mode=0o755)
    if user is not None:
        for path in writable:
            os.chown(path, user.uid, user.gid)
    return workspace


def fill_workspace(
    workspace: Workspace,
    *,
    package: bytes,
    inputs: Sequence[tuple[tuple[str, ...], BinaryIO]],
    environment: BinaryIO | None = None,
    environment_sha256: str | None = None,
    environment_cache: Path | None = None,
) -> None:
    """Put the skill (from its package) under ``skill/``, its prepared environment under
    ``deps/`` and the inputs under ``inputs/``.

    Args:
        workspace: From `create_workspace`, with empty ``skill/``, ``deps/`` and ``inputs/``.
        package: The skill package ZIP; its top-most folder with a SKILL.md is the skill.
        inputs: Each input's checked path parts under ``inputs/`` and its data.
        environment: The skill's prepared environment (a gzipped tar the manager built once
            and stores), if it declares dependencies.
        environment_sha256: Its sha256, as the manager says.
        environment_cache: The host's shared folder of unpacked environments: with it (and the
            sha256), the environment is unpacked there once and hard-linked into ``deps/``.

    Raises:
        RequestRejectedError: The package is unsafe or holds no single top-level skill, or two
            inputs clash. `clear_workspace` then makes the workspace fresh again.
    """
    try:
        extract_package(package, workspace.skill, skill_only=True)
    except PackageError as exc:
        raise RequestRejectedError(f"bad skill package: {exc}") from exc
    if environment is not None and environment_cache is not None and environment_sha256:
        cached = _cached_environment(environment, environment_sha256, environment_cache)
        _link_tree(cached, workspace.deps)
    elif environment is not None:
        _unpack_environment(environment, workspace.deps)
    _write_inputs(workspace.inputs, inputs)
    for path in (workspace.skill, workspace.deps, workspace.inputs):
        _make_read_only(path)


def _cached_environment(data: BinaryIO, digest: str, cache: Path) -> Path:
    """The environment unpacked, read-only, under ``cache/<sha256>``: by this executor now if
    no executor of the host did it before. Unpacked beside it first and renamed into place, so
    a reader never sees half of one; when two race, the loser's copy is dropped."""
    target = cache / digest
    if target.is_dir():
        return target
    raw = data.read()
    if hashlib.sha256(raw).hexdigest() != digest:
        raise RequestRejectedError("bad environment: its sha256 is not the one announced")
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=cache))
    try:
        _unpack_environment(io.BytesIO(raw), staging)
        _make_read_only(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        remove_tree(staging)
    return target


def _link_tree(source: Path, dest: Path) -> None:
    """Mirror `source` into the empty `dest`: folders made, files hard-linked (copied where
    the two are on different filesystems). A link shares the cached file's read-only inode.
    Iterative: a package's install may have made the tree deeper than recursion goes."""
    pending = [(source, dest)]
    while pending:
        folder, here = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    (here / entry.name).mkdir(mode=0o755)
                    pending.append((Path(entry.path), here / entry.name))
                    continue
                try:
                    os.link(entry.path, here / entry.name)
                except OSError:
                    shutil.copy2(entry.path, here / entry.name)


def _unpack_environment(data: BinaryIO, dest: Path) -> None:
    """Unpack a prepared environment: regular files and folders only, all beneath `dest`
    (tarfile's ``data`` filter refuses absolute paths, ``..``, links out and devices), within
    the size and file-count caps."""
    files = size = 0
    try:
        with tarfile.open(fileobj=data, mode="r:gz") as archive:
            members = []
            for member in archive:
                if not (member.isfile() or member.isdir()):
                    raise RequestRejectedError(
                        f"bad environment: {member.name!r} is not a file or a folder"
                    )
                files += 1
                size += member.size
                if files > MAX_ENVIRONMENT_FILES or size > MAX_ENVIRONMENT_BYTES:
                    raise RequestRejectedError(
                        f"bad environment: over {MAX_ENVIRONMENT_FILES} files or "
                        f"{MAX_ENVIRONMENT_BYTES} bytes"
                    )
                members.append(member)
            archive.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise RequestRejectedError(f"bad environment: {exc}") from exc


_rehearsed: list[bool] = []
"""Not empty once this process (or the one it was forked from) rehearsed."""


def rehearse(folder: Path) -> None:
    """Fill and collect a throwaway workspace in the empty `folder`, then remove it.

    A one-shot executor serves one request, so every request would be the first to run this
    code: a rehearsal at start-up pays the first-call costs (imports done lazily, caches
    filled) before the sandbox counts as ready. Once per process: an executor forked from
    the zygote, which rehearsed, inherits what it paid for.
    """
    if _rehearsed:
        return
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rehearsal/SKILL.md", "---\nname: rehearsal\ndescription: -\n---\n")
        archive.writestr("rehearsal/scripts/run.py", "print('rehearsal')\n")
    folder.mkdir(mode=0o700)
    try:
        workspace = create_workspace(folder, user=None)
        fill_workspace(
            workspace, package=buffer.getvalue(), inputs=[((("data.txt",)), io.BytesIO(b"x"))]
        )
        collect_outputs(workspace, max_files=1)
    finally:
        remove_tree(folder)
    _rehearsed.append(True)


def clear_workspace(workspace: Workspace) -> None:
    """Undo a `fill_workspace` whose request was refused before anything ran."""
    for folder in (workspace.skill, workspace.deps, workspace.inputs):
        os.chmod(folder, 0o755)
        for entry in os.listdir(folder):
            path = folder / entry
            if path.is_dir() and not path.is_symlink():
                remove_tree(path)
            else:
                path.unlink()


def _write_inputs(root: Path, inputs: Sequence[tuple[tuple[str, ...], BinaryIO]]) -> None:
    for parts, data in inputs:
        parent = root
        for part in parts[:-1]:
            parent = parent / part
            try:
                parent.mkdir(mode=0o755)
            except FileExistsError as exc:
                if not parent.is_dir():
                    raise RequestRejectedError(
                        f"input {'/'.join(parts)!r}: clashes with another input"
                    ) from exc
        target = parent / parts[-1]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(target, flags, 0o644)
        except (FileExistsError, IsADirectoryError) as exc:
            raise RequestRejectedError(
                f"input {'/'.join(parts)!r}: given twice or clashes with another input"
            ) from exc
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(data, out, _CHUNK)


def _make_read_only(root: Path) -> None:
    """a-w over a tree: the sandbox user does not own it anyway, a same-uid executor does.
    Iterative, as `_link_tree`; a folder is made read-only once what is in it is."""
    pending = [str(root)]
    folders: list[str] = []
    while pending:
        folder = pending.pop()
        folders.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif not entry.is_symlink():
                    mode = entry.stat(follow_symlinks=False).st_mode
                    os.chmod(entry.path, 0o555 if mode & 0o111 else 0o444)
    for folder in reversed(folders):
        os.chmod(folder, 0o555)


def open_beneath(root: Path, parts: Sequence[str]) -> int:
    """Open the regular file `root`/`parts` for reading without following any symlink.

    Raises:
        FileNotFoundError: It does not exist, a part is a symlink, or it is not a regular file.
    """
    try:
        folder = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise FileNotFoundError(str(root)) from exc
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(
            parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder
        )
    except OSError as exc:
        raise FileNotFoundError("/".join(parts)) from exc
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileNotFoundError("/".join(parts))
    return fd


def iter_file(fd: int) -> Iterator[bytes]:
    """Read an open file in chunks, closing it at the end (or when the consumer stops)."""
    try:
        while chunk := os.read(fd, _CHUNK):
            yield chunk
    finally:
        os.close(fd)


def _describe(fd: int, name: str) -> ExecutorFile:
    digest = hashlib.sha256()
    size = 0
    for chunk in iter_file(fd):
        digest.update(chunk)
        size += len(chunk)
    return ExecutorFile(name=name, size=size, sha256=digest.hexdigest())


MAX_OUTPUT_DEPTH: Final = 32
"""Folders below ``outputs/`` that collection enters; a folder deeper is skipped, said so."""
MAX_OUTPUT_ENTRIES: Final = 100_000
"""Entries (files, folders, anything) collection reads under ``outputs/``; the rest is not
read, and the folder where it stopped is listed as skipped."""
MAX_SKIPPED_LISTED: Final = 100
"""Skipped outputs named one by one; past this many, one more entry counts the rest."""


class _Skipped:
    """The skipped outputs of a run, at most `MAX_SKIPPED_LISTED` named (the rest counted)."""

    def __init__(self) -> None:
        self.items: list[SkippedOutput] = []
        self.more = 0

    def add(self, parts: Sequence[str], reason: str, *, folder: bool = False) -> None:
        if len(self.items) >= MAX_SKIPPED_LISTED:
            self.more += 1
            return
        shown = _shown("/".join(parts) or ".") + ("/" if folder else "")
        self.items.append(SkippedOutput(path=shown, reason=reason))

    def listed(self) -> list[SkippedOutput]:
        if not self.more:
            return self.items
        return [*self.items, SkippedOutput(path="...", reason=f"{self.more} more were skipped")]


def collect_outputs(workspace: Workspace, *, max_files: int) -> CollectedOutputs:
    """List every regular file under ``outputs/`` (symlinks are neither followed nor listed).

    Bounded, whatever the script left there: iterative (no recursion), two folders open at a
    time, at most `MAX_OUTPUT_DEPTH` folders deep and `MAX_OUTPUT_ENTRIES` entries read (a
    tree past a bound is listed as skipped, with the reason, and the other outputs are kept;
    their bytes are bounded by the run's disk budget, checked before). A name no store key
    can carry (``keys.check_output_path``: a control character, not UTF-8, too long) is
    skipped likewise. Over `max_files` files, nothing is listed and `error` says why: a
    partial set of outputs would look like a complete one.
    """
    try:
        outputs = _open_folder_beneath(workspace.root, (OUTPUTS,))
    except OSError:
        if not workspace.root.is_dir():
            return CollectedOutputs([], {}, error="the workspace is gone")
        return CollectedOutputs(
            [], {}, error="outputs/ is no longer a folder (the script replaced it): no outputs"
        )
    try:
        found, skipped = _walk_outputs(outputs)
    finally:
        os.close(outputs)
    if len(found) > max_files:
        return CollectedOutputs(
            [],
            {},
            error=(
                f"more than {max_files} files under outputs/ (max_output_files);"
                " no outputs were kept"
            ),
        )
    files_out: list[ExecutorFile] = []
    paths: dict[str, tuple[str, ...]] = {}
    for parts in found:
        name = "/".join((OUTPUTS, *parts))
        with contextlib.suppress(FileNotFoundError):
            files_out.append(_describe(open_beneath(workspace.outputs, parts), name))
            paths[name] = parts
    return CollectedOutputs(files_out, paths, skipped=skipped.listed())


def _walk_outputs(outputs: int) -> tuple[list[tuple[str, ...]], _Skipped]:
    """The regular files under the open ``outputs/`` folder (as path parts, in name order,
    a folder's files before its subfolders'), and what was skipped."""
    found: list[tuple[str, ...]] = []
    skipped = _Skipped()
    pending: list[tuple[str, ...]] = [()]
    read = 0
    while pending:
        parts = pending.pop()
        try:
            folder = _open_parts(outputs, parts)
        except OSError:
            continue  # gone, or replaced by a symlink: nothing of it is an output
        files: list[str] = []
        folders: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    read += 1
                    if read > MAX_OUTPUT_ENTRIES:
                        break
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.name)
        except OSError:
            continue
        finally:
            os.close(folder)
        for name in sorted(files):
            reason = _unkeyable((*parts, name))
            if reason is None:
                found.append((*parts, name))
            else:
                skipped.add((*parts, name), reason)
        if read > MAX_OUTPUT_ENTRIES:
            skipped.add(
                parts,
                f"more than {MAX_OUTPUT_ENTRIES} entries under outputs/; the rest was not read",
                folder=True,
            )
            break
        for name in sorted(folders, reverse=True):
            inner = (*parts, name)
            if len(inner) > MAX_OUTPUT_DEPTH:
                skipped.add(
                    inner,
                    f"a folder deeper than {MAX_OUTPUT_DEPTH} levels under outputs/;"
                    " nothing in it was kept",
                    folder=True,
                )
            elif (reason := _unkeyable(inner)) is not None:
                skipped.add(inner, f"{reason}; nothing in it was kept", folder=True)
            else:
                pending.append(inner)
    return found, skipped


def _unkeyable(parts: Sequence[str]) -> str | None:
    """Why no store key can carry this output path (the store's one rule), or None."""
    try:
        keys.check_output_path("/".join(parts))
    except InvalidKeyError as exc:
        return exc.reason
    return None


def _open_folder_beneath(root: Path, parts: Sequence[str]) -> int:
    """Open the folder `root`/`parts` without following any symlink.

    Raises:
        OSError: It does not exist, or a part is a symlink or not a folder.
    """
    top = os.open(root, _DIR_FLAGS)
    try:
        return _open_parts(top, parts)
    finally:
        os.close(top)


def _open_parts(top: int, parts: Sequence[str]) -> int:
    """Open the folder `parts` beneath the open folder `top`, one part at a time (never a
    long path, never a symlink), holding two folders open at most."""
    folder = os.dup(top)
    try:
        for part in parts:
            inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder


def _shown(name: str) -> str:
    """A file name as it can be shown: undecodable bytes (surrogate escapes) and control
    characters written as ``\\xNN``."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
