"""The local-directory artifact store: the embedded default and the fake beside S3.

Layout under `root`::

    {key}                   the bytes, exactly (``runs/r1/inputs/a.csv`` is a plain file)
    .meta/{key}             a small JSON sidecar: sha256, size, content type, data fingerprint
    …/.sw-tmp-{uuid}        a write in progress (or one a crash interrupted); never listed

How writes stay safe (the scheme, since several processes may share one root):

* Data first, atomically: bytes are streamed (and hashed) into a temp file in the target's own
  directory, fsynced, then ``os.replace``-d onto the key; readers see the old file or the new
  one, never a part. An interrupted write leaves only an invisible ``.sw-tmp-`` file.
* ``put_if_absent`` publishes the completed temp file with ``os.link``: creating a hard link
  fails with ``EEXIST`` when the name exists, and the kernel decides that atomically across
  threads and processes, so exactly one caller wins and the loser never touches the winner's
  bytes. (``O_CREAT | O_EXCL`` on the final name would also be atomic but would expose a
  half-written file to readers; linking a finished file does not.)
* The sidecar is written after the data (also temp + replace), once the caller already has
  its ref (the write returns as soon as its data is published), and records the data file's
  fingerprint (inode, size, mtime in ns). This store's own ``stat``, ``list`` and ``delete`` of
  a key wait for a sidecar still being written. The data file is the truth, the sidecar a cache:
  ``stat`` trusts the sidecar only when the fingerprint matches the file it finds; otherwise (a
  crash between the two renames, two writers racing, a sidecar left by a delete) it hashes the
  file itself, keeping the sidecar's content type as a best effort. Reads never need the sidecar:
  they verify the bytes against the caller's ref. (Writes through the store always publish a new
  inode; only a same-size edit in place, behind the store's back and within one mtime tick, could
  slip past ``stat`` — and still not past a read.)
* The sidecar tree mirrors the data tree name for name (no ``.json`` suffix), so two keys can
  collide in ``.meta`` only where their data files would collide too.

Keys are validated by :mod:`skillweave.storage.keys`; the top-level ``.meta`` and names starting
with ``.sw-tmp-`` are reserved. Every path is resolved and checked to stay under `root`, so a
symlink planted in the tree cannot lead a key outside it. Blocking I/O runs in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import functools
import json
import logging
import os
import stat as stat_module
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from skillweave.atomic_write import atomic_file
from skillweave.errors import ArtifactNotFoundError, InvalidKeyError, StorageError
from skillweave.storage._integrity import (
    CHUNK_SIZE,
    Digest,
    check_size,
)
from skillweave.storage.base import ArtifactRef
from skillweave.storage.keys import validate_key, validate_prefix

__all__ = ["LocalArtifactStore"]

META_DIR: Final = ".meta"
TEMP_PREFIX: Final = ".sw-tmp-"
_DEFAULT_CONTENT_TYPE: Final = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class _NeedsHashing:
    """A data file whose ref only hashing it can give (its sidecar is missing or stale)."""

    content_type: str


_MISSING_ERRNOS: Final = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)

_log = logging.getLogger(__name__)


def _settle(future: asyncio.Future[ArtifactRef], ref: ArtifactRef) -> None:
    if not future.done():
        future.set_result(ref)


class LocalArtifactStore:
    """Artifacts as files under `root` (see the module docstring for the on-disk scheme).

    Args:
        root: the store's directory; created on the first write.
        fsync: flush data files (and their directory) to disk before publishing them. On by
            default because results and transcripts must survive a crash; tests may turn it off.
    """

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self._root = Path(root).expanduser().resolve()
        self._fsync = fsync
        self._sidecars: dict[str, asyncio.Future[object]] = {}
        """Writes whose data is published and whose sidecar is still being written, by key."""

    @property
    def root(self) -> Path:
        """The (resolved) directory the store lives in."""
        return self._root

    def __repr__(self) -> str:
        return f"LocalArtifactStore(root={str(self._root)!r})"

    async def aclose(self) -> None:
        """Wait for the sidecars still being written."""
        await self._sidecars_of(lambda _: True)

    # -- the ArtifactStore protocol ------------------------------------------------------------

    async def put_bytes(
        self, key: str, data: bytes, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store `data` under `key` (replacing it) and return its ref."""
        write = functools.partial(self._write, key, _chunks_of(data), content_type, exclusive=False)
        ref = await self._published(key, write)
        assert ref is not None
        return ref

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef | None:
        """Store `data` only if `key` does not exist (atomic across processes); else None."""
        write = functools.partial(self._write, key, _chunks_of(data), content_type, exclusive=True)
        return await self._published(key, write)

    async def put_file(
        self, key: str, path: str, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store the file at `path`, streamed in 1 MiB chunks, and return its ref."""
        ref = await self._published(
            key, functools.partial(self._put_file, key, Path(path), content_type)
        )
        assert ref is not None
        return ref

    async def get_bytes(self, ref: ArtifactRef) -> bytes:
        """The bytes of `ref`, verified against its size and sha256."""
        return await asyncio.to_thread(self._get_bytes, ref)

    async def get_file(self, ref: ArtifactRef, path: str) -> None:
        """Write the bytes of `ref` to `path` (streamed, verified, then renamed into place)."""
        await asyncio.to_thread(self._get_file, ref, Path(path))

    async def stream(self, ref: ArtifactRef) -> AsyncIterator[bytes]:
        """The bytes of `ref` in chunks of up to 1 MiB; the hash is checked after the last one."""
        handle = await asyncio.to_thread(self._open_for_read, ref)
        try:
            digest = Digest()
            while chunk := await asyncio.to_thread(handle.read, CHUNK_SIZE):
                digest.update(chunk)
                yield chunk
            digest.verify(ref)
        finally:
            handle.close()

    async def stat(self, key: str) -> ArtifactRef | None:
        """The ref of what is stored under `key`, or None.

        Answered on the event loop when no data must be read for it (nothing there, or a
        sidecar that matches: a stat and a small read cost less than a hop to a thread); a
        data file whose sidecar is missing or stale is hashed in a thread.
        """
        await self._sidecars_of(lambda pending: pending == key)
        known = self._stat_known(key)
        if isinstance(known, _NeedsHashing):
            return await asyncio.to_thread(self._stat, key)
        return known

    async def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of every key starting with `prefix` (a plain string prefix), sorted by key."""
        await self._sidecars_of(lambda pending: pending.startswith(prefix))
        return await asyncio.to_thread(self._list, prefix)

    async def delete(self, key: str) -> None:
        """Remove `key` and its sidecar; nothing happens when it does not exist."""
        await self._sidecars_of(lambda pending: pending == key)
        await asyncio.to_thread(self._delete, key)

    # -- publishing before the sidecar ---------------------------------------------------------

    async def _published(
        self, key: str, write: Callable[[Callable[[ArtifactRef], None]], ArtifactRef | None]
    ) -> ArtifactRef | None:
        """Run `write` in a thread and return as soon as its data is published: it calls the
        function it is given with the ref then, and writes the sidecar after, while the caller
        goes on. Until the sidecar is written, this store's `stat`, `list` and `delete` of the
        key wait for it; another process may meanwhile find no sidecar, and hash the data.
        """
        loop = asyncio.get_running_loop()
        published: asyncio.Future[ArtifactRef] = loop.create_future()

        def tell(ref: ArtifactRef) -> None:
            loop.call_soon_threadsafe(_settle, published, ref)

        context = contextvars.copy_context()
        writing = loop.run_in_executor(None, context.run, write, tell)
        self._sidecars[key] = writing
        writing.add_done_callback(lambda done: self._forget(key, done))
        await asyncio.wait({published, writing}, return_when=asyncio.FIRST_COMPLETED)
        if published.done():
            return published.result()
        published.cancel()
        return writing.result()

    def _forget(self, key: str, done: asyncio.Future[object]) -> None:
        if self._sidecars.get(key) is done:
            del self._sidecars[key]
        if not done.cancelled():
            done.exception()  # raised to the writer already, or logged: not "never retrieved"

    async def _sidecars_of(self, wanted: Callable[[str], bool]) -> None:
        """Until the sidecars being written for the keys `wanted` picks are written."""
        pending = [future for key, future in self._sidecars.items() if wanted(key)]
        if pending:
            await asyncio.wait(pending)

    # -- paths ---------------------------------------------------------------------------------

    def _inside(self, key: str, path: Path) -> Path:
        resolved = path.resolve()
        if resolved == self._root or not resolved.is_relative_to(self._root):
            raise InvalidKeyError(key, "the key resolves outside the store's root")
        return resolved

    def _data_path(self, key: str) -> Path:
        parts = validate_key(key).split("/")
        if parts[0] == META_DIR:
            raise InvalidKeyError(key, f"{META_DIR!r} is reserved by the local store")
        if any(part.startswith(TEMP_PREFIX) for part in parts):
            raise InvalidKeyError(key, f"names starting {TEMP_PREFIX!r} are reserved")
        return self._inside(key, self._root.joinpath(*parts))

    def _meta_path(self, key: str) -> Path:
        return self._inside(key, self._root.joinpath(META_DIR, *key.split("/")))

    # -- writing -------------------------------------------------------------------------------

    def _write(
        self,
        key: str,
        chunks: Iterable[bytes],
        content_type: str,
        on_published: Callable[[ArtifactRef], None] | None = None,
        *,
        exclusive: bool,
    ) -> ArtifactRef | None:
        target = self._data_path(key)
        with _os_errors("write", key):
            _make_parent(key, target)
            digest = Digest()
            try:
                with atomic_file(
                    target, exclusive=exclusive, durable=self._fsync, prefix=TEMP_PREFIX
                ) as out:
                    for chunk in chunks:
                        digest.update(chunk)
                        out.write(chunk)
                    out.flush()
                    fingerprint = _fingerprint(os.fstat(out.fileno()))
            except FileExistsError:
                if target.is_dir():
                    raise _is_a_directory(key) from None
                if not exclusive:
                    raise
                return None
            except IsADirectoryError:
                raise _is_a_directory(key) from None
            ref = digest.ref(key, content_type)
            if on_published is not None:
                on_published(ref)
            try:
                self._write_meta(key, ref, fingerprint)
            except (OSError, StorageError) as exc:
                # The bytes are published (and a put_if_absent is won): failing now would make
                # the caller retry and lose to itself. Without a sidecar, stat hashes the data.
                _log.warning("local store: no sidecar for %r: %s", key, exc)
            return ref

    def _put_file(
        self,
        key: str,
        source: Path,
        content_type: str,
        on_published: Callable[[ArtifactRef], None] | None = None,
    ) -> ArtifactRef:
        try:
            handle = open(source, "rb")  # noqa: SIM115 - closed below, after the write
        except OSError as exc:
            raise StorageError(
                f"cannot read {str(source)!r} to store it as {key!r}: {exc.strerror}",
                key=key,
                code=errno.errorcode.get(exc.errno or 0),
            ) from exc
        with handle:
            ref = self._write(
                key, _chunks_from(handle), content_type, on_published, exclusive=False
            )
        assert ref is not None
        return ref

    def _write_meta(self, key: str, ref: ArtifactRef, fingerprint: list[int]) -> None:
        meta = self._meta_path(key)
        _make_parent(key, meta)
        record = {
            "sha256": ref.sha256,
            "size": ref.size,
            "content_type": ref.content_type,
            "fingerprint": fingerprint,
        }
        # Not fsynced: the sidecar is a cache checked against the data file's fingerprint; one
        # lost or torn in a crash is ignored and the data hashed again (_stat_known).
        with atomic_file(meta, durable=False, prefix=TEMP_PREFIX) as out:
            out.write(json.dumps(record).encode())

    # -- reading -------------------------------------------------------------------------------

    def _open_for_read(self, ref: ArtifactRef) -> BinaryIO:
        """Open the data file of `ref`, failing fast when it is missing or the size is wrong."""
        path = self._data_path(ref.key)
        try:
            handle = open(path, "rb")  # noqa: SIM115 - the caller closes it
        except OSError as exc:
            if exc.errno in _MISSING_ERRNOS:
                raise ArtifactNotFoundError(ref.key) from None
            raise _storage_error("read", ref.key, exc) from exc
        try:
            info = os.fstat(handle.fileno())
            if not stat_module.S_ISREG(info.st_mode):
                raise ArtifactNotFoundError(ref.key)
            check_size(ref, info.st_size)
        except BaseException:
            handle.close()
            raise
        return handle

    def _get_bytes(self, ref: ArtifactRef) -> bytes:
        with self._open_for_read(ref) as handle, _os_errors("read", ref.key):
            data = handle.read()
        digest = Digest()
        digest.update(data)
        digest.verify(ref)
        return data

    def _get_file(self, ref: ArtifactRef, dest: Path) -> None:
        with self._open_for_read(ref) as handle, _os_errors("read", ref.key):
            dest.parent.mkdir(parents=True, exist_ok=True)
            # A download can be fetched again: atomic (never a part at `dest`), not fsynced.
            with atomic_file(dest, durable=False) as out:
                digest = Digest()
                for chunk in _chunks_from(handle):
                    digest.update(chunk)
                    out.write(chunk)
                digest.verify(ref)

    def _stat(self, key: str) -> ArtifactRef | None:
        known = self._stat_known(key)
        if isinstance(known, _NeedsHashing):
            with _os_errors("stat", key):
                return self._hash_file(key, self._data_path(key), known.content_type)
        return known

    def _stat_known(self, key: str) -> ArtifactRef | _NeedsHashing | None:
        """`_stat` without reading the data: `_NeedsHashing` when it must be hashed."""
        path = self._data_path(key)
        with _os_errors("stat", key):
            try:
                info = os.stat(path)
            except OSError as exc:
                if exc.errno in _MISSING_ERRNOS:
                    return None
                raise
            if not stat_module.S_ISREG(info.st_mode):
                return None
            record = self._read_meta(key)
            content_type = _DEFAULT_CONTENT_TYPE
            if record is not None:
                content_type = str(record.get("content_type") or _DEFAULT_CONTENT_TYPE)
                if record.get("fingerprint") == _fingerprint(info):
                    try:
                        return ArtifactRef(
                            key=key,
                            size=record["size"],
                            sha256=record["sha256"],
                            content_type=content_type,
                        )
                    except (KeyError, ValueError):
                        pass  # a damaged sidecar: fall through and hash the data
            return _NeedsHashing(content_type)

    def _hash_file(self, key: str, path: Path, content_type: str) -> ArtifactRef | None:
        """The ref of the data file as it is now (the sidecar is missing or stale)."""
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            if exc.errno in _MISSING_ERRNOS:
                return None  # deleted meanwhile
            raise
        with handle:
            digest = Digest()
            for chunk in _chunks_from(handle):
                digest.update(chunk)
        return digest.ref(key, content_type)

    def _read_meta(self, key: str) -> dict[str, object] | None:
        try:
            record = json.loads(self._meta_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def _list(self, prefix: str) -> list[ArtifactRef]:
        validate_prefix(prefix)
        head, _, _ = prefix.rpartition("/")
        if head.split("/")[0] == META_DIR:
            return []
        start = self._root.joinpath(*head.split("/")) if head else self._root
        if not start.resolve().is_relative_to(self._root):
            raise InvalidKeyError(prefix, "the prefix resolves outside the store's root")
        refs: list[ArtifactRef] = []
        with _os_errors("list", prefix):
            for key in sorted(self._walk(start)):
                if not key.startswith(prefix):
                    continue
                try:
                    ref = self._stat(key)
                except InvalidKeyError:
                    continue  # e.g. a symlink planted in the tree that points outside it
                if ref is not None:
                    refs.append(ref)
        return refs

    def _walk(self, start: Path) -> Iterator[str]:
        for folder, dirs, files in os.walk(start):
            here = Path(folder)
            if here == self._root:
                dirs[:] = [d for d in dirs if d != META_DIR]
            dirs[:] = [d for d in dirs if not d.startswith(TEMP_PREFIX)]
            for name in files:
                if not name.startswith(TEMP_PREFIX):
                    yield (here / name).relative_to(self._root).as_posix()

    # -- deleting ------------------------------------------------------------------------------

    def _delete(self, key: str) -> None:
        path = self._data_path(key)
        meta = self._meta_path(key)
        with _os_errors("delete", key):
            for victim in (path, meta):  # data first: a reader in between sees "missing"
                try:
                    os.unlink(victim)
                except OSError as exc:
                    if exc.errno not in _MISSING_ERRNOS:
                        raise


def _chunks_of(data: bytes) -> Iterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(view), CHUNK_SIZE):
        yield bytes(view[start : start + CHUNK_SIZE])


def _chunks_from(handle: BinaryIO) -> Iterator[bytes]:
    while chunk := handle.read(CHUNK_SIZE):
        yield chunk


def _fingerprint(info: os.stat_result) -> list[int]:
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _make_parent(key: str, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StorageError(
            f"cannot store {key!r}: a parent of it is already stored as an artifact",
            key=key,
            code="KeyConflict",
        ) from None


def _is_a_directory(key: str) -> StorageError:
    return StorageError(
        f"cannot store {key!r}: other artifacts are stored under it as a prefix",
        key=key,
        code="KeyConflict",
    )


def _storage_error(op: str, key: str, exc: OSError) -> StorageError:
    code = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    return StorageError(
        f"local store: cannot {op} {key!r}: {exc.strerror or exc}", key=key, code=code
    )


@contextlib.contextmanager
def _os_errors(op: str, key: str) -> Iterator[None]:
    """Turn unexpected OS errors into ``StorageError`` (our own errors pass through)."""
    try:
        yield
    except OSError as exc:
        raise _storage_error(op, key, exc) from exc
