"""The signature document: what a signature of one skill version is, and where it lives.

What is signed is a skill's name and version, never its bytes: the version is already the
sha256 over the package's files (``versioning``). The message (:func:`signed_message`) is a
domain-separated byte string binding the name (compared by ``names.name_key``) to the version,
so a signature made for one skill cannot be replayed onto another skill with the same bytes.

A signature is a small JSON document (:class:`SkillSignature`), made by :func:`sign_version`.
It lives beside what it signs, never inside the package: in a skill folder as the hidden file
:data:`SIGNATURE_FILE`, beside a ZIP file as ``<zip>.sig.json`` (:func:`signature_path`).
Documents come from anyone who can write those places: they are size-capped and parsed
strictly (:func:`parse_signature`, :func:`read_signature`).

Called by the verdict (``_verdict``), the folder and ZIP signers (``_targets``), and, through
the ``skills.signing`` front, by uploads, installs, the sandbox packer and the manager.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillweave.atomic_write import write_atomic
from skillweave.errors import SignatureError
from skillweave.skills.names import SKILL_REFERENCE_PATTERN, name_key
from skillweave.skills.signing._capped_read import read_capped
from skillweave.skills.signing._signing_keys import (
    ED25519_SIGNATURE_BYTES,
    KEY_ID_FORM,
    KEY_ID_PATTERN,
    b64decode,
    key_fingerprint,
    validate_key_id,
)

__all__ = [
    "MAX_SIGNATURE_BYTES",
    "SIGNATURE_DOMAIN",
    "SIGNATURE_FILE",
    "SIGNATURE_SUFFIX",
    "SkillSignature",
    "parse_signature",
    "read_signature",
    "sign_version",
    "signature_bytes",
    "signature_path",
    "signed_message",
    "write_signature",
]

SIGNATURE_FILE: Final = ".skillweave-signature.json"
"""The signature of a skill folder, inside it: hidden, so never part of the package it signs."""

SIGNATURE_SUFFIX: Final = ".sig.json"
"""Appended to a ZIP file's name (``pdf.zip.sig.json``) for the signature beside it."""

SIGNATURE_DOMAIN: Final = b"skillweave skill signature v1\n"
"""What every signed message starts with, so a skillweave signature means nothing elsewhere
(and nothing else signed with the key means a skill signature)."""

MAX_SIGNATURE_BYTES: Final = 4096
"""A document is about 400 bytes; anything over this is refused before it is parsed."""

_FORMAT: Final = 1
_VERSION_PATTERN: Final = r"^[0-9a-f]{64}$"
_SIGNATURE_B64_CHARS: Final = 88  # base64 of 64 bytes
_PUBLIC_MODE: Final = 0o644
# Stands in for the signature while the rest of a new document is checked.
_PLACEHOLDER_SIGNATURE: Final = base64.b64encode(bytes(ED25519_SIGNATURE_BYTES)).decode("ascii")
_PATTERN_FORMS: Final = {
    "name": "must be a skill name: 1-255 characters, no '/', '\\' or control characters",
    "version": "must be 64 lowercase hex digits (a package's sha256)",
    "key_id": f"must be {KEY_ID_FORM}",
}


class SkillSignature(BaseModel):
    """A signature of one skill version: the JSON document that travels with the package."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    format: Literal[1] = Field(description="The document's format; only 1 exists.")
    name: str = Field(
        pattern=SKILL_REFERENCE_PATTERN, max_length=255, description="The signed skill's name."
    )
    version: str = Field(
        pattern=_VERSION_PATTERN, description="The signed version: the package's sha256 (hex)."
    )
    key_id: str = Field(pattern=KEY_ID_PATTERN, description="Which key signed it.")
    signature: str = Field(
        min_length=_SIGNATURE_B64_CHARS,
        max_length=_SIGNATURE_B64_CHARS,
        description="Base64 of the 64-byte Ed25519 signature of `signed_message(name, version)`.",
    )
    signed_at: AwareDatetime = Field(description="When it was signed (UTC); informative only.")

    @field_validator("format", mode="before")
    @classmethod
    def _format_is_an_integer(cls, value: object) -> object:
        # A Literal compares by equality, and true == 1.0 == 1 in Python.
        if type(value) is not int:
            raise ValueError("must be the integer 1")
        return value

    @field_validator("signature")
    @classmethod
    def _signature_is_canonical_base64(cls, value: str) -> str:
        raw = b64decode(value)
        if raw is None or len(raw) != ED25519_SIGNATURE_BYTES:
            raise ValueError("must be the base64 of a 64-byte Ed25519 signature")
        if base64.b64encode(raw).decode("ascii") != value:
            raise ValueError("must be canonical base64")
        return value

    @field_validator("signed_at")
    @classmethod
    def _signed_at_is_utc(cls, value: datetime) -> datetime:
        if value.utcoffset() != UTC.utcoffset(None):
            raise ValueError("must be in UTC")
        return value.astimezone(UTC)

    @property
    def signature_raw(self) -> bytes:
        """The 64 signature bytes."""
        return base64.b64decode(self.signature)


def signed_message(name: str, version: str) -> bytes:
    """The bytes a signature of skill `name` at `version` signs.

    ``SIGNATURE_DOMAIN``, the name's ``name_key`` and the version, separated by newlines: a
    name holds no control characters (``SKILL_REFERENCE_PATTERN``) and a version is 64 hex
    digits, so the parts cannot run into each other.
    """
    return SIGNATURE_DOMAIN + name_key(name).encode("utf-8") + b"\n" + version.encode("ascii")


def sign_version(
    key: Ed25519PrivateKey,
    *,
    name: str,
    version: str,
    key_id: str | None = None,
    now: datetime | None = None,
) -> SkillSignature:
    """Sign skill `name` at `version`.

    Args:
        key: the signing key.
        name: the skill's name.
        version: its version (64 hex digits).
        key_id: names the key in the document; its fingerprint when not given.
        now: the signing time (UTC); the current time when not given.

    Raises:
        SignatureError: the name or version cannot be signed (malformed).
        ConfigError: the key id is not valid.
    """
    key_id = validate_key_id(key_id) if key_id is not None else key_fingerprint(key)
    document = {
        "format": _FORMAT,
        "name": name,
        "version": version,
        "key_id": key_id,
        "signature": _PLACEHOLDER_SIGNATURE,
        "signed_at": (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0),
    }
    try:
        unsigned = SkillSignature.model_validate(document)
    except ValidationError as exc:
        raise SignatureError(f"cannot sign skill {name[:80]!r}: {_first_problem(exc)}") from None
    # Sign what was checked: the name and version are well-formed by now.
    raw = key.sign(signed_message(unsigned.name, unsigned.version))
    return unsigned.model_copy(update={"signature": base64.b64encode(raw).decode("ascii")})


def parse_signature(data: bytes | str, *, source: str = "signature") -> SkillSignature:
    """Read a signature document, strictly.

    Args:
        data: the document's JSON.
        source: where it is from, for the error (a path or a store key).

    Raises:
        SignatureError: it is over :data:`MAX_SIGNATURE_BYTES`, not JSON, or not exactly a
            :class:`SkillSignature` (a missing, extra or malformed field); one line.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_SIGNATURE_BYTES:
        raise SignatureError(f"{source}: not a skill signature: over {MAX_SIGNATURE_BYTES} bytes")
    try:
        return SkillSignature.model_validate_json(raw)
    except ValidationError as exc:
        raise SignatureError(f"{source}: not a skill signature: {_first_problem(exc)}") from None


def signature_bytes(signature: SkillSignature) -> bytes:
    """The document's JSON, as it is written to files and the store."""
    return (signature.model_dump_json(indent=2) + "\n").encode("utf-8")


def signature_path(path: Path) -> Path:
    """Where the signature of `path` lives: ``<folder>/.skillweave-signature.json`` for a skill
    folder, ``<file>.sig.json`` for a ZIP file."""
    if path.is_dir():
        return path / SIGNATURE_FILE
    return path.with_name(path.name + SIGNATURE_SUFFIX)


def read_signature(path: Path) -> SkillSignature | None:
    """The signature of a skill folder or ZIP file (:func:`signature_path`); None if it has none.

    The document is read without following a symlink and no further than the size cap.

    Raises:
        SignatureError: the document cannot be read or is malformed.
    """
    where = signature_path(path)
    data = read_capped(where, MAX_SIGNATURE_BYTES, what="skill signature")
    return None if data is None else parse_signature(data, source=str(where))


def write_signature(path: Path, signature: SkillSignature) -> Path:
    """Write `signature` for a skill folder or ZIP file (:func:`signature_path`), atomically.

    Returns:
        The document's path.

    Raises:
        SignatureError: it cannot be written.
    """
    where = signature_path(path)
    try:
        write_atomic(where, signature_bytes(signature), mode=_PUBLIC_MODE)
    except OSError as exc:
        raise SignatureError(f"cannot write {where}: {exc.strerror}") from None
    return where


def _first_problem(exc: ValidationError) -> str:
    """The first problem of a document, in one line, in words rather than regular expressions."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    reason = " ".join(str(first["msg"]).split())
    if first["type"] == "string_pattern_mismatch" and where in _PATTERN_FORMS:
        reason = _PATTERN_FORMS[where]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where + ': ' if where else ''}{reason}{more}"
