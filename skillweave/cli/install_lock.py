"""What ``skills install`` installs and the lock it keeps: one :class:`InstallRequest` per source,
from a lock when no SOURCE is given (:func:`lock_requests`: our ``skills.lock``, else the open
``skills`` CLI's ``skills-lock.json``), the ``skills.lock`` kept (:func:`kept_lock`: beside a
``skills-lock.json``, which is read, never written), and what became of each ``computedHash``
of a ``skills-lock.json`` (:func:`hash_lines`). Called by :mod:`~skillweave.cli.install`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from skillweave.cli.exits import EXIT_USAGE, fail
from skillweave.config import Settings

__all__ = ["LOCK_NAME", "InstallRequest", "LockOption", "hash_lines", "kept_lock", "lock_requests"]

_SHORT: Final = 12
"""Hex digits shown of a version or a hash."""
LOCK_NAME: Final = "skills.lock"
"""The lock kept by default (``skills.install.LOCK_FILE``; named here so that the command's
options do not load the install package at start-up)."""

LockOption = Annotated[
    Path,
    typer.Option(
        "--lock",
        help="The lock file kept up to date (and read by an install without SOURCE; a "
        "skills-lock.json of the open skills CLI is read, and skills.lock beside it kept).",
    ),
]


@dataclass(frozen=True, slots=True)
class InstallRequest:
    """One source to install from (a ``skills.install.SkillSource``): the names (``*``: all)
    and plugins wanted, the registry it was found in, and for a locked install the commit, the
    versions expected and the open CLI's hashes."""

    source: Any
    names: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    registry: str | None = None
    commit: str | None = None
    expect: dict[str, str] | None = None
    cli_hashes: dict[str, str] | None = None


def kept_lock(lock: Path) -> Path:
    """The ``skills.lock`` skillweave keeps: `lock`, or beside it when `lock` names the open
    ``skills`` CLI's ``skills-lock.json`` (read, never written)."""
    from skillweave.skills.install import LOCK_FILE, SKILLS_CLI_LOCK

    return lock.parent / LOCK_FILE if lock.name == SKILLS_CLI_LOCK else lock


def lock_requests(lock: Path, settings: Settings) -> tuple[list[InstallRequest], Path, list[Any]]:
    """What an install without SOURCE installs: `lock` (``skills.lock``) as locked (each
    skill's registry kept), or, when it names the open ``skills`` CLI's ``skills-lock.json``
    (or ``skills.lock`` is absent and that file is beside it), each of that lock's skills at
    its ref, checked against its ``computedHash``. Answers the requests, the ``skills.lock`` to
    record them in, and the open lock's entries (name, computedHash)."""
    from skillweave.skills.install import SKILLS_CLI_LOCK, SkillsCliLock, SkillsLock

    cli_lock = lock.parent / SKILLS_CLI_LOCK
    if lock.name == SKILLS_CLI_LOCK or (not lock.exists() and cli_lock.is_file()):
        read = lock if lock.name == SKILLS_CLI_LOCK else cli_lock
        opened = SkillsCliLock.load(read)
        if not opened.skills:
            raise fail(f"no SOURCE and nothing in {read} to install", code=EXIT_USAGE)
        wanted = opened.requests(lock_path=read, git_host=settings.skills.git_host)
        by_source: dict[Any, list[Any]] = {}
        for item in wanted:  # a library's skills: one clone each source, not each skill
            by_source.setdefault(item.source, []).append(item)
        requests = [
            InstallRequest(
                source,
                tuple(item.name for item in items),
                cli_hashes={i.name: i.computed_hash for i in items if i.computed_hash},
            )
            for source, items in by_source.items()
        ]
        return requests, kept_lock(read), [(item.name, item.computed_hash) for item in wanted]
    locked = SkillsLock.load(lock)
    if not locked.skills:
        raise fail(f"no SOURCE and nothing in {lock} to install", code=EXIT_USAGE)
    requests = [
        InstallRequest(
            locked.source_of(entry, lock_path=lock),
            (entry.name,),
            registry=entry.registry,
            commit=entry.commit,
            expect={entry.name: entry.version},
        )
        for entry in locked.skills.values()
    ]
    return requests, lock, []


def hash_lines(installed: list[Any], checks: list[Any], lock: Path) -> list[str]:
    """One line per skill of a ``skills-lock.json`` install: its computedHash verified, or
    not reproducible here (the version recorded in `lock` is what is checked from now on)."""
    done = {item.record.name: item for item in installed}
    lines = []
    for name, digest in checks:
        item = done.get(name)
        if item is None:
            continue
        if digest is None:
            lines.append(f"{name}: skills-lock.json has no computedHash; {lock} locks it now")
        elif item.cli_hash == "verified":
            lines.append(f"{name}: skills-lock.json's computedHash {digest[:_SHORT]} verified")
        else:
            lines.append(
                f"{name}: skills-lock.json's computedHash cannot be reproduced here (a symlink or"
                f" a file name outside ASCII); {lock} locks version {item.version[:_SHORT]}"
            )
    return lines
