"""The local store's sidecars: a small JSON file per key (sha256, size, content type and the
data file's fingerprint) that answers ``stat`` without reading the data, trusted only while
the fingerprint matches; otherwise the data is hashed. Used by
:class:`~skillweave.storage.local.LocalArtifactStore` (its module docstring has the scheme)."""

from __future__ import annotations

import json
import os
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path

from skillweave.atomic_write import atomic_file
from skillweave.storage._integrity import Digest
from skillweave.storage._local_files import (
    DEFAULT_CONTENT_TYPE,
    MISSING_ERRNOS,
    TEMP_PREFIX,
    LocalPaths,
    chunks_from,
    make_parent,
    os_errors,
)
from skillweave.storage.base import ArtifactRef

__all__ = ["NeedsHashing", "Sidecars", "fingerprint"]


@dataclass(frozen=True, slots=True)
class NeedsHashing:
    """A data file whose ref only hashing it can give (its sidecar is missing or stale)."""

    content_type: str


def fingerprint(info: os.stat_result) -> list[int]:
    """What a sidecar records of its data file: inode, size, mtime in ns."""
    return [info.st_ino, info.st_size, info.st_mtime_ns]


class Sidecars:
    """The sidecars of the keys under `paths`, and the refs they give."""

    def __init__(self, paths: LocalPaths) -> None:
        self._paths = paths

    def write(self, key: str, ref: ArtifactRef, data_fingerprint: list[int]) -> None:
        """Record `ref` for the data file of `key` as it is now (`data_fingerprint`)."""
        meta = self._paths.meta(key)
        make_parent(key, meta)
        record = {
            "sha256": ref.sha256,
            "size": ref.size,
            "content_type": ref.content_type,
            "fingerprint": data_fingerprint,
        }
        # Not fsynced: the sidecar is a cache checked against the data file's fingerprint; one
        # lost or torn in a crash is ignored and the data hashed again (`known`).
        with atomic_file(meta, durable=False, prefix=TEMP_PREFIX) as out:
            out.write(json.dumps(record).encode())

    def stat(self, key: str) -> ArtifactRef | None:
        """The ref of `key`, hashing the data when its sidecar does not match; None: nothing."""
        known = self.known(key)
        if isinstance(known, NeedsHashing):
            with os_errors("stat", key):
                return self._hash_file(key, self._paths.data(key), known.content_type)
        return known

    def known(self, key: str) -> ArtifactRef | NeedsHashing | None:
        """:meth:`stat` without reading the data: :class:`NeedsHashing` when it must be hashed."""
        path = self._paths.data(key)
        with os_errors("stat", key):
            try:
                info = os.stat(path)
            except OSError as exc:
                if exc.errno in MISSING_ERRNOS:
                    return None
                raise
            if not stat_module.S_ISREG(info.st_mode):
                return None
            record = self._read(key)
            content_type = DEFAULT_CONTENT_TYPE
            if record is not None:
                content_type = str(record.get("content_type") or DEFAULT_CONTENT_TYPE)
                if record.get("fingerprint") == fingerprint(info):
                    try:
                        return ArtifactRef(
                            key=key,
                            size=record["size"],
                            sha256=record["sha256"],
                            content_type=content_type,
                        )
                    except (KeyError, ValueError):
                        pass  # a damaged sidecar: fall through and hash the data
            return NeedsHashing(content_type)

    def _hash_file(self, key: str, path: Path, content_type: str) -> ArtifactRef | None:
        """The ref of the data file as it is now (the sidecar is missing or stale)."""
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            if exc.errno in MISSING_ERRNOS:
                return None  # deleted meanwhile
            raise
        with handle:
            digest = Digest()
            for chunk in chunks_from(handle):
                digest.update(chunk)
        return digest.ref(key, content_type)

    def _read(self, key: str) -> dict[str, object] | None:
        try:
            record = json.loads(self._paths.meta(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None
