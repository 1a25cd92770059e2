"""``skillweave skills validate``: checking skills and libraries, strictly or as the runtime would.

:func:`validate_paths` accepts skill folders, SKILL.md files and library roots, and returns a
:class:`ValidationReport` of every diagnostic. The report decides what counts as an error: in
strict mode every violation of the spec does; otherwise only what lenient loading would refuse
(the rest are warnings). The rules themselves live in ``spec``; this module only collects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillweave.errors import ConfigError
from skillweave.skills.discovery import HIDDEN_SKILLS_FIELD, SkillScanner
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.loader import load_skill_file
from skillweave.skills.spec import Diagnostic

__all__ = ["ValidationReport", "validate_paths"]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """Diagnostics of a validation run and how many skill folders it looked at."""

    diagnostics: tuple[Diagnostic, ...]
    skills_checked: int
    strict: bool

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The diagnostics that fail the run."""
        return tuple(d for d in self.diagnostics if self.strict or d.fatal)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """The diagnostics that do not fail the run."""
        return tuple(d for d in self.diagnostics if not (self.strict or d.fatal))

    @property
    def ok(self) -> bool:
        """True when nothing counts as an error."""
        return not self.errors


def validate_paths(
    paths: Sequence[Path], *, strict: bool, include_hidden: bool = False
) -> ValidationReport:
    """Validate each path: a SKILL.md, a skill folder (with its sub-skills) or a library root
    (`include_hidden`: its hidden folders too, as ``SKILLS__INCLUDE_HIDDEN``).

    Raises:
        ConfigError: a path does not exist or is a file other than a SKILL.md.
    """
    diagnostics: list[Diagnostic] = []
    checked = 0
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
        if path.is_file():
            if path.name != SKILL_FILE:
                raise ConfigError(f"{path}: expected a SKILL.md, a skill folder or a library root")
            diagnostics.extend(load_skill_file(path.absolute()).diagnostics)
            checked += 1
            continue
        result = SkillScanner([path], include_hidden=include_hidden).scan()
        if result.skill_dirs == 0:
            message = f"no {SKILL_FILE} found in this folder or below it"
            if any(d.field == HIDDEN_SKILLS_FIELD for d in result.diagnostics):
                message = (
                    f"no {SKILL_FILE} found outside hidden folders (see '{HIDDEN_SKILLS_FIELD}')"
                )
            diagnostics.append(Diagnostic(str(path), "library", message, fatal=True))
        diagnostics.extend(result.diagnostics)
        checked += result.skill_dirs
    return ValidationReport(diagnostics=tuple(diagnostics), skills_checked=checked, strict=strict)
