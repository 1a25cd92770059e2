"""Finding the skills of one or more library roots: :class:`SkillScanner` and its
:class:`ScanResult`.

A scan walks each root once. Every folder holding a ``SKILL.md`` is a skill; a skill folder
inside another is its child (DESIGN §3, skill trees). The walk is bounded: outside skills it
goes at most ``max_depth`` folders deep, it stops after ``max_skills`` skills, a skill with
more than ``max_package_files`` files is refused, hidden folders, ``node_modules`` and caches
are skipped, and a symlinked folder is followed only when it stays inside its root (never
inside a skill, whose package holds regular files only).

Hidden folders outside skills are walked when ``include_hidden`` is set (VCS metadata never
is; inside a skill they are never part of its package). Otherwise a root that yields no skill
is walked once more as if they were included, and a :data:`HIDDEN_SKILLS_FIELD` diagnostic
says how many ``SKILL.md`` files its hidden folders hold, in which folders, and how to include
them.

Rescans are cheap: an unchanged library is proved unchanged by stats alone, and only changed
skills are parsed and hashed again. Names are owned per namespace, directory roots by
precedence (later roots win), uploads never over a directory skill.

The package's modules: ``_scanner`` (:class:`SkillScanner`), ``_found`` (the folders found
and :class:`ScanResult`), ``_walk`` (one root walked within bounds), ``_hidden`` (the hint for
skills in hidden folders), ``_cache`` (cheap rescans), ``_precedence`` (who owns each name).
"""

from skillweave.skills.discovery._found import ScanResult
from skillweave.skills.discovery._hidden import HIDDEN_SKILLS_FIELD
from skillweave.skills.discovery._scanner import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_PACKAGE_FILES,
    DEFAULT_MAX_SKILLS,
    SkillScanner,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_PACKAGE_FILES",
    "DEFAULT_MAX_SKILLS",
    "HIDDEN_SKILLS_FIELD",
    "ScanResult",
    "SkillScanner",
]
