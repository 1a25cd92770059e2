"""Reading the small files signing trusts least: signature documents and key files.

:func:`read_capped` reads a regular file no further than a size cap, and without following a
symlink unless told: a signature sits in a folder anyone may have written. Called by the
signature document's reader (``_document``) and the key loader (``_signing_keys``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from skillweave.errors import SignatureError

__all__ = ["read_capped"]


def read_capped(path: Path, cap: int, *, what: str, follow: bool = False) -> bytes | None:
    """A small regular file's bytes, refused over `cap`; None when there is no such file.

    A symlink is followed only when `follow` says so: a signature sits in a folder anyone may
    have written, while a key file is one the user named (a mounted secret is often a link).

    Raises:
        SignatureError: the file cannot be read, is not a regular file, or is over `cap`.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SignatureError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SignatureError(f"{what} {path} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= cap and (chunk := os.read(fd, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise SignatureError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise SignatureError(f"{what} {path} is over {cap} bytes")
    return data
