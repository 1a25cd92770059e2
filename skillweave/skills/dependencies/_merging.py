"""Merging what the sources declare into one requirement per project, one range per npm
package and one ``requires-python``, and refusing what conflicts.

The rules, kept simple on purpose, are the package front's to describe (``skills.dependencies``).
:func:`counted_name` also counts names before anything is parsed, so a huge list costs little
to refuse. Called by discovery (``_inventory``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from skillweave.errors import DependencyError
from skillweave.skills.dependencies._declarations import NodeEntry, PythonEntry, leading_name

__all__ = ["counted_name", "merge_node", "merge_python", "merge_requires_python"]


def counted_name(entry: PythonEntry) -> str:
    """The canonical name a requirement will count as; an unreadable one fails here, early."""
    name = leading_name(entry.text)
    if name is None:
        raise DependencyError(
            f"{entry.where}: invalid requirement {entry.text!r}: it must start with a project name"
        )
    return name


def _parse(entry: PythonEntry) -> Requirement:
    try:
        requirement = Requirement(entry.text)
    except InvalidRequirement as exc:
        raise DependencyError(
            f"{entry.where}: invalid requirement {entry.text!r}: {exc}".replace("\n", " ")
        ) from None
    if requirement.url:
        raise DependencyError(
            f"{entry.where}: {entry.text!r} is a direct reference (a URL): a skill's "
            "dependencies come from the operator's package index, by name and version range"
        )
    return requirement


@dataclass(slots=True)
class _Project:
    """One Python project as merged so far, and every declaration that made it."""

    extras: set[str]
    specifier: SpecifierSet
    marker: Marker | None
    declarations: list[tuple[Requirement, str]]


def merge_python(entries: list[PythonEntry]) -> tuple[str, ...]:
    projects: dict[str, _Project] = {}
    for entry in entries:
        requirement = _parse(entry)
        name = canonicalize_name(requirement.name)
        extras = {canonicalize_name(extra) for extra in requirement.extras}
        project = projects.get(name)
        if project is None:
            projects[name] = _Project(
                extras, requirement.specifier, requirement.marker, [(requirement, entry.where)]
            )
            continue
        for earlier, earlier_where in project.declarations:
            if str(earlier.marker) != str(requirement.marker):
                _conflict(name, (earlier, earlier_where), (requirement, entry.where), "markers")
            _check_pins(name, (earlier, earlier_where), (requirement, entry.where))
        project.extras |= extras
        project.specifier &= requirement.specifier
        project.declarations.append((requirement, entry.where))
    merged = []
    for name in sorted(projects):
        project = projects[name]
        extras = f"[{','.join(sorted(project.extras))}]" if project.extras else ""
        marker = f"; {project.marker}" if project.marker is not None else ""
        merged.append(str(Requirement(f"{name}{extras}{project.specifier}{marker}")))
    return tuple(merged)


def _check_pins(name: str, first: tuple[Any, str], second: tuple[Any, str]) -> None:
    """Conflict when either declaration pins an exact version the other excludes.

    Each side is ``(thing with a .specifier, where)``: a Requirement, or a requires-python.
    """
    for pinned, other in ((first, second), (second, first)):
        for specifier in pinned[0].specifier:
            if specifier.operator != "==" or specifier.version.endswith(".*"):
                continue
            if not other[0].specifier.contains(specifier.version, prereleases=True):
                _conflict(name, pinned, other, "exact versions")


def _conflict(name: str, first: tuple[Any, str], second: tuple[Any, str], what: str) -> None:
    reason = {
        "markers": "the markers differ (declare it once, or with the same marker)",
        "exact versions": "an exact pin the other excludes",
    }[what]
    raise DependencyError(
        f"conflicting requirements for {name!r}: {first[0]} (from {first[1]}) and "
        f"{second[0]} (from {second[1]}): {reason}"
    )


def merge_node(entries: list[NodeEntry]) -> tuple[tuple[str, str], ...]:
    chosen: dict[str, NodeEntry] = {}
    for entry in entries:
        earlier = chosen.setdefault(entry.name, entry)
        if earlier.version_range != entry.version_range:
            raise DependencyError(
                f"conflicting Node dependency {entry.name!r}: {earlier.version_range!r} "
                f"(from {earlier.where}) and {entry.version_range!r} (from {entry.where}): "
                "ranges of one package must be written the same everywhere"
            )
    return tuple(sorted((name, entry.version_range) for name, entry in chosen.items()))


@dataclass(frozen=True, slots=True)
class _RequiresPython:
    specifier: SpecifierSet

    def __str__(self) -> str:
        return f"requires-python {self.specifier}"


def merge_requires_python(entries: list[PythonEntry]) -> str | None:
    if not entries:
        return None
    merged = SpecifierSet()
    seen: list[tuple[_RequiresPython, str]] = []
    for entry in entries:
        try:
            declared = _RequiresPython(SpecifierSet(entry.text))
        except InvalidSpecifier as exc:
            raise DependencyError(
                f"{entry.where}: invalid requires-python {entry.text!r}: {exc}"
            ) from None
        for earlier in seen:
            _check_pins("python", earlier, (declared, entry.where))
        seen.append((declared, entry.where))
        merged &= declared.specifier
    return str(merged)
