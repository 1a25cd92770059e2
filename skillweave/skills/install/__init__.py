"""Installing skills from where they are published: a folder, a ZIP, or a git repository,
named as the ecosystem names them (``owner/repo``, tree URLs, plugin marketplaces).

``skillweave skills install SOURCE`` and ``POST /v1/skills/install`` both come here. A source
is read into a temporary folder (:func:`fetched`), the skills in it are found
(:func:`find_skills`; one skill, or every skill of a repository of skills, or the skills of the
marketplace plugins named) and each is stored as an uploaded skill
(:class:`~skillweave.skills.stored.StoredSkills`: validated strictly, rebuilt canonically, its
name owned) with its **origin**: the source's canonical git URL (or path), the ref asked for,
the path inside the source, the commit it resolved to, and the version (the digest of its
files). :class:`SkillsLock` (``skills.lock``) keeps the same per skill, so that an install can
be made again exactly: the same commit, and a refusal if the files no longer hash to the locked
version. :func:`list_source` reads and scans a source the same way, storing nothing.

Sources:

* a **git repository**: a URL (``https://``, ``ssh://``, ``git@host:path``, ``file://``),
  ``owner/repo[/path]`` on ``SKILLS__GIT_HOST``, a tree URL (``…/owner/repo/tree/REF/PATH``),
  or a local repository (a folder with ``.git``, or a bare one). Its committed files at `ref`
  (a branch, a tag or a commit; default: its HEAD) are read, never a working tree. Git runs
  with no user or system configuration, no hooks, no submodules, no prompts, symlinks checked
  out as plain files, and only the https, ssh and file transports (``http://`` and ``git://``
  carry no integrity and are refused). No submodule is read: a gitlink inside a skill is
  refused.
* a **ZIP** (``.zip``): unpacked with ``extract_package``'s checks.
* a **folder**: read in place (symlinks are never followed).

A local source (a folder, a ZIP, a repository, a ``file://`` URL) is judged by what would be
read before anything is (:func:`skillweave.skills.confinement.confine`): a ``.git`` file,
``commondir``, alternates, a symlink or a repository config leading outside it is refused, and
with an allowlist (the API's ``SKILLS__INSTALL_SOURCES``) its real path must be allowed too.

`path` narrows a source to a sub-folder; it may not leave the source.

The modules, in the order an install runs:

* ``_address``: the ecosystem's names of a repository (``owner/repo``, tree URLs) read into
  one canonical git URL, ref and path (:class:`RepositoryAddress`).
* ``_source``: what the user typed, read (:class:`SkillSource`, :func:`parse_source`), and the
  API's allowlist (:func:`source_allowed`).
* ``_fetched``: the source's files in a temporary folder (git clone, ZIP, folder).
* ``_marketplace``: a Claude Code plugin marketplace (``.claude-plugin/marketplace.json``):
  its plugins and their skill folders (:func:`read_marketplace`, :func:`plugin_skill_folders`).
* ``_plugins``: which skill folders an install takes (every one, or the plugins').
* ``_staged``: the skills found in them, packaged with their signatures.
* ``_installation``: storing them, admitted and audited, all or none (:func:`install_skills`).
* ``_contents``: what a source holds, scanned, stored nowhere (:func:`list_source`).
* ``_lockfile``: ``skills.lock`` (:class:`SkillsLock`).
* ``_skills_cli_lock``: the open ``skills`` CLI's ``skills-lock.json`` and its
  ``computedHash`` (:class:`SkillsCliLock`, :func:`skills_cli_hash`).
"""

from skillweave.skills.install._address import RepositoryAddress, read_address
from skillweave.skills.install._contents import ListedSkill, SourceListing, list_source
from skillweave.skills.install._fetched import Fetched, fetched
from skillweave.skills.install._installation import HashCheck, Installed, install_skills
from skillweave.skills.install._lockfile import LOCK_FILE, LockedSkill, SkillsLock
from skillweave.skills.install._marketplace import (
    MARKETPLACE_FILE,
    Marketplace,
    MarketplacePlugin,
    plugin_skill_folders,
    read_marketplace,
)
from skillweave.skills.install._skills_cli_lock import (
    SKILLS_CLI_LOCK,
    SkillsCliEntry,
    SkillsCliLock,
    SkillsCliRequest,
    skills_cli_hash,
)
from skillweave.skills.install._source import SkillSource, parse_source, source_allowed
from skillweave.skills.install._staged import ALL_SKILLS, StagedSkill, find_skills, staged_skills
from skillweave.skills.stored import SkillOrigin

__all__ = [
    "ALL_SKILLS",
    "LOCK_FILE",
    "MARKETPLACE_FILE",
    "SKILLS_CLI_LOCK",
    "Fetched",
    "HashCheck",
    "Installed",
    "ListedSkill",
    "LockedSkill",
    "Marketplace",
    "MarketplacePlugin",
    "RepositoryAddress",
    "SkillOrigin",
    "SkillSource",
    "SkillsCliEntry",
    "SkillsCliLock",
    "SkillsCliRequest",
    "SkillsLock",
    "SourceListing",
    "StagedSkill",
    "fetched",
    "find_skills",
    "install_skills",
    "list_source",
    "parse_source",
    "plugin_skill_folders",
    "read_address",
    "read_marketplace",
    "skills_cli_hash",
    "source_allowed",
    "staged_skills",
]
