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
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from skillweave.skills.spec import NAME_MAX_LENGTH, name_problems

__all__ = [
    "NOT_BOUND",
    "SCOPE_SUFFIX",
    "SKILL_ID_PATTERN",
    "SKILL_REFERENCE_PATTERN",
    "UPLOADED_ROOT_MARKER",
    "OwnerKind",
    "SkillOwner",
    "bound_name",
    "canonical_form",
    "is_scope",
    "name_key",
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
