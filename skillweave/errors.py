"""The one error hierarchy of skillweave.

Every error skillweave raises on purpose derives from :class:`SkillweaveError`. Leaves carry
their data as attributes so callers (the CLI, the agent loop, the activity boundary) can decide
what to do without parsing messages. Errors the model can fix (a wrong resource path, an unknown
skill) are turned into tool results by the agent loop; the others are raised.

    SkillweaveError
    ├── ConfigError                    bad settings or command-line input
    └── SkillError                     anything about a skill or a skill library
        ├── SkillNotFoundError         no skill of that name is attachable
        ├── SkillFormatError           a SKILL.md that cannot be read as a skill
        ├── ResourceError              read_skill_resource refused a file
        │   ├── ResourcePathError      the path is malformed or escapes the skill folder
        │   ├── ResourceNotFoundError  no such file in the skill
        │   ├── ResourceTooLargeError  the file is over the size cap
        │   └── BinaryResourceError    the file is not UTF-8 text
        ├── PackageError               a skill package (ZIP) cannot be built or extracted
        │   └── UnsafePackageError     an entry is unsafe: traversal, symlink, bomb, too many files…
        └── ToolSchemaError            a script's --help-json output is not a valid tool schema
"""

from __future__ import annotations

__all__ = [
    "BinaryResourceError",
    "ConfigError",
    "PackageError",
    "ResourceError",
    "ResourceNotFoundError",
    "ResourcePathError",
    "ResourceTooLargeError",
    "SkillError",
    "SkillFormatError",
    "SkillNotFoundError",
    "SkillweaveError",
    "ToolSchemaError",
    "UnsafePackageError",
]


_MAX_NAMES_SHOWN = 20


class SkillweaveError(Exception):
    """Root of every error skillweave raises on purpose."""


class ConfigError(SkillweaveError):
    """Settings or command-line input that cannot be used."""


class SkillError(SkillweaveError):
    """Something is wrong with a skill or a skill library."""


class SkillNotFoundError(SkillError):
    """No skill of this name is known (or attachable)."""

    def __init__(self, name: str, *, available: tuple[str, ...] = ()) -> None:
        self.name = name
        self.available = available
        shown = ", ".join(available[:_MAX_NAMES_SHOWN])
        if len(available) > _MAX_NAMES_SHOWN:
            shown += f" and {len(available) - _MAX_NAMES_SHOWN} more"
        hint = f"; available: {shown}" if available else ""
        super().__init__(f"unknown skill {name!r}{hint}")


class SkillFormatError(SkillError):
    """A SKILL.md that cannot be read as a skill (no frontmatter, bad YAML, no description)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class ResourceError(SkillError):
    """A skill resource could not be read; the message is safe to show to the model."""

    def __init__(self, skill: str, path: str, reason: str) -> None:
        self.skill = skill
        self.path = path
        self.reason = reason
        super().__init__(f"{skill}/{path}: {reason}")


class ResourcePathError(ResourceError):
    """The path is absolute, contains '..', or resolves outside the skill folder."""


class ResourceNotFoundError(ResourceError):
    """No such file in the skill folder."""


class ResourceTooLargeError(ResourceError):
    """The file is larger than the configured cap."""

    def __init__(self, skill: str, path: str, *, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(skill, path, f"file is {size} bytes, over the {limit}-byte limit")


class BinaryResourceError(ResourceError):
    """The file is not UTF-8 text and cannot be returned to the model."""


class PackageError(SkillError):
    """A skill package (ZIP) cannot be built or extracted."""


class UnsafePackageError(PackageError):
    """An archive entry is unsafe; `entry` names it and `reason` says why."""

    def __init__(self, entry: str, reason: str) -> None:
        self.entry = entry
        self.reason = reason
        super().__init__(f"unsafe package entry {entry!r}: {reason}")


class ToolSchemaError(SkillError):
    """A script's --help-json output is not a valid tool definition."""
