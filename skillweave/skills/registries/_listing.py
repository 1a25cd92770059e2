"""A registry's listing, verified (:func:`verified_listing`): the index parsed strictly, its
signature judged (``_index_signing``), and each entry's skill signature checked against
``skills.trust.keys``.

An entry whose signature does not match it (another name or version) or does not verify
under the trusted key it names is dropped, and named in the listing's problems; one signed
by a key the settings do not list, or not signed, is kept unverified. Called by the search
(``_registries``) on what a reader (``_readers``) or the cache (``_cache``) gives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from skillweave.config import RegistrySource
from skillweave.skills.registries._index import IndexEntry, parse_index
from skillweave.skills.registries._index_signing import IndexTrust, index_trust
from skillweave.skills.signing import verify_signature

__all__ = ["Listed", "Listing", "checked_entry", "verified_listing"]


@dataclass(frozen=True, slots=True)
class Listed:
    """One entry of a listing, and whether a trusted key signed its name and version."""

    entry: IndexEntry
    verified: bool


@dataclass(frozen=True, slots=True)
class Listing:
    """What one registry lists, verified.

    Attributes:
        registry: its label.
        entries: what it lists, in its order, entries that failed verification left out.
        trust: what its index signature says (``signed``, ``unsigned``, ``untrusted``).
        problems: one line per entry left out.
        stale: read from the cache because the registry could not be read.
    """

    registry: str
    entries: tuple[Listed, ...]
    trust: IndexTrust
    problems: tuple[str, ...] = ()
    stale: bool = False


def verified_listing(
    data: bytes, source: RegistrySource, *, trusted: Mapping[str, Ed25519PublicKey]
) -> Listing:
    """Parse and verify the listing `data` of `source`.

    Raises:
        RegistryError: the index is malformed, oversize, or its signature refused (one line).
    """
    registry = source.label
    index, document = parse_index(data, registry=registry)
    trust = index_trust(index, document, registry=registry, trusted=trusted, required=source.key)
    entries: list[Listed] = []
    problems: list[str] = []
    for entry in index.skills:
        listed, problem = checked_entry(entry, registry=registry, trusted=trusted)
        if listed is not None:
            entries.append(listed)
        if problem is not None:
            problems.append(problem)
    return Listing(registry=registry, entries=tuple(entries), trust=trust, problems=tuple(problems))


def checked_entry(
    entry: IndexEntry, *, registry: str, trusted: Mapping[str, Ed25519PublicKey]
) -> tuple[Listed | None, str | None]:
    """`entry` with whether a trusted key signed it, or None and why it is left out (its
    signature is for another name or version, or does not verify)."""
    check = verify_signature(
        entry.signature, name=entry.name, version=entry.version, trusted=trusted
    )
    if check.status in ("mismatch", "invalid"):
        return None, f"registry {registry!r}: left out: {check.message}"
    return Listed(entry=entry, verified=check.status == "valid"), None
