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

LockOption = Annotated[
    Path,
    typer.Option(
        "--lock",
        help="The lock file kept up to date (and read by an install without SOURCE).",
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


async def _install(
    settings: Settings,
    requests: list[tuple[Any, tuple[str, ...], str | None, dict[str, str] | None]],
    done: list[Any],
) -> dict[str, Any]:
    """Install each ``(source, names, commit, expected versions)`` (adding what each installed
    to `done`, so that a failure keeps the earlier ones), signatures and scans checked; the
    directory skills of the settings' libraries own their names."""
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
            for source, names, commit, expect in requests:
                done += await install_skills(
                    stored,
                    source,
                    only=names,
                    reserved=reserved,
                    commit=commit,
                    expect=expect,
                    admissions=admissions,
                )
        finally:
            await audit.aclose()  # the last records anchored in a checkpoint
    return admissions.admitted


def _install_locked(
    settings: Settings,
    requests: list[tuple[Any, tuple[str, ...], str | None, dict[str, str] | None]],
    locked: Any,
    lock: Path,
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
            help="A git URL or repository, a ZIP or a folder; none: everything in the lock, "
            "at its locked commit and version."
        ),
    ] = None,
    *,
    ref: Annotated[
        str | None, typer.Option(help="A branch, tag or commit of a git source.")
    ] = None,
    path: Annotated[str | None, typer.Option(help="A sub-folder of the source.")] = None,
    skill: Annotated[
        list[str] | None, typer.Option("--skill", help="Install only this skill (repeatable).")
    ] = None,
    lock: LockOption = Path("skills.lock"),
    as_json: JsonOption = False,
) -> None:
    """Install skills into the store, record where they came from, and lock them."""
    from skillweave.skills.install import SkillsLock, parse_source

    settings = get_settings()
    with errors():
        locked = SkillsLock.load(lock)
        if source is None:
            if ref or path or skill:
                raise fail("--ref, --path and --skill need a SOURCE", code=EXIT_USAGE)
            if not locked.skills:
                raise fail(f"no SOURCE and nothing in {lock} to install", code=EXIT_USAGE)
            requests = [
                (
                    locked.source_of(entry, lock_path=lock),
                    (entry.name,),
                    entry.commit,
                    {entry.name: entry.version},
                )
                for entry in locked.skills.values()
            ]
        else:
            requests = [(parse_source(source, ref=ref, path=path), tuple(skill or ()), None, None)]
        with _recorded("installed"):
            installed, admitted = _install_locked(settings, requests, locked, lock)
    _show(_installed_rows(installed, admitted, settings), as_json=as_json, verb="installed")


def update(
    names: Annotated[
        list[str] | None, typer.Argument(help="Skills of the lock to update; none: all.")
    ] = None,
    *,
    lock: LockOption = Path("skills.lock"),
    as_json: JsonOption = False,
) -> None:
    """Install the newest commit of each locked skill's ref (a moved branch, a new tag) and
    lock it."""
    from skillweave.skills.install import SkillsLock

    settings = get_settings()
    with errors():
        locked = SkillsLock.load(lock)
        wanted = names or sorted(locked.skills)
        unknown = [name for name in wanted if name not in locked.skills]
        if unknown:
            raise fail(f"not in {lock}: {', '.join(unknown)}", code=EXIT_USAGE)
        requests = [
            (locked.source_of(locked.skills[name], lock_path=lock), (name,), None, None)
            for name in wanted
        ]
        with _recorded("updated"):
            installed, admitted = _install_locked(settings, requests, locked, lock)
    _show(_installed_rows(installed, admitted, settings), as_json=as_json, verb="updated")


def remove(
    names: Annotated[list[str], typer.Argument(help="The installed skills to remove.")],
    *,
    lock: LockOption = Path("skills.lock"),
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
