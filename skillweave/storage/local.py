"""The local-directory artifact store: the embedded default and the fake beside S3.

Layout under `root`::

    {key}                   the bytes, exactly (``runs/r1/inputs/a.csv`` is a plain file)
    .meta/{key}             a small JSON sidecar: sha256, size, content type, data fingerprint
    …/.sw-tmp-{uuid}        a write in progress (or one a crash interrupted); never listed
    {folder}/.sw-log-{name} the record log ``{folder}/{name}`` (``runs/r1/transcript``): many
                            small records appended to one file; never listed, never a key

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
* Durable before the write returns, except inside
  :func:`~skillweave.storage._local_write_behind.deferred_durability`: there the file is
  published the same way and made durable soon after by a background thread, and the caller
  awaits :meth:`WriteBehind.flush` before it tells anyone the data is safe (the direct engine's
  transcript, whose run tells its end only then).
* The sidecar tree mirrors the data tree name for name (no ``.json`` suffix), so two keys can
  collide in ``.meta`` only where their data files would collide too.

Keys are validated by :mod:`skillweave.storage.keys`; the top-level ``.meta`` and names starting
with ``.sw-tmp-`` or ``.sw-log-`` are reserved. Record logs (``append_records``, ``read_record``:
:mod:`~skillweave.storage._local_record_logs` has their format and why they are safe) hold a
run's transcript: a record appended, not a file made. Every path is resolved and checked to
stay under `root`, so a symlink planted in the tree cannot lead a key outside it. Blocking I/O
runs in worker threads.

The store writes, reads, lists and deletes; beside it live the paths of a key and OS error
mapping (:mod:`~skillweave.storage._local_files`), the sidecars (``_local_sidecars``) and
publishing before the sidecar (``_local_publishing``).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import os
import stat as stat_module
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, Final

from skillweave.atomic_write import atomic_file
from skillweave.errors import ArtifactNotFoundError, InvalidKeyError, StorageError
from skillweave.storage._integrity import CHUNK_SIZE, Digest, check_size
from skillweave.storage._local_files import (
    DEFAULT_CONTENT_TYPE,
    META_DIR,
    MISSING_ERRNOS,
    TEMP_PREFIX,
    LocalPaths,
    chunks_from,
    make_parent,
    os_errors,
    storage_error,
)
from skillweave.storage._local_publishing import Publisher
from skillweave.storage._local_record_logs import RecordLogs
from skillweave.storage._local_sidecars import NeedsHashing, Sidecars, fingerprint
from skillweave.storage._local_write_behind import DEFERRED, WriteBehind, deferred_durability
from skillweave.storage.base import ArtifactRef
from skillweave.storage.keys import validate_prefix

__all__ = ["LocalArtifactStore", "WriteBehind", "deferred_durability"]

_log = logging.getLogger(__name__)

INLINE_MAX_BYTES: Final = 64 * 1024
"""The largest write-behind write made on the event loop rather than in a thread."""


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
        self._paths = LocalPaths(self._root)
        self._sidecars = Sidecars(self._paths)
        self._publisher = Publisher()
        self._logs = RecordLogs(self._paths, fsync=fsync)

    @property
    def root(self) -> Path:
        """The (resolved) directory the store lives in."""
        return self._root

    def __repr__(self) -> str:
        return f"LocalArtifactStore(root={str(self._root)!r})"

    async def aclose(self) -> None:
        """Wait for the sidecars still being written."""
        await self._publisher.sidecars_of(lambda _: True)

    # -- the ArtifactStore protocol ------------------------------------------------------------

    async def put_bytes(
        self, key: str, data: bytes, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store `data` under `key` (replacing it) and return its ref.

        A small write handed to a write-behind (:func:`deferred_durability`) is made on the
        event loop: with no fsync to wait for, it costs less than the hop to a thread.
        """
        if len(data) <= INLINE_MAX_BYTES and self._fsync and DEFERRED.get() is not None:
            await self._publisher.sidecars_of(lambda pending: pending == key)  # older ones first
            ref = self._write(key, _chunks_of(data), content_type, exclusive=False)
            assert ref is not None
            return ref
        write = functools.partial(self._write, key, _chunks_of(data), content_type, exclusive=False)
        ref = await self._publisher.published(key, write)
        assert ref is not None
        return ref

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef | None:
        """Store `data` only if `key` does not exist (atomic across processes); else None."""
        write = functools.partial(self._write, key, _chunks_of(data), content_type, exclusive=True)
        return await self._publisher.published(key, write)

    async def put_file(
        self, key: str, path: str, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store the file at `path`, streamed in 1 MiB chunks, and return its ref."""
        ref = await self._publisher.published(
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
        await self._publisher.sidecars_of(lambda pending: pending == key)
        known = self._sidecars.known(key)
        if isinstance(known, NeedsHashing):
            return await asyncio.to_thread(self._sidecars.stat, key)
        return known

    async def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of every key starting with `prefix` (a plain string prefix), sorted by key."""
        await self._publisher.sidecars_of(lambda pending: pending.startswith(prefix))
        return await asyncio.to_thread(self._list, prefix)

    async def delete(self, key: str) -> None:
        """Remove `key` and its sidecar; nothing happens when it does not exist."""
        await self._publisher.sidecars_of(lambda pending: pending == key)
        await asyncio.to_thread(self._delete, key)

    # -- record logs (skillweave.storage.base.RecordLogStore) ------------------------------------

    async def append_record(self, log: str, seq: int, data: bytes) -> None:
        """:meth:`append_records` of the one record `seq` (`data`)."""
        await self.append_records(log, ((seq, data),))

    async def append_records(self, log: str, records: Sequence[tuple[int, bytes]]) -> None:
        """Append `records` (seq and data each, in order) to the record log `log`
        (``runs/r1/transcript``) in one write: on disk when this returns, unless inside
        :func:`deferred_durability`. The newest record of a seq is the one
        :meth:`read_record` answers."""
        behind = DEFERRED.get() if self._fsync else None
        if behind is not None and sum(len(data) for _, data in records) <= INLINE_MAX_BYTES:
            self._logs.append(log, records, behind=behind)  # no fsync: cheaper than a hop
            return
        await asyncio.to_thread(self._logs.append, log, records, behind=behind)

    async def read_record(self, log: str, seq: int) -> bytes | None:
        """The newest record `seq` of the log `log`, verified; None when it has none."""
        return await asyncio.to_thread(self._logs.read, log, seq)

    def log_path(self, log: str) -> Path:
        """The file of the record log `log` (``runs/r1/transcript`` is
        ``runs/r1/.sw-log-transcript`` under the root)."""
        return self._logs.path(log)

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
        target = self._paths.data(key)
        # Inside `deferred_durability` (the direct engine's transcript) the file is made durable
        # by the write-behind's thread, before its run tells its end; not here.
        behind = DEFERRED.get() if self._fsync else None
        with os_errors("write", key):
            make_parent(key, target)
            digest = Digest()
            try:
                with atomic_file(
                    target,
                    exclusive=exclusive,
                    durable=self._fsync and behind is None,
                    prefix=TEMP_PREFIX,
                ) as out:
                    for chunk in chunks:
                        digest.update(chunk)
                        out.write(chunk)
                    out.flush()
                    data_fingerprint = fingerprint(os.fstat(out.fileno()))
            except FileExistsError:
                if target.is_dir():
                    raise _is_a_directory(key) from None
                if not exclusive:
                    raise
                return None
            except IsADirectoryError:
                raise _is_a_directory(key) from None
            if behind is not None:
                behind.add(target)
            ref = digest.ref(key, content_type)
            if on_published is not None:
                on_published(ref)
            try:
                self._sidecars.write(key, ref, data_fingerprint)
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
            ref = self._write(key, chunks_from(handle), content_type, on_published, exclusive=False)
        assert ref is not None
        return ref

    # -- reading -------------------------------------------------------------------------------

    def _open_for_read(self, ref: ArtifactRef) -> BinaryIO:
        """Open the data file of `ref`, failing fast when it is missing or the size is wrong."""
        path = self._paths.data(ref.key)
        try:
            handle = open(path, "rb")  # noqa: SIM115 - the caller closes it
        except OSError as exc:
            if exc.errno in MISSING_ERRNOS:
                raise ArtifactNotFoundError(ref.key) from None
            raise storage_error("read", ref.key, exc) from exc
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
        with self._open_for_read(ref) as handle, os_errors("read", ref.key):
            data = handle.read()
        digest = Digest()
        digest.update(data)
        digest.verify(ref)
        return data

    def _get_file(self, ref: ArtifactRef, dest: Path) -> None:
        with self._open_for_read(ref) as handle, os_errors("read", ref.key):
            dest.parent.mkdir(parents=True, exist_ok=True)
            # A download can be fetched again: atomic (never a part at `dest`), not fsynced.
            with atomic_file(dest, durable=False) as out:
                digest = Digest()
                for chunk in chunks_from(handle):
                    digest.update(chunk)
                    out.write(chunk)
                digest.verify(ref)

    def _list(self, prefix: str) -> list[ArtifactRef]:
        validate_prefix(prefix)
        head, _, _ = prefix.rpartition("/")
        if head.split("/")[0] == META_DIR:
            return []
        start = self._root.joinpath(*head.split("/")) if head else self._root
        if not start.resolve().is_relative_to(self._root):
            raise InvalidKeyError(prefix, "the prefix resolves outside the store's root")
        refs: list[ArtifactRef] = []
        with os_errors("list", prefix):
            for key in sorted(self._paths.keys_under(start)):
                if not key.startswith(prefix):
                    continue
                try:
                    ref = self._sidecars.stat(key)
                except InvalidKeyError:
                    continue  # e.g. a symlink planted in the tree that points outside it
                if ref is not None:
                    refs.append(ref)
        return refs

    # -- deleting ------------------------------------------------------------------------------

    def _delete(self, key: str) -> None:
        path = self._paths.data(key)
        meta = self._paths.meta(key)
        with os_errors("delete", key):
            for victim in (path, meta):  # data first: a reader in between sees "missing"
                try:
                    os.unlink(victim)
                except OSError as exc:
                    if exc.errno not in MISSING_ERRNOS:
                        raise


def _chunks_of(data: bytes) -> Iterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(view), CHUNK_SIZE):
        yield bytes(view[start : start + CHUNK_SIZE])


def _is_a_directory(key: str) -> StorageError:
    return StorageError(
        f"cannot store {key!r}: other artifacts are stored under it as a prefix",
        key=key,
        code="KeyConflict",
    )
