"""Installing skills from where they are published: a folder, a ZIP, or a git repository.

``skillweave skills install SOURCE`` and ``POST /v1/skills/install`` both come here. A source
is read into a temporary folder (:func:`fetched`), the skills in it are found
(:func:`find_skills`; one skill, or every skill of a repository of skills), and each is stored
as an uploaded skill (:class:`~skillweave.skills.stored.StoredSkills`: validated strictly,
rebuilt canonically, its name owned) with its **origin**: the source as given, the ref asked
for, the path inside the source, the commit it resolved to, and the version (the digest of
its files). :class:`SkillsLock` (``skills.lock``) keeps the same per skill, so that an install
can be made again exactly: the same commit, and a refusal if the files no longer hash to the
locked version.

Sources:

* a **git repository**: a URL (``https://``, ``ssh://``, ``git@host:path``, ``file://``) or a
  local repository (a folder with ``.git``, or a bare one). Its committed files at `ref` (a
  branch, a tag or a commit; default: its HEAD) are read, never a working tree. Git runs with
  no user or system configuration, no hooks, no submodules, no prompts, symlinks checked out as
  plain files, and only the https, ssh and file transports (``http://`` and ``git://`` carry
  no integrity and are refused). No submodule is read: a gitlink inside a skill is refused.
* a **ZIP** (``.zip``): unpacked with ``extract_package``'s checks.
* a **folder**: read in place (symlinks are never followed).

A local source (a folder, a ZIP, a repository, a ``file://`` URL) is judged by what would be
read before anything is (:func:`skillweave.skills.confinement.confine`): a ``.git`` file,
``commondir``, alternates, a symlink or a repository config leading outside it is refused, and
with an allowlist (the API's ``SKILLS__INSTALL_SOURCES``) its real path must be allowed too.

`path` narrows a source to a sub-folder; it may not leave the source.

The modules, in the order an install runs:

* ``_source``: what the user typed, read (:class:`SkillSource`, :func:`parse_source`), and the
  API's allowlist (:func:`source_allowed`).
* ``_fetched``: the source's files in a temporary folder (git clone, ZIP, folder).
* ``_staged``: the skills found in them, packaged with their signatures.
* ``_installation``: storing them, admitted and audited, all or none (:func:`install_skills`).
* ``_lockfile``: ``skills.lock`` (:class:`SkillsLock`).
* ``_marketplace``: a Claude Code plugin marketplace (``.claude-plugin/marketplace.json``):
  its plugins and their skill folders (:func:`read_marketplace`, :func:`plugin_skill_folders`).
"""

from skillweave.skills.install._fetched import Fetched, fetched
from skillweave.skills.install._installation import Installed, install_skills
from skillweave.skills.install._lockfile import LOCK_FILE, LockedSkill, SkillsLock
from skillweave.skills.install._marketplace import (
    MARKETPLACE_FILE,
    Marketplace,
    MarketplacePlugin,
    plugin_skill_folders,
    read_marketplace,
)
from skillweave.skills.install._source import SkillSource, parse_source, source_allowed
from skillweave.skills.install._staged import StagedSkill, find_skills, staged_skills
from skillweave.skills.stored import SkillOrigin

__all__ = [
    "LOCK_FILE",
    "MARKETPLACE_FILE",
    "Fetched",
    "Installed",
    "LockedSkill",
    "Marketplace",
    "MarketplacePlugin",
    "SkillOrigin",
    "SkillSource",
    "SkillsLock",
    "StagedSkill",
    "fetched",
    "find_skills",
    "install_skills",
    "parse_source",
    "plugin_skill_folders",
    "read_marketplace",
    "source_allowed",
    "staged_skills",
]
