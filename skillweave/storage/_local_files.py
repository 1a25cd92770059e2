"""Where the local store keeps a key's files, and what an OS error on them reads as: the data
file under the root, its sidecar under ``.meta``, the reserved names, every path checked to
stay under the root. Shared by :class:`~skillweave.storage.local.LocalArtifactStore` and its
sidecars (:mod:`skillweave.storage._local_sidecars`)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

from skillweave.errors import InvalidKeyError, StorageError
from skillweave.storage._integrity import CHUNK_SIZE
from skillweave.storage.keys import validate_key

__all__ = [
    "DEFAULT_CONTENT_TYPE",
    "LOG_PREFIX",
    "META_DIR",
    "MISSING_ERRNOS",
    "TEMP_PREFIX",
    "LocalPaths",
    "chunks_from",
    "make_parent",
    "os_errors",
    "storage_error",
]

META_DIR: Final = ".meta"
TEMP_PREFIX: Final = ".sw-tmp-"
LOG_PREFIX: Final = ".sw-log-"
"""The file name prefix of a record log (``_local_record_logs``): never a key's name."""
_RESERVED_PREFIXES: Final = (TEMP_PREFIX, LOG_PREFIX)
DEFAULT_CONTENT_TYPE: Final = "application/octet-stream"
MISSING_ERRNOS: Final = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)
"""What opening or stating a key's file fails with when nothing is stored there."""


class LocalPaths:
    """The paths of keys under one (resolved) root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Every write resolves two paths: in strings, the same check costs a third of pathlib's.
        self._root = str(root)
        self._under = os.path.join(self._root, "")

    def inside(self, key: str, path: Path | str) -> Path:
        """`path` resolved, when it stays under the root (else :class:`InvalidKeyError`)."""
        return self._checked(key, os.path.realpath(path))

    def data(self, key: str) -> Path:
        """The data file of `key` (a valid key, not a reserved name)."""
        return self._checked(key, self._beneath(_parts(key)))

    def log(self, name: str) -> Path:
        """The file of the record log `name` (``runs/r1/transcript``: a valid key, not a
        reserved name, in a folder): ``runs/r1/.sw-log-transcript``."""
        *folder, last = _parts(name)
        if not folder:
            raise InvalidKeyError(name, "a log lives in a folder: folder/name")
        return self._checked(name, self._beneath([*folder, LOG_PREFIX + last]))

    def meta(self, key: str) -> Path:
        """The sidecar of `key`: the same name under ``.meta``."""
        return self._checked(key, self._beneath([META_DIR, *key.split("/")]))

    def _checked(self, key: str, resolved: str) -> Path:
        if not resolved.startswith(self._under):
            raise InvalidKeyError(key, "the key resolves outside the store's root")
        return Path(resolved)

    def _beneath(self, parts: list[str]) -> str:
        """``os.path.realpath`` of the root joined with `parts`, looking only at the parts
        (the root is resolved already): a symlink among them is resolved in full and then
        checked like any path. Every write resolves two paths; this saves the lstat of each
        of the root's own folders."""
        if any(part in ("", ".", "..") for part in parts):
            return os.path.realpath(os.path.join(self._root, *parts))
        current = self._root
        for n, part in enumerate(parts):
            current = os.path.join(current, part)
            try:
                mode = os.lstat(current).st_mode
            except OSError:  # nothing there (yet): the rest stands as written, as realpath has it
                return os.path.join(current, *parts[n + 1 :])
            if stat.S_ISLNK(mode):
                return os.path.realpath(os.path.join(current, *parts[n + 1 :]))
        return current

    def keys_under(self, start: Path) -> Iterator[str]:
        """The keys of the data files under the folder `start`: sidecars and writes in
        progress are not keys."""
        for folder, dirs, files in os.walk(start):
            here = Path(folder)
            if here == self.root:
                dirs[:] = [d for d in dirs if d != META_DIR]
            dirs[:] = [d for d in dirs if not d.startswith(TEMP_PREFIX)]
            for name in files:
                if not name.startswith(_RESERVED_PREFIXES):
                    yield (here / name).relative_to(self.root).as_posix()


def _parts(key: str) -> list[str]:
    """The names in `key`, a valid key that uses no name the local store reserves."""
    parts = validate_key(key).split("/")
    if parts[0] == META_DIR:
        raise InvalidKeyError(key, f"{META_DIR!r} is reserved by the local store")
    if any(part.startswith(_RESERVED_PREFIXES) for part in parts):
        raise InvalidKeyError(key, f"names starting {TEMP_PREFIX!r} or {LOG_PREFIX!r} are reserved")
    return parts


def chunks_from(handle: BinaryIO) -> Iterator[bytes]:
    """The rest of `handle` in chunks of up to 1 MiB."""
    while chunk := handle.read(CHUNK_SIZE):
        yield chunk


def make_parent(key: str, path: Path) -> None:
    """Create the folder `path` goes in; a stored artifact in the way is a ``KeyConflict``."""
    if os.path.isdir(path.parent):
        return  # the common case, and one stat where mkdir's refusal costs three calls
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StorageError(
            f"cannot store {key!r}: a parent of it is already stored as an artifact",
            key=key,
            code="KeyConflict",
        ) from None


def storage_error(op: str, key: str, exc: OSError) -> StorageError:
    """The ``StorageError`` for `exc`, met doing `op` on `key` (its code the errno's name)."""
    code = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    return StorageError(
        f"local store: cannot {op} {key!r}: {exc.strerror or exc}", key=key, code=code
    )


@contextlib.contextmanager
def os_errors(op: str, key: str) -> Iterator[None]:
    """Turn unexpected OS errors into ``StorageError`` (our own errors pass through)."""
    try:
        yield
    except OSError as exc:
        raise storage_error(op, key, exc) from exc
