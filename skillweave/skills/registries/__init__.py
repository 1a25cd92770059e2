"""Skill registries: listings of skills that are not installed, searched before installing.

Not to be confused with the local library at one moment (``skills.registry.SkillRegistry``):
a skill registry is a remote listing. ``skills.registries`` (``SKILLS__REGISTRIES``) names
them, in order: a static JSON **index** (a file, ``file://`` or https URL; format 1,
``docs/REGISTRIES.md``), a **marketplace** (a repository of skills, listed as ``registry
build`` lists it) or another skillweave **api** (its ``GET /v1/registry/search``).
:class:`Registries` searches them together with the local search's selection strategies;
``skillweave registry build`` writes an index (:func:`build_index`), scanned, and signed with a
key; ``skillweave skills find`` and ``GET /v1/registry/search`` search.

The modules, lowest first:

* ``_index``: the index format (:class:`RegistryIndex`, :class:`IndexEntry`,
  :class:`ScanSummary`), parsed strictly from hostile bytes.
* ``_index_signing``: the index signature (domain-separated Ed25519 over canonical JSON).
* ``_hits``: what a search answers (:class:`RegistryHit`, :class:`RegistryResults`).
* ``_transport``: https reads with a size cap, a timeout and checked redirects.
* ``_build``: an index built from a source (scanned, signed).
* ``_cache``: listings kept under ``skills.registry_cache_dir``.
* ``_listing``: a listing verified (index signature, each entry's skill signature).
* ``_readers``: reading each kind of registry.
* ``_ranking``: ranking entries with ``skills.selection``.
* ``_memory``: the listings and rankers this process keeps, shared by every search.
* ``_registries``: :class:`Registries`, the search over them all.
"""

from skillweave.skills.registries._build import (
    BuiltEntry,
    BuiltIndex,
    build_index,
    index_name,
    marketplace_plugins,
)
from skillweave.skills.registries._cache import STALE_LIMIT, ListingCache
from skillweave.skills.registries._hits import MAX_HITS, RegistryHit, RegistryResults
from skillweave.skills.registries._index import (
    INDEX_FORMAT,
    MAX_INDEX_BYTES,
    MAX_INDEX_ENTRIES,
    IndexEntry,
    IndexSignature,
    RegistryIndex,
    ScanSummary,
    parse_index,
)
from skillweave.skills.registries._index_signing import (
    INDEX_SIGNATURE_DOMAIN,
    IndexTrust,
    index_message,
    index_trust,
    sign_index,
)
from skillweave.skills.registries._listing import Listed, Listing, verified_listing
from skillweave.skills.registries._readers import RELAY_HEADER
from skillweave.skills.registries._registries import Registries

__all__ = [
    "INDEX_FORMAT",
    "INDEX_SIGNATURE_DOMAIN",
    "MAX_HITS",
    "MAX_INDEX_BYTES",
    "MAX_INDEX_ENTRIES",
    "RELAY_HEADER",
    "STALE_LIMIT",
    "BuiltEntry",
    "BuiltIndex",
    "IndexEntry",
    "IndexSignature",
    "IndexTrust",
    "Listed",
    "Listing",
    "ListingCache",
    "Registries",
    "RegistryHit",
    "RegistryIndex",
    "RegistryResults",
    "ScanSummary",
    "build_index",
    "index_message",
    "index_name",
    "index_trust",
    "marketplace_plugins",
    "parse_index",
    "sign_index",
    "verified_listing",
]
