"""``skillweave skills install``, ``update`` and ``remove``: skills from a folder, a ZIP or a git
repository, stored as uploaded skills in the settings' store (where workers, the API and the
manager read them), with their origin; ``skills.lock`` makes an install reproducible
(:mod:`skillweave.skills.install`).

Each change (an install, an update, a removal, an approval) is in the audit log, recorded before
it is made: when the record cannot be written the command says so in one line, exits 1, and
makes no change (an install of several sources keeps, and locks, those done before).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.cli.findings import (
    FindingsOption,
    findings_limit,
    row_scan_texts,
    scan_fields,
    scan_texts,
)
from skillweave.cli.library import directory_registry
from skillweave.config import Settings, get_settings
from skillweave.errors import AuditLogError, SkillNotFoundError
from skillweave.sandbox import audit_refusal
from skillweave.terminal import counted, terminal_safe

__all__ = ["approve", "install", "remove", "shown_source", "update"]

_SHORT: Final = 12
"""Hex digits shown of a version or a commit."""
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


def _installed_rows(
    installed: list[Any], admitted: dict[str, Any], settings: Settings
) -> list[dict[str, Any]]:
    """One row per installed skill; its scan as the report has it (``findings`` and
    ``review``, the report's own fields) and the policy's decision with its ``reason``."""
    rows = []
    for item in installed:
        admission = admitted.get(item.record.name)
        rows.append(
            {
                "name": item.record.name,
                "version": item.version,
                "enabled": item.record.enabled,
                "source": item.origin.source,
                "ref": item.origin.ref,
                "path": item.origin.path,
                "commit": item.origin.commit,
                "scan": admission.report.summary() if admission else None,
                "decision": admission.decision if admission else None,
                **scan_fields(admission.report if admission else None, settings),
                "warning": admission.warning if admission else None,
            }
        )
    return rows


def shown_source(
    source: str, *, path: str | None = None, ref: str | None = None, commit: str | None = None
) -> str:
    """Where an installed skill came from, as a person reads it: the source as given, then the
    skill's folder in it, the ref asked for and the commit read, each named
    (``https://…/skills.git (path skills/pdf, ref v1, commit 0123456789ab)``), so that none
    runs into the source as if it were part of its path or URL."""
    notes = _origin_notes(path=path, ref=ref, commit=commit)
    return f"{source} ({notes})" if notes else source


def _origin_notes(*, path: str | None, ref: str | None, commit: str | None) -> str:
    parts = [
        f"path {path}" if path else "",
        f"ref {ref}" if ref else "",
        f"commit {commit[:_SHORT]}" if commit else "",
    ]
    return ", ".join(part for part in parts if part)


def _show(rows: list[dict[str, Any]], *, as_json: bool, verb: str) -> None:
    if as_json:
        dump(rows)
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("skill")
    table.add_column("version", no_wrap=True)
    # A source is shown whole, folded if need be (an ellipsis could hide where it points), in
    # the room the short columns leave; its path, ref and commit on a line of their own.
    table.add_column("source", overflow="fold", ratio=1)
    table.add_column("scan")
    for row in rows:
        where = Text(terminal_safe(row["source"]))
        notes = _origin_notes(path=row["path"], ref=row["ref"], commit=row["commit"])
        if notes:
            where.append("\n" + terminal_safe(notes), style="dim")
        table.add_row(
            Text(terminal_safe(row["name"])),
            row["version"][:_SHORT],
            where,
            Text(terminal_safe(row["scan"] or "")),
        )
    out.print(table)
    out.print(f"{verb} {counted(len(rows), 'skill')}")
    for row in rows:
        for line in row_scan_texts(row):
            out.print(line, soft_wrap=True)
    for row in rows:
        if row["warning"]:
            err.print(Text(terminal_safe(f"warning: {row['warning']}")), soft_wrap=True)
        if not row["enabled"]:
            err.print(
                Text(
                    terminal_safe(
                        f"{row['name']} is off until approved (its scan: {row['scan']}): read "
                        f"`skillweave skills show {row['name']}`, then `skillweave skills "
                        f"approve {row['name']}`"
                    )
                ),
                soft_wrap=True,
            )


def _audit(settings: Settings, store: Any) -> Any:
    """The audit log, as this CLI's user writes it."""
    import getpass
    import socket

    from skillweave.storage.audit import AuditLog

    actor = f"cli:{getpass.getuser()}@{socket.gethostname()}"
    return AuditLog.from_settings(settings.audit, store, actor=actor)


@contextmanager
def _recorded(change: str) -> Iterator[None]:
    """A change refused because its audit record cannot be written: one line, exit 1 (the
    record is written before the change, so the change was not made)."""
    try:
        yield
    except AuditLogError as exc:
        raise fail(audit_refusal(exc, what="this change", so=f"nothing was {change}")) from None


@dataclass(frozen=True, slots=True)
class _Request:
    """One source to install from: the names (``*``: all) and plugins wanted, and for a
    locked install the commit, the versions expected and the open CLI's hashes."""

    source: Any
    names: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    commit: str | None = None
    expect: dict[str, str] | None = None
    cli_hashes: dict[str, str] | None = None


async def _install(settings: Settings, requests: list[_Request], done: list[Any]) -> dict[str, Any]:
    """Install each request (adding what each installed to `done`, so that a failure keeps
    the earlier ones), signatures and scans checked; the directory skills of the settings'
    libraries own their names."""
    from skillweave.cli.compose import open_store
    from skillweave.engines import skill_reviewer
    from skillweave.skills import Admissions
    from skillweave.skills.install import install_skills
    from skillweave.skills.stored import StoredSkills, directory_owners

    reserved = directory_owners(directory_registry(None))
    async with open_store(settings) as store:
        stored = StoredSkills(store)
        audit = _audit(settings, store)
        reviewer = skill_reviewer(settings)
        admissions = Admissions(settings.skills, store, audit=audit, reviewer=reviewer)
        try:
            for request in requests:
                done += await install_skills(
                    stored,
                    request.source,
                    only=request.names,
                    plugins=request.plugins,
                    reserved=reserved,
                    commit=request.commit,
                    expect=request.expect,
                    cli_hashes=request.cli_hashes,
                    admissions=admissions,
                )
        finally:
            await audit.aclose()  # the last records anchored in a checkpoint
    return admissions.admitted


def _install_locked(
    settings: Settings, requests: list[_Request], locked: Any, lock: Path
) -> tuple[list[Any], dict[str, Any]]:
    """:func:`_install`, then what it installed recorded in `locked` and saved to `lock`,
    also when a later source failed (the earlier ones are in the store)."""
    installed: list[Any] = []
    admitted: dict[str, Any] | None = None
    try:
        admitted = asyncio.run(_install(settings, requests, installed))
    finally:
        for item in installed:
            locked.record(item.record.name, item.version, item.origin, lock_path=lock)
        if installed or admitted is not None:
            locked.save(lock)
    assert admitted is not None  # it returned
    return installed, admitted


def install(
    source: Annotated[
        str | None,
        typer.Argument(
            help="A git URL, owner/repo[/path] (on SKILLS__GIT_HOST), a tree URL "
            "(…/owner/repo/tree/REF/PATH), a local repository, a ZIP or a folder (./x/y); "
            "none: everything in the lock (skills.lock, else skills-lock.json)."
        ),
    ] = None,
    *,
    ref: Annotated[
        str | None, typer.Option(help="A branch, tag or commit of a git source.")
    ] = None,
    path: Annotated[str | None, typer.Option(help="A sub-folder of the source.")] = None,
    skill: Annotated[
        list[str] | None,
        typer.Option("--skill", help="Install only this skill (repeatable; '*': every one)."),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="Install the skills of this plugin of the source's "
            ".claude-plugin/marketplace.json (repeatable).",
        ),
    ] = None,
    list_only: Annotated[
        bool,
        typer.Option(
            "--list", help="Show what the source holds and each skill's scan; install nothing."
        ),
    ] = False,
    lock: LockOption = Path(LOCK_NAME),
    as_json: JsonOption = False,
) -> None:
    """Install skills into the store, record where they came from, and lock them."""
    from skillweave.skills.install import SkillsLock, list_source, parse_source

    settings = get_settings()
    checks: list[tuple[str, str | None]] = []
    with errors():
        if source is None:
            if ref or path or skill or plugin or list_only:
                raise fail(
                    "--ref, --path, --skill, --plugin and --list need a SOURCE", code=EXIT_USAGE
                )
            requests, lock, checks = _lock_requests(lock, settings)
            locked = SkillsLock.load(lock)
        else:
            parsed = parse_source(source, ref=ref, path=path, git_host=settings.skills.git_host)
            if list_only:
                listing = asyncio.run(
                    list_source(parsed, only=tuple(skill or ()), plugins=tuple(plugin or ()))
                )
                _show_listing(listing, settings, as_json=as_json)
                return
            lock = _kept(lock)
            locked = SkillsLock.load(lock)
            requests = [_Request(parsed, tuple(skill or ()), tuple(plugin or ()))]
        with _recorded("installed"):
            installed, admitted = _install_locked(settings, requests, locked, lock)
    _show(_installed_rows(installed, admitted, settings), as_json=as_json, verb="installed")
    for line in _hash_lines(installed, checks, lock):
        err.print(Text(terminal_safe(line)), soft_wrap=True)


def _kept(lock: Path) -> Path:
    """The ``skills.lock`` skillweave keeps: `lock`, or beside it when `lock` names the open
    ``skills`` CLI's ``skills-lock.json`` (read, never written)."""
    from skillweave.skills.install import LOCK_FILE, SKILLS_CLI_LOCK

    return lock.parent / LOCK_FILE if lock.name == SKILLS_CLI_LOCK else lock


def _lock_requests(lock: Path, settings: Settings) -> tuple[list[_Request], Path, list[Any]]:
    """What an install without SOURCE installs: `lock` (``skills.lock``) as locked, or, when
    it names the open ``skills`` CLI's ``skills-lock.json`` (or ``skills.lock`` is absent and
    that file is beside it), each of that lock's skills at its ref, checked against its
    ``computedHash``. Answers the requests, the ``skills.lock`` to record them in, and the
    open lock's entries (name, computedHash)."""
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
            _Request(
                source,
                tuple(item.name for item in items),
                cli_hashes={i.name: i.computed_hash for i in items if i.computed_hash},
            )
            for source, items in by_source.items()
        ]
        return requests, _kept(read), [(item.name, item.computed_hash) for item in wanted]
    locked = SkillsLock.load(lock)
    if not locked.skills:
        raise fail(f"no SOURCE and nothing in {lock} to install", code=EXIT_USAGE)
    requests = [
        _Request(
            locked.source_of(entry, lock_path=lock),
            (entry.name,),
            commit=entry.commit,
            expect={entry.name: entry.version},
        )
        for entry in locked.skills.values()
    ]
    return requests, lock, []


def _hash_lines(installed: list[Any], checks: list[Any], lock: Path) -> list[str]:
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


def _show_listing(listing: Any, settings: Settings, *, as_json: bool) -> None:
    """What a source holds (``--list``): each skill with its version, folder, plugins and
    description, and its scan as the policy decides it; a marketplace's plugins that cannot
    be installed from it, with why. Nothing was stored, audited or locked."""
    from skillweave.skills import ScanDecision

    rows = [
        {
            "name": item.name,
            "version": item.version,
            "path": item.path or None,
            "plugins": list(item.plugins),
            "description": item.description,
            "scan": item.report.summary(),
            "decision": ScanDecision.of(item.report, settings.skills.scan).decision,
            **scan_fields(item.report, settings),
        }
        for item in listing.skills
    ]
    market = listing.marketplace
    unavailable = [p for p in market.plugins if p.unavailable] if market else []
    if as_json:
        dump(
            {
                "source": listing.source.location,
                "ref": listing.source.ref,
                "commit": listing.commit,
                "marketplace": market.model_dump(mode="json") if market else None,
                "marketplace_problem": listing.marketplace_problem,
                "skills": rows,
            }
        )
        return
    table = Table(box=None, pad_edge=False)
    for column in ("skill", "version", "path", "scan"):
        table.add_column(column, no_wrap=column == "version")
    table.add_column("description", overflow="fold", ratio=1)
    for row in rows:
        where = terminal_safe(row["path"] or ".")
        if row["plugins"]:
            where += terminal_safe(f" (plugin {', '.join(row['plugins'])})")
        table.add_row(
            Text(terminal_safe(row["name"])),
            row["version"][:_SHORT],
            Text(where),
            Text(terminal_safe(f"{row['decision']}: {row['scan']}")),
            Text(terminal_safe(row["description"])),
        )
    out.print(table)
    commit = f" at commit {listing.commit[:_SHORT]}" if listing.commit else ""
    out.print(
        Text(
            terminal_safe(
                f"{counted(len(rows), 'skill')} in {listing.source.location}{commit};"
                " nothing installed"
            )
        ),
        soft_wrap=True,
    )
    for row in rows:
        for line in row_scan_texts(row):
            out.print(line, soft_wrap=True)
    if listing.marketplace_problem:
        err.print(
            Text(terminal_safe(f"warning: {listing.marketplace_problem}; --plugin cannot be used")),
            soft_wrap=True,
        )
    for plugin in unavailable:
        out.print(
            Text(
                terminal_safe(f"plugin {plugin.name}: not installable here: {plugin.unavailable}")
            ),
            soft_wrap=True,
        )


def update(
    names: Annotated[
        list[str] | None, typer.Argument(help="Skills of the lock to update; none: all.")
    ] = None,
    *,
    lock: LockOption = Path(LOCK_NAME),
    as_json: JsonOption = False,
) -> None:
    """Install the newest commit of each locked skill's ref (a moved branch, a new tag) and
    lock it."""
    from skillweave.skills.install import SkillsLock

    settings = get_settings()
    with errors():
        lock = _kept(lock)
        locked = SkillsLock.load(lock)
        wanted = names or sorted(locked.skills)
        unknown = [name for name in wanted if name not in locked.skills]
        if unknown:
            raise fail(f"not in {lock}: {', '.join(unknown)}", code=EXIT_USAGE)
        requests = [
            _Request(locked.source_of(locked.skills[name], lock_path=lock), (name,))
            for name in wanted
        ]
        with _recorded("updated"):
            installed, admitted = _install_locked(settings, requests, locked, lock)
    _show(_installed_rows(installed, admitted, settings), as_json=as_json, verb="updated")


def remove(
    names: Annotated[list[str], typer.Argument(help="The installed skills to remove.")],
    *,
    lock: LockOption = Path(LOCK_NAME),
) -> None:
    """Remove installed (or uploaded) skills from the store and from the lock. Versions runs
    pinned stay readable to them."""
    from skillweave.cli.compose import open_store
    from skillweave.skills.install import SkillsLock
    from skillweave.skills.stored import StoredSkills

    async def drop() -> None:
        settings = get_settings()
        async with open_store(settings) as store:
            stored = StoredSkills(store)
            current = [await _existing(stored, name) for name in names]
            audit = _audit(settings, store)
            try:
                # Every removal recorded before the first is made (together: one block of
                # the log, as a rule); a record that cannot be written removes nothing.
                await asyncio.gather(
                    *(
                        audit.record("remove", skill=record.name, version=record.latest)
                        for record in current
                    )
                )
            finally:
                await audit.aclose()
            for name in names:
                await stored.delete(name)

    with errors(), _recorded("removed"):
        lock = _kept(lock)
        locked = SkillsLock.load(lock)
        asyncio.run(drop())
        if any(name in locked.skills for name in names):
            locked.skills = {k: v for k, v in locked.skills.items() if k not in names}
            locked.save(lock)
    out.print(Text(terminal_safe(f"removed {', '.join(names)}")), soft_wrap=True)


def approve(
    name: Annotated[str, typer.Argument(help="An installed or uploaded skill held off.")],
    *,
    note: Annotated[str, typer.Option(help="Why, for the audit log.")] = "",
    findings: FindingsOption = "10",
) -> None:
    """Approve the latest version of a skill its scan held off (``skills.scan.policy``
    approve): it is enabled, and the approval is in the audit log. The findings of the
    version approved are listed with their evidence, and why the scan held it."""
    from skillweave.cli.compose import open_store
    from skillweave.skills import ScanDecision, stored_report
    from skillweave.skills.stored import StoredSkills

    settings = get_settings()
    limit = findings_limit(findings)
    shown: list[Text] = []

    async def enable() -> str:
        async with open_store(settings) as store:
            stored = StoredSkills(store)
            current = await _existing(stored, name)
            report = await stored_report(store, name, current.latest)
            if report is not None:  # what is approved, read before it is
                decided = ScanDecision.of(report, settings.skills.scan)
                shown.extend(scan_texts(report, decided, name=name, limit=limit))
            audit = _audit(settings, store)
            try:  # recorded before it is made: a record that cannot be written approves nothing
                await audit.record(
                    "approval", skill=name, version=current.latest, decision="approved", note=note
                )
            finally:
                await audit.aclose()
            record = await stored.set_enabled(name, True)
            return record.latest

    with errors(), _recorded("approved"):
        version = asyncio.run(enable())
    for line in shown:
        out.print(line, soft_wrap=True)
    out.print(Text(terminal_safe(f"approved {name} version {version[:12]}")), soft_wrap=True)


async def _existing(stored: Any, name: str) -> Any:
    """The uploaded skill `name`, about to be changed.

    Raises:
        SkillNotFoundError: there is none (before anything is recorded).
    """
    record = await stored.get(name)
    if record is None:
        raise SkillNotFoundError(name)
    return record
