"""Who owns a skill name, and when two names are the same: :func:`name_key` and :class:`SkillOwner`.

A skill name is owned by one source at any depth of a skill tree (DESIGN §8): a directory
library, or one uploaded skill (its top and every child inside it). Two names are the same when
their :func:`name_key` is: the comparison ignores case and Unicode compatibility forms, because
lenient loading accepts third-party names beyond the spec's lowercase ASCII ('PDF', fullwidth
letters), and such a name must not sit beside 'pdf' as a second skill. Discovery
(``discovery``) resolves every clash of a scan by this key; uploads (``stored``) refuse a package
that brings a name someone else owns; the API's runs (``skillweave.api.runs``) check that an
agent's skills still resolve to the owner the listing shows.

What a skill is *given* (its secrets, its credential bindings, its network approval) is bound
more strictly than names are compared: only to a name in canonical form (:func:`bound_name`:
the spec's ``a-z0-9`` and single hyphens, 1–64 characters), matched exactly, never folded. A
lenient directory skill named ``PROBE-A`` or ``ｐｒｏｂｅ-ａ`` still loads, is flagged
(:data:`NOT_BOUND`, a warning of the loader), and gets nothing configured for ``probe-a``. The
manager's side of the rule (the owner of the name and the version run) is
``skillweave.sandbox.bindings``.

A reference may pin a version: ``name@VERSION`` (:func:`parse_pin`, the one parser every door
uses: agent specs, the API's ``skill_ids``, the CLI), where VERSION is the skill's full version
(64 hex digits) or a prefix of at least :data:`VERSION_PREFIX_MIN` of them, resolved against the
store's versions where a run starts (``skills.stored``). A pin that cannot be one, or names no
single stored version, is a :class:`SkillVersionError`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from skillweave.errors import SkillError
from skillweave.skills.spec import NAME_MAX_LENGTH, name_problems

__all__ = [
    "NOT_BOUND",
    "SCOPE_SUFFIX",
    "SKILL_ID_PATTERN",
    "SKILL_REFERENCE_PATTERN",
    "UPLOADED_ROOT_MARKER",
    "VERSION_LENGTH",
    "VERSION_PREFIX_MIN",
    "VERSION_SEPARATOR",
    "OwnerKind",
    "SkillOwner",
    "SkillPin",
    "SkillVersionError",
    "bound_name",
    "canonical_form",
    "is_scope",
    "name_key",
    "parse_pin",
    "skill_id",
]

OwnerKind = Literal["directory", "uploaded"]

UPLOADED_ROOT_MARKER: Final = ".skillweave-materialized"
"""A file in a library root that says "this root holds uploaded skills, one folder each"
(written by ``StoredSkills.materialize``). A scan gives such a root's skills no precedence
over any other source: an uploaded package can never shadow a directory skill."""


SKILL_ID_PATTERN: Final = re.compile(r"sk-[0-9a-f]{16}")
"""A skill's id as the API shows it (see :func:`skill_id`)."""

SKILL_REFERENCE_PATTERN: Final = r"^[^/\\\x00-\x1f\x7f]{1,255}$"
"""What a request may name a skill by (an agent's ``skill_ids``): a name as lenient loading
accepts it (``web_scraper``, ``PDF``) or a skill's id. Only its form is checked here; whether it
names a skill is the library's to say."""


SCOPE_SUFFIX: Final = ".*"
"""What ends a reference to every skill of a namespace (``web.*``); ``*`` alone is every skill."""


def is_scope(reference: str) -> bool:
    """Whether `reference` names a namespace's skills (``web.*``) or all (``*``), not one."""
    return reference == "*" or reference.endswith(SCOPE_SUFFIX)


def skill_id(name: str) -> str:
    """The skill's stable id: ``sk-`` and 16 hex digits of the sha256 of its name's key, the
    same for every version and source of the name, and for names that are the same."""
    return "sk-" + hashlib.sha256(name_key(name).encode("utf-8")).hexdigest()[:16]


def name_key(name: str) -> str:
    """The form two skill names are compared in: NFKC-normalized and case-folded.

    Normalized again after folding, as Unicode's ``NFKC_Casefold`` is, so that the key is
    stable (``name_key(name_key(x)) == name_key(x)``): folding can produce characters that
    NFKC maps further.
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


NOT_BOUND: Final = "its name is not canonical: it gets no secrets, credentials or network"
"""Why a skill whose name is not in canonical form is given nothing configured for a name (the
loader's warning, the manager's log line and the run's audit record say it)."""

_NOT_CANONICAL_CHARS: Final = re.compile(r"[^a-z0-9]+")


def bound_name(name: str) -> str | None:
    """The name a skill's secrets, credential bindings and network approval are bound to:
    `name` itself when it is canonical (the spec's name rules, ``spec.name_problems``), else
    None: it is bound to nothing. Matched exactly: no case or Unicode form of a canonical
    name is that name here (``PROBE-A`` and ``ｐｒｏｂｅ-ａ`` are not ``probe-a``)."""
    return name if not name_problems(name) else None


def canonical_form(name: str) -> str | None:
    """The canonical spelling closest to `name` (what an error suggests): its
    :func:`name_key` with every run of other characters made one hyphen, trimmed to the
    spec's length; None when nothing canonical is left."""
    form = _NOT_CANONICAL_CHARS.sub("-", name_key(name)).strip("-")[:NAME_MAX_LENGTH].rstrip("-")
    return form if form and bound_name(form) == form else None


@dataclass(frozen=True, slots=True)
class SkillOwner:
    """The source that owns a skill's name.

    Attributes:
        kind: ``directory`` (a configured library, bundled skills included) or ``uploaded``.
        source: for a directory, the library root; for an upload, the uploaded skill's name
            (the top of its package, which owns the names of its children too).
    """

    kind: OwnerKind
    source: str

    def __str__(self) -> str:
        if self.kind == "directory":
            return f"the directory library {self.source}"
        return f"the uploaded skill {self.source!r}"


# --- pins: name@VERSION ----------------------------------------------------------------------

VERSION_SEPARATOR: Final = "@"
"""What separates a skill's name from the version it is pinned to (``pdf@0123abcd``)."""

VERSION_LENGTH: Final = 64
"""Hex digits of a full version (the sha256 of the package: ``skills.versioning``)."""

VERSION_PREFIX_MIN: Final = 8
"""Fewest hex digits a pinned version may be given by: shorter prefixes collide too often
to stay unique as versions are added."""

_PINNED_VERSION: Final = re.compile(f"[0-9a-f]{{{VERSION_PREFIX_MIN},{VERSION_LENGTH}}}")
_VERSIONS_SHOWN: Final = 10
_SHORT: Final = 12

VersionProblem = Literal["malformed", "unknown", "ambiguous", "no_earlier"]


class SkillVersionError(SkillError):
    """A skill version that cannot be told: a pin that is not one, or a version (or prefix) that
    names none, or several, of the skill's stored versions.

    Attributes:
        name: the skill.
        version: the version (or prefix) as given.
        problem: ``malformed``, ``unknown``, ``ambiguous``, or ``no_earlier`` (a rollback
            asked for the version before the current one, and there is none).
        versions: the skill's stored versions (full), newest first, that the message lists
            (for ``ambiguous``: those the prefix matches).
    """

    def __init__(
        self, name: str, version: str, *, problem: VersionProblem, versions: Sequence[str] = ()
    ) -> None:
        self.name = name
        self.version = version
        self.problem = problem
        self.versions = tuple(versions)
        shown = ", ".join(v[:_SHORT] for v in self.versions[:_VERSIONS_SHOWN])
        if len(self.versions) > _VERSIONS_SHOWN:
            shown += f" and {len(self.versions) - _VERSIONS_SHOWN} more"
        listing = f"`skillweave skills versions {name}` lists them"
        match problem:
            case "malformed":
                given = f"{name}{VERSION_SEPARATOR}{version}"
                given = given if len(given) <= 100 else f"{given[:80]}…{given[-12:]}"
                message = (
                    f"{given!r} is not a valid version: give {VERSION_PREFIX_MIN} to"
                    f" {VERSION_LENGTH} hex digits of one of the skill's versions (`skillweave"
                    " skills versions NAME` lists them)"
                )
            case "unknown":
                known = f" (its versions: {shown})" if shown else ""
                message = (
                    f"skill {name!r} has no stored version {version[:VERSION_LENGTH]!r}{known};"
                    f" {listing}"
                )
            case "ambiguous":
                message = (
                    f"version {version!r} of skill {name!r} is ambiguous: it begins {shown};"
                    " give more hex digits"
                )
            case "no_earlier":
                message = (
                    f"skill {name!r} has no earlier stored version to roll back to (its"
                    f" versions: {shown}); install or upload the one you want"
                )
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class SkillPin:
    """A skill reference split at its pin: ``name`` and the version asked (None: unpinned).

    Attributes:
        name: the reference without its pin (a name, ``ns.name``, an id, a scope).
        version: lowercase hex, :data:`VERSION_PREFIX_MIN` to :data:`VERSION_LENGTH` digits,
            or None when the reference pins nothing.
    """

    name: str
    version: str | None = None

    @property
    def exact(self) -> bool:
        """Whether the pin names a full version (no store is needed to resolve it)."""
        return self.version is not None and len(self.version) == VERSION_LENGTH

    def __str__(self) -> str:
        if self.version is None:
            return self.name
        return f"{self.name}{VERSION_SEPARATOR}{self.version}"


def parse_pin(reference: str) -> SkillPin:
    """`reference` (an agent's skill entry) split into the skill and the version it pins.

    ``pdf`` pins nothing; ``pdf@0123abcd`` (hex, upper or lower case, at least
    :data:`VERSION_PREFIX_MIN` digits) pins a version or a prefix of one. A scope
    (``web.*@…``), a name no reference may be (empty, a path: :data:`SKILL_REFERENCE_PATTERN`)
    or a version that is not hex refuses the reference.

    Raises:
        SkillVersionError: ``malformed``: the pin cannot be one.
    """
    name, separator, version = reference.rpartition(VERSION_SEPARATOR)
    if not separator:
        return SkillPin(reference)
    version = version.lower()
    named = re.fullmatch(SKILL_REFERENCE_PATTERN, name) is not None and not is_scope(name)
    if not named or _PINNED_VERSION.fullmatch(version) is None:
        raise SkillVersionError(name, version, problem="malformed")
    return SkillPin(name, version)
