"""The signature of an index as a whole: made by ``registry build --key`` (:func:`sign_index`)
and judged by every reader (:func:`index_trust`).

The signed bytes are :data:`INDEX_SIGNATURE_DOMAIN` followed by the canonical JSON
(``_index.canonical_json``: keys sorted, no whitespace, UTF-8) of the index document without
its ``signature`` member, exactly as the reader parsed it: what is verified is what was read,
never a re-serialisation of a model. The domain keeps an index signature from meaning a skill
signature (``skills.signing.SIGNATURE_DOMAIN``) made with the same key, and the reverse.

Keys are the signing package's: an Ed25519 private key file read by
``skills.signing.load_private_key``, key ids by its rules, trusted keys from
``skills.trust.keys``. Called by the builder (``_build``) and the readers (``_readers``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from skillweave.errors import RegistryError
from skillweave.skills.registries._index import (
    IndexSignature,
    RegistryIndex,
    canonical_json,
    index_body,
)
from skillweave.skills.signing import key_fingerprint, validate_key_id

__all__ = ["INDEX_SIGNATURE_DOMAIN", "IndexTrust", "index_message", "index_trust", "sign_index"]

INDEX_SIGNATURE_DOMAIN: Final = b"skillweave registry index signature v1\n"
"""What every signed index message starts with."""

IndexTrust = Literal["signed", "unsigned", "untrusted"]
"""What an index signature that was not refused says: a trusted key signed it, it has none,
or a key the settings do not trust signed it (neither verified nor refused)."""


def index_message(document: Mapping[str, Any]) -> bytes:
    """The bytes an index signature signs, from the index document as parsed."""
    return INDEX_SIGNATURE_DOMAIN + canonical_json(index_body(document))


def sign_index(
    index: RegistryIndex, key: Ed25519PrivateKey, *, key_id: str | None = None
) -> RegistryIndex:
    """`index` signed with `key` under `key_id` (default: the key's fingerprint).

    Raises:
        ConfigError: the key id is not valid.
    """
    key_id = validate_key_id(key_id) if key_id is not None else key_fingerprint(key)
    unsigned = index.model_copy(update={"signature": None})
    document = json.loads(unsigned.to_json())  # exactly what a reader will parse
    raw = key.sign(index_message(document))
    signature = IndexSignature(key_id=key_id, signature=base64.b64encode(raw).decode("ascii"))
    return unsigned.model_copy(update={"signature": signature})


def index_trust(
    index: RegistryIndex,
    document: Mapping[str, Any],
    *,
    registry: str,
    trusted: Mapping[str, Ed25519PublicKey],
    required: str | None = None,
) -> IndexTrust:
    """Judge an index's signature: ``signed`` (a trusted key's, verified), ``unsigned`` or
    ``untrusted`` (read, not verified); refused when a trusted key's signature does not
    verify, or when `required` (the registry's ``key``) did not sign it.

    Raises:
        RegistryError: refused, one line saying what to do.
    """
    signature = index.signature
    if required is not None:
        if required not in trusted:
            raise RegistryError(
                registry,
                f"its key {required!r} is not in SKILLS__TRUST__KEYS: add the public key the "
                "index is signed with",
            )
        if signature is None:
            raise RegistryError(
                registry,
                f"the index is not signed, and this registry must be signed by key {required!r}:"
                " sign it with `skillweave registry build --key`",
            )
        if signature.key_id != required:
            raise RegistryError(
                registry,
                f"the index is signed by key {signature.key_id!r}, not by {required!r} as this "
                "registry must be: rebuild it with that key",
            )
    if signature is None:
        return "unsigned"
    public = trusted.get(signature.key_id)
    if public is None:
        return "untrusted"
    try:
        raw = base64.b64decode(signature.signature.encode("ascii"), validate=True)
        public.verify(raw, index_message(document))
    except (InvalidSignature, binascii.Error, ValueError):
        raise RegistryError(
            registry,
            f"the index signature does not verify under trusted key {signature.key_id!r}: the "
            "index was changed after it was signed; rebuild and re-sign it",
        ) from None
    return "signed"
