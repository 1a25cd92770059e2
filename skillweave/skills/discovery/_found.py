"""What a scan finds: the skill folders met during a walk (:class:`FoundSkill`) and the scan's
answer (:class:`ScanResult`).

The walk (``_walk``) makes the found folders, the cache (``_cache``) loads them, precedence
(``_precedence``) picks the winners and builds the result ``SkillScanner.scan`` returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from skillweave.skills.loader import LoadedSkill
from skillweave.skills.model import Skill
from skillweave.skills.names import SkillOwner
from skillweave.skills.spec import Diagnostic

__all__ = ["FileRecord", "FoundSkill", "ScanResult"]

FileRecord = tuple[str, str, int, int]
"""One package file as the walk saw it: (path in the package, path on disk, mtime ns, size)."""


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan found.

    Attributes:
        skills: the winning skill of each name, in discovery order (roots in order, each walked
            sorted), with parents and children resolved.
        diagnostics: warnings and refusals, per skill file and for the library as a whole.
        skill_dirs: how many skill folders were seen (including refused and overridden ones).
        owners: who owns each winning skill's name (its directory library, or the upload
            that holds it).
    """

    skills: dict[str, Skill]
    diagnostics: tuple[Diagnostic, ...] = ()
    skill_dirs: int = 0
    owners: Mapping[str, SkillOwner] = field(default_factory=dict)


@dataclass(slots=True)
class FoundSkill:
    """A skill folder met during the walk, before loading."""

    path: str
    root_index: int
    parent: FoundSkill | None
    linked: bool = False  # reached through a symlinked folder
    files: list[FileRecord] = field(default_factory=list)
    overflow: bool = False
    loaded: LoadedSkill | None = None
    version: str = ""

    @property
    def top(self) -> FoundSkill:
        """The top skill of this one's tree (itself for a top skill)."""
        item = self
        while item.parent is not None:
            item = item.parent
        return item
