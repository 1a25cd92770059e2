"""``skillweave skills versions`` and ``skills rollback``: a skill's stored versions, and an
earlier one made current again, in the settings' store (where workers, the API and the
manager read them; each long-running process sees a rollback within
``SKILLS__RELOAD_SECONDS``).

``versions NAME`` lists every stored version, newest first, the current one marked: its
origin, when it was stored, who brought it (from the audit log), its scan and its signature
under today's policies (``skills.stored.uploaded_versions``). A directory skill shows its one
version and its folder: directory skills are versioned by their folder (git), not here.

A run's agent spec may pin a skill, ``name@VERSION``: :func:`resolve_spec_pins` turns each
prefix into the full version before the run starts (``skillweave run``, either engine), so that
the run sees that version whatever the store holds later.

``rollback NAME [VERSION]`` makes VERSION (a unique prefix of at least 8 hex digits; default:
the version current before the current one) current again, judged under today's policies
(``skills.stored.rollback_check``): refused when the scan policy blocks it or the trust policy
refuses it, held off until ``skills approve`` when its scan needs an operator. The rollback is
in the audit log before it is made: when the record cannot be written the command says so in
one line, exits 1, and changes nothing. Runs already started keep the versions they pinned.
With ``--gate`` the version becomes current only when its evals, run against the current one,
keep its pass rate (:mod:`~skillweave.cli.eval_gate`). A held skill's listing shows its
current version's evals in a line, as its approver reads them.
"""

from __future__ import annotations

import asyncio
from datetime import UTC
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from rich.text import Text

from skillweave.agent import AgentSpec
from skillweave.cli.audit_writer import cli_audit, recorded
from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.eval_gate import (
    GateAllowMissingOption,
    GateGraderOption,
    GateModelOption,
    GateOption,
    GateRepeatOption,
    GateToleranceOption,
    gate_options,
)
from skillweave.cli.exits import errors, fail
from skillweave.cli.library import directory_registry, registry_of
from skillweave.config import Settings, get_settings
from skillweave.errors import AgentSpecError, SkillError, SkillNotFoundError
from skillweave.evals import gate as gates
from skillweave.skills import SkillRegistry, SkillVersionError, parse_pin
from skillweave.storage import ArtifactStore
from skillweave.terminal import terminal_safe

__all__ = ["resolve_spec_pins", "rollback", "versions"]

_SHORT: Final = 12
"""Hex digits shown of a version."""

NameArgument = Annotated[str, typer.Argument(help="The skill.")]


def versions(name: NameArgument, *, as_json: JsonOption = False) -> None:
    """List a skill's stored versions, newest first, the current one marked (*): origin,
    when, who brought it, its scan and its signature under today's policies."""
    settings = get_settings()
    with errors():
        listing = asyncio.run(_versions(settings, name))
        evals = _held_evals(settings, listing)
    if as_json:
        dump({**listing.model_dump(mode="json"), **({"evals": evals} if evals else {})})
        return
    state = "enabled" if listing.enabled else "held until approved" if listing.held else "off"
    head = f"{listing.name} · {listing.kind} · current {listing.current[:_SHORT]} · {state}"
    out.print(Text(terminal_safe(head)), soft_wrap=True)
    if evals:  # what its approver reads beside the scan
        out.print(Text(terminal_safe(evals)), soft_wrap=True)
    for entry in listing.versions:
        mark = "*" if entry.current else " "
        when = f"{entry.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if entry.created_at else "-"
        scan = entry.scan.summary or "no report kept"
        if entry.scan.decision is not None:
            scan += f" ({entry.scan.decision})"
        stored = f"  stored {when} by {entry.actor}" if entry.created_at else ""
        lines = [
            f"{mark} {entry.version[:_SHORT]}{stored}",
            f"    origin     {entry.source}",
            f"    scan       {scan}",
            f"    signature  {entry.signature.text}",
        ]
        for line in lines:
            out.print(Text(terminal_safe(line)), soft_wrap=True)
    if listing.note:
        out.print(Text(terminal_safe(f"note: {listing.note}"), style="dim"), soft_wrap=True)


def rollback(
    name: NameArgument,
    version: Annotated[
        str | None,
        typer.Argument(help="The version (8+ hex digits); default: the one current before."),
    ] = None,
    *,
    as_json: JsonOption = False,
    gate: GateOption = False,
    model: GateModelOption = None,
    grader: GateGraderOption = None,
    repeat: GateRepeatOption = 1,
    gate_tolerance: GateToleranceOption = 0.0,
    gate_allow_missing: GateAllowMissingOption = False,
) -> None:
    """Make an earlier stored version of a skill current again (audited; judged under today's
    scan and trust policies; with --gate, only if its evals keep the current one's pass rate).
    Runs already started keep their versions."""
    settings = get_settings()
    gated = gate_options(
        gate=gate,
        model=model,
        grader=grader,
        repeat=repeat,
        tolerance=gate_tolerance,
        allow_missing=gate_allow_missing,
    )
    library = registry_of(None) if gated is not None else None
    with errors(), recorded("this rollback", so="nothing was rolled back"):
        done = asyncio.run(_rollback(settings, name, version, gated=gated, library=library))
    record = done.record
    if as_json:
        dump(
            {
                "name": record.name,
                "from": done.previous,
                "to": done.version,
                "changed": done.changed,
                "enabled": record.enabled,
                "held": done.held,
            }
        )
        return
    if not done.changed:
        line = f"{name} is at version {done.version[:_SHORT]} already: nothing was rolled back"
        out.print(Text(terminal_safe(line)), soft_wrap=True)
        return
    line = f"rolled back {name} from {done.previous[:_SHORT]} to {done.version[:_SHORT]}"
    out.print(Text(terminal_safe(line)), soft_wrap=True)
    locked = _locked_version(name)
    if locked is not None and locked != done.version:
        note = (
            f"note: skills.lock still locks {name} at {locked[:_SHORT]}: an install from the"
            " lock (`skillweave skills install` with no source) makes that current again"
        )
        err.print(Text(terminal_safe(note), style="dim"), soft_wrap=True)
    if done.held:
        held = (
            f"{name} is off until approved (its scan needs an operator under skills.scan.policy):"
            f" read `skillweave skills versions {name}`, then `skillweave skills approve {name}`"
        )
        err.print(Text(terminal_safe(held)), soft_wrap=True)


async def resolve_spec_pins(
    spec: AgentSpec, store: ArtifactStore, registry: SkillRegistry, *, source: str
) -> AgentSpec:
    """`spec` with each ``name@PREFIX`` of its skills made ``name@VERSION`` (the full version:
    the library's when it begins so, else the one stored version it begins), where the run
    starts, so that every step of the run sees the same version.

    Raises:
        AgentSpecError: a pin names no version, or several (the message names `source`).
    """
    if not spec.skills or not any(parse_pin(entry).version for entry in spec.skills):
        return spec
    from skillweave.skills.stored import StoredSkills

    resolved = []
    for entry in spec.skills:
        pin = parse_pin(entry)
        if pin.version is None or pin.exact:
            resolved.append(entry)
            continue
        current = registry.get(pin.name).version if pin.name in registry else ""
        try:
            if not current.startswith(pin.version):
                current = await StoredSkills(store).resolve(pin.name, pin.version)
        except SkillNotFoundError:
            error = SkillVersionError(pin.name, pin.version, problem="unknown")
            raise AgentSpecError(source, f"skills: {error}") from None
        except SkillError as exc:
            raise AgentSpecError(source, f"skills: {exc}") from None
        resolved.append(f"{pin.name}@{current}")
    return spec.model_copy(update={"skills": tuple(resolved)})


# --- the work ---------------------------------------------------------------------------------


async def _versions(settings: Settings, name: str) -> Any:
    from skillweave.cli.compose import open_store
    from skillweave.skills.stored import StoredSkills, directory_versions, uploaded_versions

    directory = directory_registry(None)
    if name in directory:
        return await directory_versions(settings.skills, directory.get(name))
    async with open_store(settings) as store:
        record = await StoredSkills(store).get(name)
        if record is None:
            raise SkillNotFoundError(name)
        return await uploaded_versions(store, settings.skills, record, cli_audit(settings, store))


def _held_evals(settings: Settings, listing: Any) -> str | None:
    """The evals of a held skill's current version in a line (None: not held, or none)."""
    if not listing.held:
        return None
    from skillweave.cli.compose import open_store
    from skillweave.evals import summary as summaries

    library = registry_of(None)

    async def summary() -> str | None:
        async with open_store(settings) as store:
            found = await summaries.eval_summary(
                library, store, listing.name, listing.current, settings=settings.skills
            )
        return found.line() if found is not None else None

    return asyncio.run(summary())


async def _rollback(
    settings: Settings,
    name: str,
    version: str | None,
    *,
    gated: gates.GateOptions | None = None,
    library: SkillRegistry | None = None,
) -> Any:
    from skillweave.cli.compose import open_store
    from skillweave.cli.eval_gate import EvalGate
    from skillweave.skills.stored import StoredSkills, directory_owners, rollback_check

    directory = directory_registry(None)
    if name in directory:
        raise fail(
            f"{name} is a directory skill ({directory.get(name).path}): it is versioned by its"
            " folder (git, say); roll it back there, not in the store"
        )
    async with open_store(settings) as store:
        audit = cli_audit(settings, store)
        try:
            check = rollback_check(store, settings.skills, audit)
            if gated is None:
                return await StoredSkills(store).rollback(
                    name, version, reserved=directory_owners(directory), check=check
                )
            assert library is not None
            async with EvalGate(
                settings, gated, registry=library, store=store, audit=audit
            ) as gate:
                return await gates.gated_rollback(
                    StoredSkills(store),
                    name,
                    version,
                    reserved=directory_owners(directory),
                    judged=check,
                    gate=gate.check,
                    settings=settings.skills,
                )
        finally:
            await audit.aclose()


def _locked_version(name: str) -> str | None:
    """The version the current folder's ``skills.lock`` locks `name` at (None: not locked, or
    no lock this version can read: the rollback stands either way)."""
    from skillweave.errors import PackageError
    from skillweave.skills.install import LOCK_FILE, SkillsLock

    try:
        entry = SkillsLock.load(Path(LOCK_FILE)).skills.get(name)
    except PackageError:
        return None
    return entry.version if entry is not None else None
