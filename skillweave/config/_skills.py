"""The skill sections: ``SKILLS__`` (where skills come from and how they are shown, with its
``SCAN`` and ``TRUST`` subsections) and ``AUDIT__`` (the skill audit log); and where the
bundled skills are (:func:`bundled_skills_dir`). Part of :class:`~skillweave.config.Settings`;
the skill library, the scanner, signing and the audit log read them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

__all__ = [
    "BUNDLED",
    "AuditSettings",
    "CatalogMode",
    "RegistryKind",
    "RegistrySource",
    "ScanAction",
    "ScanSettings",
    "SelectionMode",
    "Severity",
    "SkillsSettings",
    "TrustSettings",
    "bundled_skills_dir",
]

CatalogMode = Literal["all", "enabled", "auto"]
SelectionMode = Literal["auto", "keyword", "bm25", "embeddings", "hybrid"]

BUNDLED = "bundled"
"""Placeholder in ``skills.dirs`` for the skills shipped with skillweave."""

_DIRS_FORM: Final = (
    f"expected a path, paths joined by {os.pathsep!r}, or a JSON list of paths, "
    'e.g. SKILLS__DIRS=\'["./skills", "bundled"]\''
)


def bundled_skills_dir() -> Path:
    """The folder of skills shipped with skillweave.

    A wheel carries them inside the package (``skillweave/_bundled_skills``); a source checkout
    or editable install uses the repository's top-level ``skills/``.
    """
    package = Path(__file__).parent.parent  # skillweave/, above this config package
    packaged = package / "_bundled_skills"
    if packaged.is_dir():
        return packaged
    return package.resolve().parent / "skills"


Severity = Literal["critical", "high", "medium", "low"]
"""How bad a scan finding is (``skillweave.skills.scan``)."""
ScanAction = Literal["block", "approve", "warn"]
"""What a finding of a severity does to a new skill version: it may not be enabled (block),
it waits for an operator's approval (approve), or it is enabled and the finding shown (warn)."""


class ScanSettings(BaseModel):
    """The scan of every new skill version (``skills.scan``) and what its findings decide."""

    model_config = ConfigDict(extra="forbid")

    policy: dict[Severity, ScanAction] = Field(
        default_factory=lambda: {
            "critical": "block",
            "high": "approve",
            "medium": "warn",
            "low": "warn",
        },
        description="Severity → block, approve (an operator enables it) or warn; a severity "
        "left out warns.",
    )
    review_model: str | None = Field(
        default=None,
        min_length=1,
        description="A model profile (MODEL__PROFILES__<NAME>__…, or PROVIDER:NAME) that also "
        "reviews every new version and agent draft against a fixed rubric; its findings join "
        "the scanner's under the same policy, marked as the model's. Unset: no review. A "
        "review that fails (unreachable, timed out, an answer outside the schema) is said in "
        "the report, and the scanner's findings alone decide.",
    )
    review_timeout_seconds: float = Field(
        default=60.0, gt=0, le=3_600, description="How long one model review may take in all."
    )
    review_max_chars: int = Field(
        default=60_000,
        ge=1_000,
        description="The characters of a skill's files sent to the review in all (SKILL.md "
        "first, then references and scripts); what is left out is named in the report.",
    )
    review_file_max_chars: int = Field(
        default=20_000,
        ge=500,
        description="The characters of one file sent to the review; a longer file is cut, "
        "with a marker where it was cut.",
    )


class TrustSettings(BaseModel):
    """Skill signatures (``skills.trust``): the keys trusted to sign skill versions and what
    becomes of a version no trusted key signed."""

    model_config = ConfigDict(extra="forbid")

    keys: dict[str, str] = Field(
        default_factory=dict,
        description="Key id → an Ed25519 public key (base64 of its 32 bytes, as `skillweave "
        "skills keygen` prints it).",
    )
    unsigned: Literal["allow", "warn", "refuse"] = Field(
        default="warn",
        description="A version no trusted key signed: allow, warn (run, and say so), or refuse. "
        "A signature that does not match its package is refused whatever this says.",
    )


class AuditSettings(BaseModel):
    """The skill audit log (``skillweave.storage.audit``): an append-only, hash-chained record
    of every skill lifecycle and use event, kept in the artifact store."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Record skill lifecycle and use events.")
    key: SecretStr | None = Field(
        default=None,
        description="AUDIT__KEY: when set, every record's link is an HMAC under it, so that "
        "only a holder of the key can write a chain `audit verify` accepts.",
    )


RegistryKind = Literal["index", "marketplace", "api"]
"""Where a registry's listing comes from: a static JSON index (a file or an https URL), a
repository of skills (a marketplace repository, or any repository whose skills are listed), or
another skillweave API (its ``GET /v1/registry/search`` and ``/v1/skills``)."""

_REGISTRY_PREFIXES: Final[dict[str, RegistryKind]] = {
    "index:": "index",
    "marketplace:": "marketplace",
    "api:": "api",
}


class RegistrySource(BaseModel):
    """One entry of ``SKILLS__REGISTRIES``: where to look for skills that are not installed.

    Written as an object (``{"kind": "index", "location": "https://…/index.json"}``) or as
    text: ``index:LOCATION``, ``marketplace:SOURCE``, ``api:URL``; text without a prefix is an
    index when it ends in ``.json`` and a marketplace (a repository of skills) otherwise.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: RegistryKind
    location: str = Field(
        min_length=1,
        max_length=2048,
        description="index: a path or https:// URL of the JSON index; marketplace: what "
        "`skills install` takes (owner/repo, a git URL, a folder); api: the skillweave API's "
        "base URL.",
    )
    name: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._-]{1,64}$",
        description="What results from it are labelled; default: its location.",
    )
    token: SecretStr | None = Field(
        default=None, description="api: the bearer token of that API (sent only to it)."
    )
    key: str | None = Field(
        default=None,
        description="index: a key id of SKILLS__TRUST__KEYS the index must be signed by; "
        "unset: an unsigned index is read, a signed one verified when its key is trusted.",
    )

    @field_validator("location")
    @classmethod
    def _no_control(cls, value: str) -> str:
        if any(ord(char) < 32 for char in value):
            raise ValueError("a registry location has no control characters")
        return value.strip()

    @property
    def label(self) -> str:
        """What the registry's results are labelled with."""
        return self.name or self.location


class SkillsSettings(BaseModel):
    """Where skills come from and how they are shown to the model."""

    # NoDecode: the environment's text reaches `_dirs_as_typed` as typed, not JSON-decoded.
    dirs: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: [BUNDLED, "./.agents/skills", "~/.skillweave/skills"],
        description="Skill library roots, lowest precedence first; 'bundled' = shipped skills. "
        f"A path, paths joined by {os.pathsep!r}, or a JSON list of paths.",
    )
    catalog_mode: CatalogMode = "enabled"
    catalog_top_k: int = Field(
        default=20,
        ge=1,
        le=200,
        description="Skills the auto catalog lists: the most that stay within 1,500 tokens "
        "(bench/selection_bench.py).",
    )
    selection: SelectionMode = Field(
        default="auto",
        description="How skills are ranked for a request (auto catalog, search_skills, "
        "preload): auto = hybrid with the embeddings extra installed, else bm25.",
    )
    catalog_max_chars: int = Field(
        default=6_000, ge=0, description="Budget of the tier-1 catalog text; 0 = unlimited."
    )
    disabled: list[str] = Field(default_factory=list, description="Skill names never offered.")
    max_depth: int = Field(default=6, ge=1, le=32)
    max_skills: int = Field(default=20_000, ge=1)
    include_hidden: bool = Field(
        default=False,
        description="Also look for skills in hidden folders of a library (skills/.curated/…); "
        "VCS folders (.git) are never searched, and a skill's own hidden folders are never "
        "part of it.",
    )
    resource_max_bytes: int = Field(default=256 * 1024, ge=1)
    activation_resource_listing: int = Field(default=50, ge=0)
    package_max_files: int = Field(default=1_000, ge=1)
    package_max_bytes: int = Field(default=50 * 1024 * 1024, ge=1)
    package_max_ratio: int = Field(default=100, ge=1)
    uploaded_dir: Path = Field(
        default=Path("~/.skillweave/cache/uploaded-skills"),
        description="Where skills uploaded over the API are unpacked for the engines to scan "
        "(a folder of its own: it is cleared of anything else).",
    )
    uploaded_refresh_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often a long-running process reads the store's skill records "
        "whole even when the store's generation marker did not move (a fallback for writers "
        "that do not write it); changes that move it are seen every SKILLS__RELOAD_SECONDS.",
    )
    reload_seconds: float = Field(
        default=2.0,
        ge=0,
        description="How often long-running processes (worker, dev, API, manager, MCP) look "
        "for added, changed and removed skills, in the skill folders and in the store "
        "(installed, uploaded, agent-published, enabled, disabled); 0: never (restart).",
    )
    scan: ScanSettings = Field(default_factory=ScanSettings)
    trust: TrustSettings = Field(default_factory=TrustSettings)
    install_sources: list[str] = Field(
        default_factory=list,
        description="Sources the API may install skills from (POST /v1/skills/install): "
        "shell-style patterns over git URLs and local paths, e.g. "
        "'https://github.com/acme/*'; empty = none (the CLI installs from anywhere its user "
        "can read). A local source's real path (symlinks resolved) must match too, and a "
        "source whose git pointers lead outside it is refused on every door.",
    )

    git_host: str = Field(
        default="https://github.com",
        min_length=1,
        description="Where `owner/repo` sources (`skills install owner/repo`, registries) "
        "are cloned from: `{git_host}/owner/repo.git`; an https:// or file:// base.",
    )
    registries: Annotated[list[RegistrySource], NoDecode] = Field(
        default_factory=list,
        description="Where `skills find`, GET /v1/registry/search and agents' find_skills "
        "look for skills that are not installed, in order: a JSON list of "
        "`index:PATH_OR_URL`, `marketplace:SOURCE` or `api:URL` (or objects with kind, "
        "location, name, token, key).",
    )
    registry_cache_seconds: float = Field(
        default=300.0,
        ge=0,
        description="How long a registry's listing is used before it is read again; 0: read "
        "it on every search. A registry that cannot be read is answered from its last "
        "listing, marked stale, for at most a day.",
    )
    registry_cache_dir: Path = Field(
        default=Path("~/.skillweave/cache/registries"),
        description="Where registry listings are cached between processes.",
    )

    @field_validator("git_host")
    @classmethod
    def _git_host_form(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("https://", "file://", "ssh://")):
            raise ValueError("the git host is an https://, ssh:// or file:// base URL")
        return value

    @field_validator("registries", mode="before")
    @classmethod
    def _registries_as_typed(cls, value: object) -> object:
        """Each entry as text (``index:…``, ``marketplace:…``, ``api:…``, or unprefixed) or
        as an object."""
        if isinstance(value, str):
            if not value.strip().startswith("["):
                value = [value]
            else:
                try:
                    value = json.loads(value)
                except ValueError:
                    raise ValueError(
                        "expected one registry, or a JSON list of them, e.g. SKILLS__REGISTRIES="
                        '\'["marketplace:acme/skills", "index:/srv/index.json"]\''
                    ) from None
        if not isinstance(value, list):
            return value
        return [_registry_entry(entry) for entry in value]

    @field_validator("dirs", mode="before")
    @classmethod
    def _dirs_as_typed(cls, value: object) -> object:
        """``SKILLS__DIRS`` as a user types it: ``/some/path``, ``/a:/b`` (``os.pathsep``),
        or JSON ``["/a", "bundled"]``; empty entries of the plain form are dropped."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text.startswith("["):
            return [entry for entry in text.split(os.pathsep) if entry.strip()]
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError(f"{_DIRS_FORM}; this starts with '[' but is not JSON") from None

    @property
    def pinned_dir(self) -> Path:
        """Where skill versions a run was pinned to, and the library no longer holds, are
        unpacked from the store: ``UPLOADED_DIR.pinned``, one folder per name and version."""
        folder = self.uploaded_dir.expanduser()
        return folder.with_name(f"{folder.name}.pinned")

    def resolved_dirs(self) -> list[Path]:
        """The configured roots as paths, ``bundled`` and ``~`` expanded, order kept."""
        out: list[Path] = []
        for entry in self.dirs:
            out.append(bundled_skills_dir() if entry == BUNDLED else Path(entry).expanduser())
        return out


def _registry_entry(entry: object) -> object:
    """One ``SKILLS__REGISTRIES`` entry written as text, as an object."""
    if not isinstance(entry, str):
        return entry
    text = entry.strip()
    for prefix, kind in _REGISTRY_PREFIXES.items():
        if text.startswith(prefix):
            return {"kind": kind, "location": text[len(prefix) :]}
    kind = "index" if text.lower().endswith(".json") else "marketplace"
    return {"kind": kind, "location": text}
