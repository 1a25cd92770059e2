"""Ed25519 signing keys: key files, the text form ``skills.trust.keys`` holds, and key ids.

A private key is PKCS#8 PEM, optionally encrypted with a passphrase, written with mode 0600
(:func:`generate_keypair`, :func:`write_private_key`, :func:`load_private_key`); a public key
is the base64 of its 32 raw bytes (:func:`public_key_b64`); a key id is a short printable label
(:data:`KEY_ID_PATTERN`), by default the key's fingerprint (:func:`key_fingerprint`).
:func:`decode_keys` reads trusted keys, every one checked before any is used: a malformed
trusted key is a configuration error (fail closed).

The lowest module of ``skills.signing``: the signature document (``_document``) takes its key
id rule and base64 reading from here, the verdict (``_verdict``) and the folder and ZIP checks
(``_targets``) their trusted keys; ``skillweave skills keygen`` (``cli.trust``) its key files.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from skillweave.atomic_write import write_atomic
from skillweave.config import TrustSettings
from skillweave.errors import ConfigError, SignatureError
from skillweave.skills.signing._capped_read import read_capped

__all__ = [
    "ED25519_SIGNATURE_BYTES",
    "KEY_ID_FORM",
    "KEY_ID_PATTERN",
    "MAX_KEY_FILE_BYTES",
    "b64decode",
    "decode_keys",
    "generate_keypair",
    "key_fingerprint",
    "load_private_key",
    "public_key_b64",
    "trusted_keys",
    "validate_key_id",
    "write_private_key",
]

MAX_KEY_FILE_BYTES: Final = 16 * 1024
"""An Ed25519 PEM key is about 120 bytes (about 300 encrypted)."""

KEY_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""A key id: a short printable label (``ops-2026``, or a fingerprint), no spaces or quotes."""

KEY_ID_FORM: Final = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
""":data:`KEY_ID_PATTERN` in words, for the messages that refuse a key id."""

ED25519_SIGNATURE_BYTES: Final = 64

_ED25519_PUBLIC_BYTES: Final = 32
_FINGERPRINT_HEX: Final = 16
_PRIVATE_MODE: Final = 0o600
_KEY_ID: Final = re.compile(KEY_ID_PATTERN)


def generate_keypair(*, passphrase: bytes | None = None) -> tuple[bytes, str]:
    """A new Ed25519 key pair.

    Args:
        passphrase: encrypts the private key when given (non-empty).

    Returns:
        The private key as PKCS#8 PEM, and the public key as ``skills.trust.keys`` holds it
        (base64 of its 32 raw bytes).
    """
    key = Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    return pem, public_key_b64(key)


def write_private_key(path: Path, pem: bytes) -> Path:
    """Write a private key to a new file with mode 0600; never over an existing file.

    Raises:
        SignatureError: `path` exists (a key is never overwritten) or cannot be written.
    """
    try:
        # Linked into place: never over a file, nor through a link someone left at `path`.
        write_atomic(path, pem, mode=_PRIVATE_MODE, exclusive=True)
    except FileExistsError:
        raise SignatureError(f"{path} exists; a key file is never overwritten") from None
    except OSError as exc:
        raise SignatureError(f"cannot write key file {path}: {exc.strerror}") from None
    return path


def load_private_key(path: Path, *, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    """Read an Ed25519 private key (PKCS#8 PEM) written by :func:`write_private_key`.

    Args:
        path: the key file.
        passphrase: decrypts an encrypted key; ignored for a key that is not encrypted.

    Raises:
        SignatureError: the file cannot be read, is not an Ed25519 PEM private key, is
            encrypted and no passphrase was given, or the passphrase is wrong; one line.
    """
    data = read_capped(path, MAX_KEY_FILE_BYTES, what="key file", follow=True)
    if data is None:
        raise SignatureError(f"no key file {path}")
    encrypted = b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data
    if encrypted and not passphrase:
        raise SignatureError(
            f"key file {path} is encrypted: set SKILLWEAVE_SIGNING_PASSPHRASE to its passphrase"
        )
    try:
        key = serialization.load_pem_private_key(data, password=passphrase if encrypted else None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        hint = "wrong passphrase, or " if encrypted else ""
        raise SignatureError(
            f"cannot read key file {path}: {hint}not a PEM private key "
            "(make one with `skillweave skills keygen`)"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"key file {path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def public_key_b64(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The public key (of a private key) as ``skills.trust.keys`` holds it: base64, 32 bytes."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def key_fingerprint(key: Ed25519PrivateKey | Ed25519PublicKey | str) -> str:
    """The default key id: the first 16 hex digits of the sha256 of the raw public key (of a
    key, or given as ``skills.trust.keys`` holds it)."""
    raw = base64.b64decode(key if isinstance(key, str) else public_key_b64(key))
    return hashlib.sha256(raw).hexdigest()[:_FINGERPRINT_HEX]


def validate_key_id(key_id: str) -> str:
    """Check that `key_id` can name a key (:data:`KEY_ID_PATTERN`) and return it.

    Raises:
        ConfigError: it cannot.
    """
    if not _KEY_ID.fullmatch(key_id):
        raise ConfigError(f"key id {key_id[:80]!r} is not valid: use {KEY_ID_FORM}")
    return key_id


def trusted_keys(settings: TrustSettings) -> dict[str, Ed25519PublicKey]:
    """The keys ``skills.trust.keys`` trusts, every one checked before any is used.

    Raises:
        ConfigError: a key id is not valid or a key is not the base64 of a 32-byte Ed25519
            public key; the message names the key id.
    """
    return decode_keys(settings.keys)


def decode_keys(
    trusted: Mapping[str, str] | Mapping[str, Ed25519PublicKey],
) -> dict[str, Ed25519PublicKey]:
    """Trusted keys as public keys: key id → the key, or its base64 as ``skills.trust.keys``
    holds it; every one checked before any is used.

    Raises:
        ConfigError: a key id is not valid or a key is not an Ed25519 public key (named).
    """
    keys: dict[str, Ed25519PublicKey] = {}
    for key_id, value in trusted.items():
        if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
            raise ConfigError(
                f"skills.trust.keys: key id {str(key_id)[:80]!r} is not valid: use {KEY_ID_FORM}"
            )
        if isinstance(value, Ed25519PublicKey):
            keys[key_id] = value
            continue
        raw = b64decode(value.strip()) if isinstance(value, str) else None
        if raw is None or len(raw) != _ED25519_PUBLIC_BYTES:
            raise ConfigError(
                f"skills.trust.keys[{key_id!r}] is not an Ed25519 public key (the base64 of 32"
                " bytes): set it to the key `skillweave skills keygen` printed"
            )
        try:
            keys[key_id] = Ed25519PublicKey.from_public_bytes(raw)
        except ValueError:
            raise ConfigError(
                f"skills.trust.keys[{key_id!r}] is not a valid Ed25519 public key"
            ) from None
    return keys


def b64decode(value: str) -> bytes | None:
    """`value` decoded as strict base64 (no stray characters); None when it is not."""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
