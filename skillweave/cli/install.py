"""``skillweave skills install``, ``update``, ``remove`` and ``approve``: skills from a folder,
a ZIP or a git repository, stored as uploaded skills in the settings' store (where workers, the
API and the manager read them), with their origin; ``skills.lock`` makes an install
reproducible (:mod:`skillweave.skills.install`).

Each change (an install, an update, a removal, an approval) is in the audit log, recorded before
it is made: when the record cannot be written the command says so in one line, exits 1, and
makes no change (an install of several sources keeps, and locks, those done before;
:mod:`~skillweave.cli.audit_writer`). What an install prints is
:mod:`~skillweave.cli.install_table`'s (``--list``: :mod:`~skillweave.cli.source_listing`'s);
the locks it reads and keeps, :mod:`~skillweave.cli.install_lock`'s. ``update --gate`` makes a
new version current only when its evals keep the current one's pass rate
(:mod:`~skillweave.cli.eval_gate`); ``approve`` shows the version's evals in a line.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from skillweave.cli.audit_writer import cli_audit, recorded
from skillweave.cli.console import JsonOption, err, out
from skillweave.cli.eval_gate import (
    GateAllowMissingOption,
    GateGraderOption,
    GateModelOption,
    GateOption,
    GateRepeatOption,
    GateToleranceOption,
    gate_options,
)
from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.cli.findings import FindingsOption, findings_limit, scan_texts
from skillweave.cli.install_lock import (
    LOCK_NAME,
    InstallRequest,
    LockOption,
    hash_lines,
    kept_lock,
    lock_requests,
)
from skillweave.cli.install_table import installed_rows, show_installed
from skillweave.cli.library import directory_registry, registry_of
from skillweave.cli.source_listing import show_listing
from skillweave.config import Settings, get_settings
from skillweave.errors import SkillNotFoundError
from skillweave.terminal import terminal_safe

__all__ = ["approve", "install", "remove", "update"]


async def _install(
    settings: Settings, requests: list[InstallRequest], done: list[Any], gated: Any = None
) -> dict[str, Any]:
    """Install each request (adding what each installed to `done`, so that a failure keeps
    the earlier ones), signatures and scans checked, and each new version gated on its evals
    when `gated` (``(GateOptions, the library)``) says so (:mod:`~skillweave.cli.eval_gate`);
    the directory skills of the settings' libraries own their names."""
    from skillweave.cli.compose import open_store
    from skillweave.engines import skill_reviewer
    from skillweave.skills import Admissions
    from skillweave.skills.install import install_skills
    from skillweave.skills.stored import StoredSkills, directory_owners

    reserved = directory_owners(directory_registry(None))
    async with open_store(settings) as store, contextlib.AsyncExitStack() as stack:
        stored = StoredSkills(store)
        audit = cli_audit(settings, store)
        stack.push_async_callback(audit.aclose)  # the last records anchored, after the gate
        reviewer = skill_reviewer(settings)
        admissions = Admissions(settings.skills, store, audit=audit, reviewer=reviewer)
        if gated is not None:
            from skillweave.cli.eval_gate import update_admissions

            options, library = gated
            admissions = await stack.enter_async_context(
                update_admissions(
                    settings, options, registry=library, store=store, audit=audit, reviewer=reviewer
                )
            )
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
                registry=request.registry,
            )
    return admissions.admitted


def _install_locked(
    settings: Settings, requests: list[InstallRequest], locked: Any, lock: Path, gated: Any = None
) -> tuple[list[Any], dict[str, Any]]:
    """:func:`_install`, then what it installed recorded in `locked` and saved to `lock`,
    also when a later source failed (the earlier ones are in the store)."""
    installed: list[Any] = []
    admitted: dict[str, Any] | None = None
    try:
        admitted = asyncio.run(_install(settings, requests, installed, gated))
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
            help="A git URL, owner/repo or owner/repo/path (on SKILLS__GIT_HOST), a tree URL "
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
    registry: Annotated[
        str | None,
        typer.Option(
            "--registry",
            help="The label of the SKILLS__REGISTRIES registry the source was found in "
            "(as skills find prints it), kept with the origin of what is installed.",
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
            if ref or path or skill or plugin or registry or list_only:
                raise fail(
                    "--ref, --path, --skill, --plugin, --registry and --list need a SOURCE",
                    code=EXIT_USAGE,
                )
            requests, lock, checks = lock_requests(lock, settings)
            locked = SkillsLock.load(lock)
        else:
            parsed = parse_source(source, ref=ref, path=path, git_host=settings.skills.git_host)
            if list_only:
                listing = asyncio.run(
                    list_source(parsed, only=tuple(skill or ()), plugins=tuple(plugin or ()))
                )
                show_listing(listing, settings, as_json=as_json)
                return
            lock = kept_lock(lock)
            locked = SkillsLock.load(lock)
            requests = [
                InstallRequest(
                    parsed,
                    tuple(skill or ()),
                    tuple(plugin or ()),
                    registry=_configured(registry, settings),
                )
            ]
        with recorded("this change", so="nothing was installed"):
            installed, admitted = _install_locked(settings, requests, locked, lock)
    show_installed(installed_rows(installed, admitted, settings), as_json=as_json, verb="installed")
    for line in hash_lines(installed, checks, lock):
        err.print(Text(terminal_safe(line)), soft_wrap=True)


def _configured(label: str | None, settings: Settings) -> str | None:
    """`label` when a registry of ``SKILLS__REGISTRIES`` has it (None: none given).

    Raises:
        typer.Exit: no configured registry has it (bad usage, one line).
    """
    if label is None:
        return None
    labels = [source.label for source in settings.skills.registries]
    if label not in labels:
        known = ", ".join(map(repr, labels)) or "none is configured"
        raise fail(
            f"--registry {label!r}: no registry of SKILLS__REGISTRIES has that label ({known});"
            " give the label `skillweave skills find` prints",
            code=EXIT_USAGE,
        )
    return label


def update(
    names: Annotated[
        list[str] | None, typer.Argument(help="Skills of the lock to update; none: all.")
    ] = None,
    *,
    lock: LockOption = Path(LOCK_NAME),
    as_json: JsonOption = False,
    gate: GateOption = False,
    model: GateModelOption = None,
    grader: GateGraderOption = None,
    repeat: GateRepeatOption = 1,
    gate_tolerance: GateToleranceOption = 0.0,
    gate_allow_missing: GateAllowMissingOption = False,
) -> None:
    """Install the newest commit of each locked skill's ref (a moved branch, a new tag) and
    lock it; with --gate, only a version whose evals keep the current one's pass rate."""
    from skillweave.skills.install import SkillsLock

    settings = get_settings()
    gated = gate_options(
        gate=gate,
        model=model,
        grader=grader,
        repeat=repeat,
        tolerance=gate_tolerance,
        allow_missing=gate_allow_missing,
    )
    with errors():
        lock = kept_lock(lock)
        locked = SkillsLock.load(lock)
        wanted = names or sorted(locked.skills)
        unknown = [name for name in wanted if name not in locked.skills]
        if unknown:
            raise fail(f"not in {lock}: {', '.join(unknown)}", code=EXIT_USAGE)
        requests = [
            InstallRequest(
                locked.source_of(locked.skills[name], lock_path=lock),
                (name,),
                registry=locked.skills[name].registry,
            )
            for name in wanted
        ]
        library = (gated, registry_of(None)) if gated is not None else None
        with recorded("this change", so="nothing was updated"):
            installed, admitted = _install_locked(settings, requests, locked, lock, library)
    show_installed(installed_rows(installed, admitted, settings), as_json=as_json, verb="updated")


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
            audit = cli_audit(settings, store)
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

    with errors(), recorded("this change", so="nothing was removed"):
        lock = kept_lock(lock)
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
    version approved are listed with their evidence, and why the scan held it, then its evals
    in a line when it has any."""
    from skillweave.cli.compose import open_store
    from skillweave.evals import summary
    from skillweave.skills import ScanDecision, stored_report
    from skillweave.skills.stored import StoredSkills

    settings = get_settings()
    limit = findings_limit(findings)
    shown: list[Text] = []
    library = registry_of(None)  # the library its trigger evals are measured in

    async def enable() -> str:
        async with open_store(settings) as store:
            stored = StoredSkills(store)
            current = await _existing(stored, name)
            report = await stored_report(store, name, current.latest)
            if report is not None:  # what is approved, read before it is
                decided = ScanDecision.of(report, settings.skills.scan)
                shown.extend(scan_texts(report, decided, name=name, limit=limit))
            evals = await summary.eval_summary(
                library, store, name, current.latest, settings=settings.skills
            )
            if evals is not None:
                shown.append(Text(terminal_safe(evals.line())))
            audit = cli_audit(settings, store)
            try:  # recorded before it is made: a record that cannot be written approves nothing
                await audit.record(
                    "approval", skill=name, version=current.latest, decision="approved", note=note
                )
            finally:
                await audit.aclose()
            record = await stored.set_enabled(name, True)
            return record.latest

    with errors(), recorded("this change", so="nothing was approved"):
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
