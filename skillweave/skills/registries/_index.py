"""The static JSON index format (format 1): :class:`RegistryIndex`, its :class:`IndexEntry` s
and their :class:`ScanSummary`, read strictly from hostile bytes (:func:`parse_index`).

An index is what ``skillweave registry build`` writes and what an ``index`` registry serves;
``docs/REGISTRIES.md`` documents it field by field. Reading one reads nothing else: a
source is checked by ``skills.install.parse_source`` only when an entry is installed
(:meth:`IndexEntry.install_source`). The index signature is ``_index_signing``'s; this module
only gives the bytes it signs (:func:`index_body`, :func:`canonical_json`).

Called by the builder (``_build``), the readers (``_readers``), the listing cache (``_cache``)
and, through the package front, the API's search route and agent acquisition.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from skillweave.config import ScanSettings, Severity
from skillweave.errors import PackageError, RegistryError
from skillweave.skills.install import SkillSource, parse_source, read_address
from skillweave.skills.signing import SkillSignature
from skillweave.skills.spec import DESCRIPTION_MAX_LENGTH, name_problems

__all__ = [
    "INDEX_FORMAT",
    "MAX_INDEX_BYTES",
    "MAX_INDEX_ENTRIES",
    "IndexEntry",
    "IndexSignature",
    "RegistryIndex",
    "ScanSummary",
    "canonical_json",
    "index_body",
    "parse_index",
]

INDEX_FORMAT: Final = 1
MAX_INDEX_BYTES: Final = 16 * 1024 * 1024
"""An index over this is refused before it is parsed (20,000 entries are about 20 MiB at
most; a real one of that size is about 15 MiB)."""
MAX_INDEX_ENTRIES: Final = 20_000
_MAX_SOURCE_CHARS: Final = 2048
_MAX_PATH_CHARS: Final = 1024
_MAX_SUMMARY_CHARS: Final = 200
_HEX40_OR_64: Final = r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$"
_HEX64: Final = r"^[0-9a-f]{64}$"
_LABEL: Final = r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$"
_REF: Final = r"^[A-Za-z0-9][A-Za-z0-9._/@+-]{0,199}$"
_ABSOLUTE_OR_URL: Final = re.compile(
    r"^(?:/|[A-Za-z][A-Za-z0-9+.-]*://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)"
)
_REBUILD: Final = (
    "rebuild it with `skillweave registry build` (docs/REGISTRIES.md has the format), "
    "or take it out of SKILLS__REGISTRIES"
)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ACTIONS: Final = {"clean": 0, "warn": 1, "approve": 2, "block": 3}


class ScanSummary(BaseModel):
    """What the scan of an entry's version found, as the builder recorded it.

    Attributes:
        summary: one line, e.g. ``2 findings (1 high, 1 low)`` or ``no findings``.
        decision: what the builder's ``skills.scan.policy`` made of it.
        counts: findings by severity.
        scanner: the rule set that scanned it (another rule set may find otherwise).
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    summary: str = Field(max_length=_MAX_SUMMARY_CHARS)
    decision: Literal["block", "approve", "warn", "clean"]
    counts: dict[Severity, int] = Field(default_factory=dict)
    scanner: str | None = Field(default=None, max_length=_MAX_SUMMARY_CHARS)

    @field_validator("counts")
    @classmethod
    def _counts_are_counts(cls, value: dict[Severity, int]) -> dict[Severity, int]:
        if any(n < 0 or n > 1_000_000 for n in value.values()):
            raise ValueError("a count is between 0 and 1,000,000")
        return value

    @field_validator("summary", "scanner")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is not None and _CONTROL.search(value):
            raise ValueError("one line of text, no control characters")
        return value

    def decision_under(self, policy: ScanSettings) -> str:
        """What `policy` (this reader's ``skills.scan``) makes of the counts: the strictest
        action of any severity found; ``clean`` when nothing was."""
        found = [severity for severity, n in self.counts.items() if n]
        if not found:
            return "clean"
        actions = [policy.policy.get(severity, "warn") for severity in found]
        return max(actions, key=_ACTIONS.__getitem__)


class IndexEntry(BaseModel):
    """One skill an index lists: what it is, where an install reads it, and what it is.

    Attributes:
        name: the skill's name (the spec's rules).
        description: its description (at most 1024 characters, as the spec says).
        source: what ``skills install`` reads: a git URL, ``owner/repo``, a folder, a ZIP.
        ref: the branch or tag the builder read, if one was named.
        commit: the commit the builder read (a git source); an install reads exactly it.
        path: the skill's folder inside the source; None: the source's root.
        version: skillweave's version digest of the skill's files (sha256, 64 hex).
        signature: the version's signature document, when signed.
        scan: what the builder's scan found.
        plugin: the marketplace plugin that lists it, in a marketplace repository.
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    name: str = Field(max_length=64)
    description: str = Field(min_length=1, max_length=DESCRIPTION_MAX_LENGTH)
    source: str = Field(min_length=1, max_length=_MAX_SOURCE_CHARS)
    ref: str | None = Field(default=None, pattern=_REF)
    commit: str | None = Field(default=None, pattern=_HEX40_OR_64)
    path: str | None = Field(default=None, min_length=1, max_length=_MAX_PATH_CHARS)
    version: str = Field(pattern=_HEX64)
    signature: SkillSignature | None = None
    scan: ScanSummary | None = None
    plugin: str | None = Field(default=None, pattern=_LABEL)

    @field_validator("name")
    @classmethod
    def _spec_name(cls, value: str) -> str:
        problems = name_problems(value)
        if problems:
            raise ValueError(f"not a skill name: {'; '.join(problems)}")
        return value

    @field_validator("source")
    @classmethod
    def _no_control(cls, value: str) -> str:
        if _CONTROL.search(value):
            raise ValueError("no control characters")
        return value

    @field_validator("path")
    @classmethod
    def _relative_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = value.split("/")
        if value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
            raise ValueError("a relative path inside the source (no '..', '.', '//' or '\\')")
        if _CONTROL.search(value):
            raise ValueError("no control characters")
        return value

    def install_source(self, *, git_host: str | None = None) -> SkillSource:
        """What ``skills install`` reads for this entry: its source at its commit (else its
        ref), narrowed to its path; checked by ``parse_source``'s rules now, not at read time.
        A relative source is never a path here (it would mean another folder in every
        working directory): only an ``owner/repo`` of `git_host` (``SKILLS__GIT_HOST``).

        Raises:
            PackageError: the source is insecure, unreadable or an ``owner/repo`` without a
                `git_host`; the ref or path is bad.
        """
        if (
            not _ABSOLUTE_OR_URL.match(self.source)
            and read_address(self.source, git_host=git_host) is None
        ):
            raise PackageError(
                f"{self.source[:200]}: a relative path in a registry entry would name another "
                "folder in every working directory; an index names a local source by its "
                "absolute path"
            )
        return parse_source(
            self.source,
            ref=self.commit or self.ref,
            path=self.path,
            git_host=git_host,
            relative_paths=False,
        )


class IndexSignature(BaseModel):
    """The signature of an index as a whole (``_index_signing`` makes and checks it).

    Attributes:
        key_id: which key signed it.
        signature: base64 of the Ed25519 signature of the signed bytes (``docs/REGISTRIES.md``).
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    key_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    signature: str = Field(min_length=88, max_length=88)


class RegistryIndex(BaseModel):
    """A static index of skills (format 1).

    Attributes:
        format: 1.
        name: what the index calls itself (informative; results carry the registry's label).
        generated_at: when it was built (UTC).
        skills: the entries, at most 20,000; a name appears once per plugin.
        signature: the index signature, when signed.
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    format: Literal[1]
    name: str = Field(pattern=_LABEL)
    generated_at: AwareDatetime
    skills: tuple[IndexEntry, ...] = Field(max_length=MAX_INDEX_ENTRIES)
    signature: IndexSignature | None = None

    @field_validator("format", mode="before")
    @classmethod
    def _format_is_an_integer(cls, value: object) -> object:
        if type(value) is not int:  # true == 1.0 == 1 in Python
            raise ValueError("must be the integer 1")
        return value

    @model_validator(mode="after")
    def _names_once(self) -> RegistryIndex:
        seen: set[tuple[str, str | None]] = set()
        for entry in self.skills:
            key = (entry.name, entry.plugin)
            if key in seen:
                where = f" in plugin {entry.plugin!r}" if entry.plugin else ""
                raise ValueError(f"skill {entry.name!r} is listed twice{where}")
            seen.add(key)
        return self

    @classmethod
    def new(
        cls, name: str, skills: list[IndexEntry], *, now: datetime | None = None
    ) -> RegistryIndex:
        """An unsigned index of `skills`, generated now."""
        when = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
        return cls(format=INDEX_FORMAT, name=name, generated_at=when, skills=tuple(skills))

    def to_json(self) -> bytes:
        """The index as written: indented JSON, fields in the documented order."""
        return (self.model_dump_json(indent=2, exclude_none=True) + "\n").encode("utf-8")


def canonical_json(value: object) -> bytes:
    """`value` as canonical JSON: keys sorted, no whitespace, UTF-8 (not ASCII-escaped)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def index_body(document: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of an index document a signature covers: all but ``signature``."""
    return {key: value for key, value in document.items() if key != "signature"}


def parse_index(data: bytes, *, registry: str) -> tuple[RegistryIndex, dict[str, Any]]:
    """Read an index strictly: its model and its JSON document (what a signature covers).

    Raises:
        RegistryError: over :data:`MAX_INDEX_BYTES`, not UTF-8 JSON (a key twice in an
            object too), or not exactly a format-1 index; one line naming the first problem.
    """
    if len(data) > MAX_INDEX_BYTES:
        raise RegistryError(
            registry, f"the index is over {MAX_INDEX_BYTES} bytes: split it or list fewer skills"
        )
    try:
        document = json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RegistryError(
            registry, f"the index is not JSON ({_short(str(exc))}): {_REBUILD}"
        ) from None
    if not isinstance(document, dict):
        raise RegistryError(registry, f"the index is not a JSON object: {_REBUILD}")
    if isinstance(document.get("skills"), list) and len(document["skills"]) > MAX_INDEX_ENTRIES:
        raise RegistryError(
            registry, f"the index lists over {MAX_INDEX_ENTRIES} skills: split it in two"
        )
    try:  # strictly, from the JSON itself: the document above is what a signature covers
        index = RegistryIndex.model_validate_json(data)
    except ValidationError as exc:
        raise RegistryError(
            registry, f"not a skill index ({first_problem(exc)}): {_REBUILD}"
        ) from None
    return index, document


def first_problem(exc: ValidationError) -> str:
    """The first problem of a validation, in one line with where it is."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return _short(f"{where + ': ' if where else ''}{' '.join(str(first['msg']).split())}") + more


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: two readers must never see two documents."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key[:40]!r} appears twice in an object")
        out[key] = value
    return out


def _short(text: str) -> str:
    return text if len(text) <= 300 else text[:300] + "…"
