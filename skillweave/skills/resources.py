"""Tier 2 and 3 of progressive disclosure: a skill's activation payload and its files.

:func:`render_activation` is what ``activate_skill`` returns: the body wrapped in
``<skill_content name="…">``, the bundled files in ``<skill_resources>`` (capped, with a count
of the rest) and, for a parent, its children's catalog entries in ``<sub_skills>``.
:func:`read_resource` is ``read_skill_resource``: one text file of the skill, with the path
confined to the skill folder (no absolute paths, no ``..``, no hidden files, no symlink that
leads out), a size cap, and a clear refusal for binary files. Its errors are meant to go back
to the model as tool results.

A skill's ``evals/`` folder (its evals and their expected answers, ``skillweave.evals``) is
withheld from the agent that uses the skill: :func:`disclosed_resources` (the
``<skill_resources>`` listing) leaves it out and :func:`read_resource` refuses it like a hidden
file, at the skill's top level and in any child skill's folder, whichever way the path is
spelled (case, ``./``, a symlink inside the skill that leads there). :func:`is_withheld` is
that rule, once: the engines' ``read_skill_resource``, the MCP front door's tool and its
``skill://`` resources all read through here. Only what the model is shown is withheld: a
script still gets the whole package in its sandbox, and an operator's listing of a skill's
files (:func:`list_resources`, the API) still names every file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Final
from xml.sax.saxutils import quoteattr

from skillweave.errors import (
    BinaryResourceError,
    ResourceNotFoundError,
    ResourcePathError,
    ResourceTooLargeError,
)
from skillweave.skills.catalog import render_entries
from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.model import Skill

__all__ = [
    "DEFAULT_RESOURCE_LISTING",
    "DEFAULT_RESOURCE_MAX_BYTES",
    "WITHHELD_FOLDER",
    "clean_resource_path",
    "disclosed_resources",
    "is_withheld",
    "list_resources",
    "read_resource",
    "render_activation",
]

DEFAULT_RESOURCE_MAX_BYTES: Final = 256 * 1024
DEFAULT_RESOURCE_LISTING: Final = 50
_WINDOWS_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_BINARY_SNIFF_BYTES: Final = 8192
WITHHELD_FOLDER: Final = "evals"
"""A skill's folder of evals (``evals/evals.json``, ``evals/triggers.json``, their files): the
expected answers, kept from the agent under evaluation."""
_WITHHELD_REASON: Final = (
    "the skill's evals are kept from the agent that uses it; read its instructions and "
    "references instead"
)


def list_resources(skill: Skill) -> list[str]:
    """The skill's bundled files other than SKILL.md, sorted (child skills excluded): every
    one, for an operator (the model is shown :func:`disclosed_resources`)."""
    return sorted(rel for rel, _ in iter_package_files(skill.path) if rel != SKILL_FILE)


def disclosed_resources(skill: Skill) -> list[str]:
    """The files of :func:`list_resources` the model may see: all but the withheld ones."""
    return [rel for rel in list_resources(skill) if not is_withheld(rel)]


def is_withheld(relative: str, *, root: str | None = None) -> bool:
    """Whether the clean relative path `relative` is a skill's ``evals/`` folder or lies in it.

    Args:
        relative: a path inside a skill folder, ``/``-separated, no ``.`` or ``..`` parts.
        root: the skill folder on disk. Given, an ``evals`` folder deeper down counts too when
            the folder holding it is a child skill's (it has a SKILL.md); without it, only the
            skill's own top-level ``evals/``.

    The name is compared without case: on a case-insensitive file system ``Evals/`` is the
    same folder.
    """
    parts = relative.split("/")
    for depth, part in enumerate(parts):
        if part.casefold() != WITHHELD_FOLDER:
            continue
        if depth == 0:
            return True
        if root is not None and os.path.isfile(os.path.join(root, *parts[:depth], SKILL_FILE)):
            return True
    return False


def render_activation(
    skill: Skill,
    *,
    children: Sequence[Skill] = (),
    max_listed: int = DEFAULT_RESOURCE_LISTING,
) -> str:
    """The text ``activate_skill`` returns for `skill`.

    Args:
        skill: the skill being activated.
        children: its sub-skills to announce (usually the enabled ones).
        max_listed: list at most this many files; the rest are counted.
    """
    parts = [f"<skill_content name={quoteattr(skill.name)}>\n", skill.body.rstrip("\n"), "\n"]
    files = disclosed_resources(skill)
    if files:
        shown = files[:max_listed]
        parts.append("<skill_resources>\n")
        parts.extend(f"{name}\n" for name in shown)
        if len(files) > len(shown):
            rest = len(files) - len(shown)
            parts.append(f"… and {rest} more file{'s' if rest != 1 else ''}\n")
        parts.append("</skill_resources>\n")
    if children:
        parts.append(f"<sub_skills>\n{render_entries(children)}</sub_skills>\n")
    parts.append("</skill_content>\n")
    return "".join(parts)


def clean_resource_path(skill: Skill, path: str) -> str:
    """`path` as a clean relative path inside `skill` (``a/b.md``), or ResourcePathError."""
    if not path or not path.strip():
        raise ResourcePathError(skill.name, path, "the path is empty")
    if "\0" in path:
        raise ResourcePathError(skill.name, path, "the path contains a NUL byte")
    normalized = path.replace("\\", "/")
    if normalized.startswith("/") or _WINDOWS_DRIVE.match(normalized):
        raise ResourcePathError(skill.name, path, "absolute paths are not allowed")
    parts = [part for part in normalized.split("/") if part not in ("", ".")]
    if any(part == ".." for part in parts):
        raise ResourcePathError(skill.name, path, "'..' is not allowed in a resource path")
    if not parts:
        raise ResourcePathError(skill.name, path, "the path names the skill folder itself")
    if any(part.startswith(".") for part in parts):
        raise ResourcePathError(skill.name, path, "hidden files are not part of the skill")
    return "/".join(parts)


def largest_read(skill: Skill, *, max_bytes: int = DEFAULT_RESOURCE_MAX_BYTES) -> int:
    """The most characters :func:`read_resource` can answer for `skill`: the size of the
    largest file under its folder (every file a path may reach: children, skipped folders and
    the targets of links included), at most `max_bytes` (a larger file is refused). UTF-8 text
    has no more characters than bytes, so the read of any of its files is no longer."""
    largest = 0
    for folder, _, names in os.walk(skill.path):
        for name in names:
            try:
                size = os.stat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            if size >= max_bytes:
                return max_bytes
            largest = max(largest, size)
    return largest


def read_resource(skill: Skill, path: str, *, max_bytes: int = DEFAULT_RESOURCE_MAX_BYTES) -> str:
    """Read one text file of `skill`.

    Args:
        skill: the (active) skill.
        path: a path relative to the skill folder, e.g. ``references/api.md``.
        max_bytes: refuse files larger than this.

    Raises:
        ResourcePathError: the path is malformed, leads outside the skill folder, or into a
            withheld folder (:func:`is_withheld`).
        ResourceNotFoundError: no such file.
        ResourceTooLargeError: the file is over `max_bytes`.
        BinaryResourceError: the file is not UTF-8 text.
    """
    relative = clean_resource_path(skill, path)
    root = os.path.realpath(skill.path)
    target = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, target]) != root:
        raise ResourcePathError(skill.name, path, "the path leads outside the skill folder")
    resolved = os.path.relpath(target, root).replace(os.sep, "/")
    if is_withheld(relative, root=root) or is_withheld(resolved, root=root):
        raise ResourcePathError(skill.name, path, _WITHHELD_REASON)
    if not os.path.isfile(target):
        hint = "it is a folder" if os.path.isdir(target) else "no such file in the skill"
        raise ResourceNotFoundError(skill.name, path, hint)
    with open(target, "rb") as handle:
        data = handle.read(max_bytes + 1)  # bounded even if the file grows after a stat
        size = os.fstat(handle.fileno()).st_size
    if len(data) > max_bytes:
        raise ResourceTooLargeError(skill.name, path, size=max(size, len(data)), limit=max_bytes)
    try:
        if b"\0" in data[:_BINARY_SNIFF_BYTES]:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        return data.decode("utf-8")
    except UnicodeDecodeError:
        reason = f"a binary file ({size} bytes) cannot be read as text; run a script on it instead"
        raise BinaryResourceError(skill.name, path, reason) from None
