"""Skill packages: the ZIP a skill (or a skill tree) travels in, built and extracted safely.

This module owns the package format and its safety policy. `build_package` / `write_package`
turn a skill folder, children included, into a reproducible ZIP (same files, same bytes), which
is what gets uploaded to the skill store and pushed to sandboxes. `extract_package` is the only
way an uploaded package becomes files on disk: the upload path of the API and CLI and anything
unpacking a stored skill call it.

The stdlib `zipfile` reads and writes the format; what it does not do is written here. It
stamps entries with file mtimes (so archives are not reproducible), and `extractall` quietly
rewrites dangerous names instead of refusing them, follows no size limits and trusts headers.
Extraction here validates every entry before writing anything, names the offending entry in an
`UnsafePackageError`, counts the bytes it actually decompresses, and removes what it wrote when
anything fails half-way.
"""

from __future__ import annotations

import io
import os
import re
import stat
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Final

from skillweave.atomic_write import write_atomic
from skillweave.errors import PackageError, ResourceTooLargeError, UnsafePackageError
from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.versioning import contents_version

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_RATIO",
    "MAX_PATH_DEPTH",
    "RATIO_CHECK_FLOOR",
    "PackageLimits",
    "archive_version",
    "build_package",
    "extract_package",
    "package_file",
    "write_package",
]

DEFAULT_MAX_FILES: Final = 1000
DEFAULT_MAX_BYTES: Final = 50 * 1024 * 1024
DEFAULT_MAX_RATIO: Final = 100
MAX_PATH_DEPTH: Final = 64
"""Most path components an entry may have, its top folder included: a package of any depth
would make every tree walk over it (clean-ups, scans, sandboxes) a recursion an attacker
sizes."""
# Small text files legitimately compress far beyond any sane bomb ratio, and a small entry
# cannot hurt anyway: only entries larger than this are held to `max_ratio`.
RATIO_CHECK_FLOOR: Final = 64 * 1024

# The earliest time a ZIP header can hold; any fixed value makes builds reproducible.
_FIXED_DATE_TIME: Final = (1980, 1, 1, 0, 0, 0)
_COMPRESS_LEVEL: Final = 9
_CHUNK_SIZE: Final = 64 * 1024
_FILE_MODE: Final = 0o644
_EXECUTABLE_MODE: Final = 0o755
_CREATE_SYSTEM_UNIX: Final = 3
_MSDOS_DIRECTORY: Final = 0x10
_FLAG_ENCRYPTED: Final = 0x1
# bzip2 and lzma are left out on purpose: zipfile decompresses them without an output bound,
# so one small compressed chunk could expand to gigabytes in memory before any count applies.
_SAFE_METHODS: Final = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_DRIVE: Final = re.compile(r"[A-Za-z]:")
_CORRUPT_ERRORS: Final = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)


@dataclass(frozen=True)
class PackageLimits:
    """How much one package may hold; building and extracting refuse anything over these.

    Attributes:
        max_files: Most entries (files and folders) an archive may list.
        max_bytes: Most bytes all entries together may hold once uncompressed.
        max_ratio: Highest uncompressed/compressed size ratio of one entry, checked only for
            entries larger than `RATIO_CHECK_FLOOR`.
    """

    max_files: int = DEFAULT_MAX_FILES
    max_bytes: int = DEFAULT_MAX_BYTES
    max_ratio: int = DEFAULT_MAX_RATIO

    def __post_init__(self) -> None:
        for name in ("max_files", "max_bytes", "max_ratio"):
            if getattr(self, name) < 1:
                raise ValueError(f"PackageLimits.{name} must be at least 1")


DEFAULT_LIMITS: Final = PackageLimits()


def build_package(
    skill_dir: Path,
    *,
    limits: PackageLimits = DEFAULT_LIMITS,
    include_children: bool = True,
    top: str | None = None,
) -> bytes:
    """Build the ZIP package of a skill folder, child skills included unless told otherwise.

    Entries are sorted and live under a top-level folder named after `skill_dir`
    (``<name>/SKILL.md``, ``<name>/scripts/run.py``...). Timestamps are fixed and modes reduced
    to 0o755 / 0o644, so the same files always give the same bytes.

    Args:
        skill_dir: The skill folder; it must hold a SKILL.md.
        limits: The package must fit these, so that `extract_package` will accept it.
        include_children: False packs the skill's own files only: exactly the files its
            version hashes, which is what a sandbox receives.
        top: The archive's top-level folder (default: `skill_dir`'s name), e.g. the skill's
            name when its folder is named otherwise (a repository's root).

    Returns:
        The ZIP archive's bytes.

    Raises:
        PackageError: `skill_dir` is not a skill folder, holds no files, a file cannot be read,
            or the package would exceed `limits`.
    """
    root = skill_dir.resolve()
    if not root.is_dir():
        raise PackageError(f"{skill_dir}: not a folder")
    files = sorted(
        iter_package_files(root, include_children=include_children), key=lambda item: item[0]
    )
    if not files:
        raise PackageError(f"{skill_dir}: the folder has no files to package")
    if not any(relative == SKILL_FILE for relative, _ in files):
        raise PackageError(f"{skill_dir}: no {SKILL_FILE}; only a skill folder can be packaged")
    if len(files) > limits.max_files:
        raise PackageError(
            f"{skill_dir}: {len(files)} files, over the {limits.max_files}-file package limit"
        )

    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w") as archive:
        for relative, entry in files:
            if relative.count("/") + 2 > MAX_PATH_DEPTH:  # the top folder, then its path
                raise PackageError(
                    f"{skill_dir}: {relative[:80]}… is nested more than {MAX_PATH_DEPTH}"
                    " folders deep, over the package limit"
                )
            try:
                # Check the size before reading so a huge file fails fast, not after filling RAM.
                info_stat = entry.stat(follow_symlinks=False)
                if total + info_stat.st_size > limits.max_bytes:
                    raise PackageError(
                        f"{skill_dir}: more than {limits.max_bytes} bytes, over the package limit"
                        f" (at {relative})"
                    )
                data = Path(entry.path).read_bytes()
            except OSError as exc:
                raise PackageError(f"{skill_dir}: cannot read {relative}: {exc}") from exc
            total += len(data)
            if total > limits.max_bytes:
                raise PackageError(
                    f"{skill_dir}: more than {limits.max_bytes} bytes, over the package limit"
                    f" (at {relative})"
                )
            info = zipfile.ZipInfo(f"{top or root.name}/{relative}", date_time=_FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = _CREATE_SYSTEM_UNIX
            info.external_attr = (stat.S_IFREG | _normalized_mode(info_stat.st_mode)) << 16
            archive.writestr(info, data, compresslevel=_COMPRESS_LEVEL)
            if _ratio_too_high(info, limits):
                raise PackageError(
                    f"{skill_dir}: {relative} compresses {_ratio(info)}:1, over the"
                    f" {limits.max_ratio}:1 limit uploads are held to"
                )
    return buffer.getvalue()


def write_package(skill_dir: Path, dest: Path, *, limits: PackageLimits = DEFAULT_LIMITS) -> Path:
    """Build the package of `skill_dir` and write it to `dest` atomically.

    The archive goes to a temporary file beside `dest` first and is renamed over it, so a
    reader never sees a half-written package.

    Args:
        skill_dir: The skill folder; it must hold a SKILL.md.
        dest: Where the ZIP goes; its parent folders are created if missing.
        limits: Passed to `build_package`.

    Returns:
        `dest`.

    Raises:
        PackageError: The package cannot be built or written.
    """
    data = build_package(skill_dir, limits=limits)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(dest, data, mode=_FILE_MODE)  # a package is shared, not a secret
    except OSError as exc:
        raise PackageError(f"cannot write package {dest}: {exc}") from exc
    return dest


def extract_package(
    source: Path | bytes,
    dest: Path,
    *,
    limits: PackageLimits = DEFAULT_LIMITS,
    skill_only: bool = False,
) -> list[Path]:
    """Extract a skill package into `dest`, refusing anything unsafe before writing a byte.

    Every entry is checked first: no absolute paths or '..', no symlinks or special files, no
    duplicates (case-insensitively), no encryption, nothing over `limits`, no existing file
    overwritten. While writing, decompressed bytes are counted rather than trusted from the
    headers; if anything fails half-way, the files and folders written so far are removed.

    Args:
        source: Path of the ZIP file, or its bytes.
        dest: Folder to extract into; created if missing. Existing folders may be reused, but
            no existing file is ever overwritten.
        limits: What the package may hold (the whole archive, also with `skill_only`).
        skill_only: Extract only the top-most skill folder's contents, straight into `dest`
            (its path in the archive dropped; what lies outside it is checked, not written).
            A package with several skills at its top is refused.

    Returns:
        Every extracted folder that holds a SKILL.md (`dest` itself included if the archive has
        one at its root, or with `skill_only`), top-most first: sorted by depth, then by path.

    Raises:
        UnsafePackageError: An entry is unsafe; `entry` names it and `reason` says why.
        PackageError: `source` is not a readable ZIP archive, holds no SKILL.md (or, with
            `skill_only`, several at its top), a target file already exists, or writing failed.
    """
    with _open_archive(source) as archive:
        entries = _validate(archive.infolist(), limits)
        skill_folders = sorted(
            {
                entry.parts[:-1]
                for entry in entries
                if not entry.is_dir and entry.parts[-1] == SKILL_FILE
            },
            key=lambda parts: (len(parts), parts),
        )
        if not skill_folders:
            raise PackageError(f"no {SKILL_FILE} in package")
        if skill_only:
            entries, skill_folders = _top_skill(entries, skill_folders)
        _check_targets(dest, entries)
        _write_entries(archive, entries, dest, limits=limits)
    return [dest.joinpath(*parts) for parts in skill_folders]


def _top_skill(
    entries: list[_Entry], skill_folders: list[tuple[str, ...]]
) -> tuple[list[_Entry], list[tuple[str, ...]]]:
    """The entries and skill folders under the one top-most skill folder, that folder's path
    dropped from theirs (`extract_package`'s ``skill_only``)."""
    top = skill_folders[0]
    depth = len(top)
    if len(skill_folders) > 1 and len(skill_folders[1]) == depth:
        raise PackageError(
            f"several skills at its top ({skill_folders[0][-1]!r}, {skill_folders[1][-1]!r});"
            " send one skill's package"
        )
    inside = [
        replace(entry, parts=entry.parts[depth:])
        for entry in entries
        if entry.parts[:depth] == top and len(entry.parts) > depth
    ]
    return inside, [folder[depth:] for folder in skill_folders if folder[:depth] == top]


@dataclass(frozen=True)
class _Entry:
    """One validated archive entry: its name as listed and the path parts it extracts to."""

    info: zipfile.ZipInfo
    name: str
    parts: tuple[str, ...]
    is_dir: bool
    executable: bool


def archive_version(data: bytes, *, limits: PackageLimits = DEFAULT_LIMITS) -> tuple[str, str]:
    """A package ZIP's top folder and version, read in memory with `extract_package`'s checks:
    the digest (``versioning.contents_version``) of every file under the one top folder,
    exactly as stored. The manager checks each package it runs against the version it is
    stored under, so a changed byte, an added or a removed file never runs.

    Raises:
        UnsafePackageError, PackageError: unreadable, unsafe, over `limits`, or not one top
            folder.
    """
    with _open_archive(data) as archive:
        entries = _validate(archive.infolist(), limits)
        files: list[tuple[str, bytes]] = []
        tops: set[str] = set()
        total = 0
        for entry in entries:
            if entry.is_dir:
                continue
            if len(entry.parts) < 2:
                raise PackageError(f"{entry.name}: a package's files are under one top folder")
            tops.add(entry.parts[0])
            with archive.open(entry.info) as member:
                content = member.read(limits.max_bytes - total + 1)
            total += len(content)
            if total > limits.max_bytes:
                raise UnsafePackageError(
                    entry.name, f"package holds more than {limits.max_bytes} bytes uncompressed"
                )
            files.append(("/".join(entry.parts[1:]), content))
    if len(tops) != 1:
        raise PackageError(f"a package has one top folder, not {len(tops)}")
    files.sort()
    return tops.pop(), contents_version(files)


def package_file(
    data: bytes, path: str, *, max_bytes: int, limits: PackageLimits = DEFAULT_LIMITS
) -> bytes | None:
    """The bytes of the file `path` (relative to the one top folder) in a package ZIP, read in
    memory with `extract_package`'s checks; None when the package holds no such file.

    Raises:
        UnsafePackageError, PackageError: the package is unreadable, unsafe or over `limits`.
        ResourceTooLargeError: the file is larger than `max_bytes`.
    """
    wanted = tuple(path.split("/"))
    with _open_archive(data) as archive:
        for entry in _validate(archive.infolist(), limits):
            if entry.is_dir or entry.parts[1:] != wanted:
                continue
            with archive.open(entry.info) as member:
                content = member.read(max_bytes + 1)
            if len(content) > max_bytes:
                size = max(len(content), entry.info.file_size)
                raise ResourceTooLargeError(entry.parts[0], path, size=size, limit=max_bytes)
            return content
    return None


def _normalized_mode(mode: int) -> int:
    """0o755 if any execute bit is set, else 0o644: no setuid, sticky or odd permissions."""
    return _EXECUTABLE_MODE if mode & 0o111 else _FILE_MODE


def _ratio(info: zipfile.ZipInfo) -> int:
    return info.file_size // max(info.compress_size, 1)


def _ratio_too_high(info: zipfile.ZipInfo, limits: PackageLimits) -> bool:
    if info.file_size <= RATIO_CHECK_FLOOR:
        return False
    return info.compress_size <= 0 or info.file_size > limits.max_ratio * info.compress_size


@contextmanager
def _open_archive(source: Path | bytes) -> Iterator[zipfile.ZipFile]:
    if isinstance(source, bytes | bytearray | memoryview):
        label = "package"
        file: Path | IO[bytes] = io.BytesIO(source)
    else:
        label = str(source)
        file = Path(source)
        if not file.is_file():
            raise PackageError(f"{label}: no such package file")
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
        raise PackageError(f"{label}: not a ZIP archive ({exc})") from exc
    with archive:
        yield archive


def _check_entry(info: zipfile.ZipInfo, limits: PackageLimits) -> _Entry:
    """Refuse one entry that is unsafe on its own, whatever the rest of the archive holds."""
    # orig_filename is the name as stored; ZipInfo.filename silently cuts it at a NUL byte.
    raw = info.orig_filename
    if not raw:
        raise UnsafePackageError(raw, "empty name")
    if "\x00" in raw:
        raise UnsafePackageError(raw, "NUL byte in name")
    # Windows tools write backslashes and Windows extraction honours them, so they separate too.
    name = raw.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        raise UnsafePackageError(raw, "absolute path")
    components = name.split("/")
    if ".." in components:
        raise UnsafePackageError(raw, "path traversal ('..')")
    parts = tuple(part for part in components if part not in {"", "."})
    if not parts:
        raise UnsafePackageError(raw, "empty name")
    if len(parts) > MAX_PATH_DEPTH:
        raise UnsafePackageError(raw, f"nested more than {MAX_PATH_DEPTH} folders deep")

    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise UnsafePackageError(raw, "symbolic link")
    if kind not in {0, stat.S_IFREG, stat.S_IFDIR}:
        raise UnsafePackageError(raw, "not a regular file or folder")
    # Archives made on Windows carry no unix mode; the MS-DOS attribute marks their folders.
    is_dir = (
        name.endswith("/")
        or kind == stat.S_IFDIR
        or (kind == 0 and bool(info.external_attr & _MSDOS_DIRECTORY))
    )
    if not is_dir:
        if info.flag_bits & _FLAG_ENCRYPTED:
            raise UnsafePackageError(raw, "encrypted entry")
        if info.compress_type not in _SAFE_METHODS:
            raise UnsafePackageError(raw, "unsupported compression method")
        if _ratio_too_high(info, limits):
            raise UnsafePackageError(
                raw,
                f"compression ratio {_ratio(info)}:1 is over the {limits.max_ratio}:1 limit",
            )
    return _Entry(info, raw, parts, is_dir, executable=bool(mode & 0o111))


def _folded(parts: Sequence[str]) -> str:
    """The key two paths collide on, on case-insensitive or normalizing file systems."""
    return unicodedata.normalize("NFC", "/".join(parts)).casefold()


def _validate(infos: list[zipfile.ZipInfo], limits: PackageLimits) -> list[_Entry]:
    """Check the whole archive before anything is written; return its entries in order."""
    if len(infos) > limits.max_files:
        raise UnsafePackageError(
            infos[limits.max_files].orig_filename,
            f"more than {limits.max_files} entries in the package",
        )
    entries: list[_Entry] = []
    file_keys: set[str] = set()
    dir_keys: set[str] = set()
    declared_total = 0
    for info in infos:
        entry = _check_entry(info, limits)
        if not entry.is_dir:
            declared_total += info.file_size
            if declared_total > limits.max_bytes:
                raise UnsafePackageError(
                    entry.name,
                    f"package holds more than {limits.max_bytes} bytes uncompressed",
                )
        key = _folded(entry.parts)
        if not entry.is_dir and key in file_keys:
            raise UnsafePackageError(entry.name, "duplicate entry")
        if (entry.is_dir and key in file_keys) or (not entry.is_dir and key in dir_keys):
            raise UnsafePackageError(entry.name, "a file and a folder share this name")
        parents = {_folded(entry.parts[:depth]) for depth in range(1, len(entry.parts))}
        if parents & file_keys:
            raise UnsafePackageError(entry.name, "a file and a folder share this name")
        dir_keys |= parents
        (dir_keys if entry.is_dir else file_keys).add(key)
        entries.append(entry)
    return entries


def _check_targets(dest: Path, entries: list[_Entry]) -> None:
    """Refuse to overwrite a file or to write through anything in `dest` that is not a folder."""
    hint = "extract into an empty or new folder"
    for entry in entries:
        path = dest
        for depth, part in enumerate(entry.parts, start=1):
            path = path / part
            if not os.path.lexists(path):
                break
            if depth == len(entry.parts) and not entry.is_dir:
                raise PackageError(f"{path} already exists; {hint}")
            # A symlink here would send the extracted files outside `dest`.
            if path.is_symlink() or not path.is_dir():
                raise PackageError(f"{path} already exists and is not a folder; {hint}")


def _make_dirs(path: Path, created: list[Path]) -> None:
    """Like ``mkdir(parents=True)``, but records each folder it creates for the rollback."""
    missing: list[Path] = []
    while not os.path.lexists(path):
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir()
        created.append(folder)


def _copy_entry(
    source: IO[bytes], target: IO[bytes], *, entry: str, declared: int, budget: int
) -> int:
    """Copy one entry's data, counting real bytes: a header's sizes are claims, not facts.

    Returns:
        The number of bytes copied.

    Raises:
        UnsafePackageError: More data than `declared` or than `budget` came out.
    """
    copied = 0
    while chunk := source.read(_CHUNK_SIZE):
        copied += len(chunk)
        if copied > declared:
            raise UnsafePackageError(entry, "holds more data than its header declares")
        if copied > budget:
            raise UnsafePackageError(entry, "package holds more bytes uncompressed than allowed")
        target.write(chunk)
    return copied


def _write_file(
    archive: zipfile.ZipFile, entry: _Entry, target: Path, *, budget: int, created: list[Path]
) -> int:
    mode = _EXECUTABLE_MODE if entry.executable else _FILE_MODE
    # O_EXCL: never replace a file (or follow a symlink) that appeared since the checks.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(target, flags, mode)
    # Recorded before writing: a failure mid-file must remove the partial file too.
    created.append(target)
    with os.fdopen(fd, "wb") as out:
        try:
            with archive.open(entry.info) as data:
                copied = _copy_entry(
                    data, out, entry=entry.name, declared=entry.info.file_size, budget=budget
                )
        except _CORRUPT_ERRORS as exc:
            raise UnsafePackageError(
                entry.name, f"data is corrupt or does not match its header ({exc})"
            ) from exc
    # The umask must not change the modes the package promises.
    os.chmod(target, mode)
    return copied


def _write_entries(
    archive: zipfile.ZipFile, entries: list[_Entry], dest: Path, *, limits: PackageLimits
) -> None:
    created_files: list[Path] = []
    created_dirs: list[Path] = []
    try:
        _make_dirs(dest, created_dirs)
        written = 0
        for entry in entries:
            target = dest.joinpath(*entry.parts)
            if entry.is_dir:
                _make_dirs(target, created_dirs)
                continue
            _make_dirs(target.parent, created_dirs)
            written += _write_file(
                archive, entry, target, budget=limits.max_bytes - written, created=created_files
            )
    except BaseException as exc:
        _remove(created_files, created_dirs)
        if isinstance(exc, OSError):
            raise PackageError(f"cannot extract package into {dest}: {exc}") from exc
        raise


def _remove(files: list[Path], dirs: list[Path]) -> None:
    for file in reversed(files):
        with suppress(OSError):
            file.unlink(missing_ok=True)
    for folder in reversed(dirs):
        with suppress(OSError):
            folder.rmdir()
