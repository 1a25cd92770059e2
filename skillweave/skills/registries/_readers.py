"""Reading each kind of registry: an ``index`` (a file, ``file://`` or https URL:
:func:`read_index`), a ``marketplace`` (a repository listed as ``registry build`` lists it:
:func:`list_marketplace`) and an ``api`` (another skillweave API's
``GET /v1/registry/search``: :func:`search_api`).

Readers return bytes or results and judge nothing: ``_listing`` parses and verifies. Called by
the search (``_registries``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlencode, urlsplit

from pydantic import ValidationError

from skillweave.config import RegistrySource, SkillsSettings
from skillweave.errors import RegistryError, SkillError
from skillweave.skills.registries._build import build_index, index_name
from skillweave.skills.registries._hits import RegistryResults
from skillweave.skills.registries._index import MAX_INDEX_BYTES, first_problem
from skillweave.skills.registries._transport import fetch_bytes, is_http_url

__all__ = ["MAX_API_BYTES", "RELAY_HEADER", "list_marketplace", "read_index", "search_api"]

MAX_API_BYTES: Final = 4 * 1024 * 1024
"""The most an api registry's answer may be (100 hits of full entries are under 1 MiB)."""
SEARCH_PATH: Final = "/v1/registry/search"
RELAY_HEADER: Final = "Skillweave-Registry-Relay"
"""Sent with an api registry's search: the API asked answers from its own index and
marketplace registries only, never relaying to its api registries (no loops)."""


async def read_index(source: RegistrySource) -> bytes:
    """The bytes of an index registry, at most ``MAX_INDEX_BYTES`` (+1, so that the parser
    refuses what is over).

    Raises:
        RegistryError: it cannot be read (one line).
    """
    location = source.location
    if is_http_url(location):
        return await fetch_bytes(location, registry=source.label, max_bytes=MAX_INDEX_BYTES)
    if location.startswith("file://"):
        parts = urlsplit(location)
        if parts.netloc not in ("", "localhost"):
            raise RegistryError(source.label, f"{location}: a file:// URL on another host")
        path = Path(unquote(parts.path))
    elif "://" in location:
        raise RegistryError(
            source.label, f"{location[:200]}: an index is a path, a file:// or an https:// URL"
        )
    else:
        path = Path(location).expanduser()
    return await asyncio.to_thread(_read_file, path, source.label)


async def list_marketplace(source: RegistrySource, settings: SkillsSettings) -> bytes:
    """A marketplace registry's skills as an (unsigned) index, listed like ``registry build``
    lists a source: each version computed and scanned.

    Raises:
        RegistryError: the repository cannot be read (one line).
    """
    try:
        built = await asyncio.to_thread(
            build_index,
            source.location,
            settings=settings,
            name=index_name(source.label),
        )
    except SkillError as exc:
        raise RegistryError(source.label, f"cannot be listed: {exc}") from None
    return built.index.to_json()


async def search_api(source: RegistrySource, query: str, *, top_k: int) -> RegistryResults:
    """What another skillweave API's registry search answers for `query`.

    Raises:
        RegistryError: it cannot be read, or its answer is not a registry search's (one line).
    """
    url = f"{source.location.rstrip('/')}{SEARCH_PATH}?{urlencode({'q': query, 'k': top_k})}"
    headers = {"Accept": "application/json", RELAY_HEADER: "1"}
    if source.token is not None:
        headers["Authorization"] = f"Bearer {source.token.get_secret_value()}"
    data = await fetch_bytes(url, registry=source.label, max_bytes=MAX_API_BYTES, headers=headers)
    try:
        return RegistryResults.model_validate_json(data)
    except ValidationError as exc:
        raise RegistryError(
            source.label, f"its answer is not a registry search's: {first_problem(exc)}"
        ) from None


def _read_file(path: Path, registry: str) -> bytes:
    try:
        with path.open("rb") as file:
            return file.read(MAX_INDEX_BYTES + 1)
    except FileNotFoundError:
        raise RegistryError(registry, f"no index file {path}: check SKILLS__REGISTRIES") from None
    except OSError as exc:
        raise RegistryError(registry, f"cannot read {path}: {exc.strerror}") from None
