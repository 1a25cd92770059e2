"""``skillweave skills``: validate, list, search and package skill libraries, print the exact
catalog and activation texts the model gets, prepare a skill's environment, and upload a
package to the API.

Strict validation reports every spec violation; the other commands load libraries leniently,
as the runtime does, and say on stderr what was skipped (:mod:`skillweave.cli.library`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from skillweave.cli.about import scan_notes, skill_notes
from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.cli.findings import (
    FindingsOption,
    findings_limit,
    read_stored_report,
    scan_texts,
)
from skillweave.cli.library import DirsOption, loaded_library, registry_of
from skillweave.cli.listing import print_library, print_not_served, say_entry
from skillweave.config import CatalogMode, SelectionMode, get_settings
from skillweave.skills import (
    Diagnostic,
    PackageLimits,
    build_catalog,
    build_package,
    extract_package,
    package_limits,
    render_activation,
    validate_paths,
    write_package,
)
from skillweave.skills.dependencies import (
    DependencySpec,
    dependency_lines,
    package_dependencies,
)
from skillweave.terminal import counted, terminal_safe

__all__ = ["skills_app"]

skills_app = typer.Typer(
    help="Validate, list, search and package skill libraries.", no_args_is_help=True
)


@skills_app.command("validate")
def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="Skill folders, SKILL.md files or library roots.")
    ],
    strict: Annotated[bool, typer.Option(help="Report every spec violation as an error.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Check skills against the Agent Skills spec. Exit 1 when any error is found.

    Without --strict only what the runtime would refuse (no description, unparseable YAML)
    is an error; other violations are warnings.
    """
    with errors():
        include_hidden = get_settings().skills.include_hidden
        report = validate_paths(paths, strict=strict, include_hidden=include_hidden)
    if as_json:
        dump(
            {
                "ok": report.ok,
                "strict": strict,
                "skills_checked": report.skills_checked,
                "errors": [_diagnostic_json(d) for d in report.errors],
                "warnings": [_diagnostic_json(d) for d in report.warnings],
            }
        )
    else:
        # One diagnostic per line, never wrapped, so that the output can be grepped.
        for diagnostic in report.errors:
            out.print(Text(terminal_safe(f"{diagnostic}"), style="red"), soft_wrap=True)
        for diagnostic in report.warnings:
            out.print(Text(terminal_safe(f"warning: {diagnostic}"), style="yellow"), soft_wrap=True)
        summary = (
            f"{counted(report.skills_checked, 'skill folder')} checked: "
            f"{counted(len(report.errors), 'error')}, {counted(len(report.warnings), 'warning')}"
            + (" (strict)" if strict else "")
        )
        out.print(Text(summary, style="green" if report.ok else "bold red"))
    if not report.ok:
        raise typer.Exit(1)


def _diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "path": diagnostic.path,
        "field": diagnostic.field,
        "message": diagnostic.message,
        "fatal": diagnostic.fatal,
    }


@skills_app.command("list")
def list_skills(dirs: DirsOption = None, as_json: JsonOption = False) -> None:
    """List the whole library as a tree: directory skills and the store's (installed,
    uploaded, agent-published), each with its source and state (enabled, held for
    approval, disabled)."""
    library, registry = loaded_library(dirs)
    print_library(library, registry, as_json=as_json)


@skills_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What the task is about.")],
    dirs: DirsOption = None,
    top: Annotated[int, typer.Option("--top", "-k", min=1, help="How many results.")] = 5,
    selection: Annotated[
        SelectionMode | None,
        typer.Option(help="auto | keyword | bm25 | embeddings | hybrid (default: the setting)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Rank skills by relevance to QUERY, with the configured selection strategy."""
    registry = registry_of(dirs)
    if selection is not None:
        registry.selection = selection
    with errors():
        hits = registry.search(query, top_k=top)
        strategy = registry.selector.strategy
    if as_json:
        dump(
            [{"name": hit.name, "score": round(hit.score, 4), "strategy": strategy} for hit in hits]
        )
        return
    if not hits:
        err.print("No skill matches that query.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("score", justify="right")
    table.add_column("skill")
    table.add_column("description", overflow="fold")
    for hit in hits:
        skill = registry.get(hit.name)
        table.add_row(
            f"{hit.score:.2f}",
            Text(terminal_safe(skill.name)),
            Text(terminal_safe(skill.description)),
        )
    out.print(table)
    out.print(Text(f"ranked by {strategy}", style="dim"))


@skills_app.command("catalog")
def catalog(
    dirs: DirsOption = None,
    mode: Annotated[CatalogMode | None, typer.Option(help="all | enabled | auto")] = None,
    query: Annotated[str | None, typer.Option(help="The task, for auto mode.")] = None,
    top: Annotated[int | None, typer.Option("--top", "-k", min=1, help="Auto: how many.")] = None,
    max_chars: Annotated[
        int | None, typer.Option(min=0, help="Character budget (0 = none; default from settings).")
    ] = None,
) -> None:
    """Print the exact tier-1 catalog text the model gets (control characters escaped)."""
    settings = get_settings().skills
    registry = registry_of(dirs)
    result = build_catalog(
        registry,
        mode=mode or settings.catalog_mode,
        query=query,
        top_k=top or settings.catalog_top_k,
        max_chars=settings.catalog_max_chars if max_chars is None else max_chars,
    )
    sys.stdout.write(terminal_safe(result.text))
    if result.shortened or result.hidden:
        err.print(
            Text(
                f"{len(result.names)} listed, {result.hidden} behind search_skills, "
                f"{counted(result.shortened, 'description')} shortened to fit "
                f"{counted(len(result.text), 'char')}",
                style="dim",
            ),
            soft_wrap=True,
        )


@skills_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Skill name.")],
    dirs: DirsOption = None,
    findings: FindingsOption = "10",
) -> None:
    """Print the exact activation payload of a skill (what activate_skill returns), with
    control characters escaped; its source, state, version and scan (each finding with its
    evidence, and why the policy decides what it does) on stderr. A store skill held for
    approval or disabled is not served: its SKILL.md is printed from the store."""
    settings = get_settings().skills
    limit = findings_limit(findings)
    library, registry = loaded_library(dirs)
    known = registry.canonical(name) or name
    entry = next((e for e in library.entries() if e.name == known), None)
    record = entry.record if entry is not None else None
    # A store version's scan is the one kept beside it (the model review's findings too).
    report = read_stored_report(get_settings(), record.name, record.latest) if record else None
    if entry is not None:
        say_entry(entry)
        if entry.skill is None:  # its findings, then how to approve it once they are read
            for line in scan_notes(report, name=entry.name, limit=limit) if report else ():
                err.print(line, soft_wrap=True)
            print_not_served(entry)
            return
    with errors():
        skill = registry.get(name)
        children = registry.children_of(name, enabled_only=True)
    payload = render_activation(
        skill, children=children, max_listed=settings.activation_resource_listing
    )
    sys.stdout.write(terminal_safe(payload))
    # What its environment will hold, on stderr: stdout is the payload, byte for byte.
    environments = get_settings().sandbox.environments
    with errors():
        spec = package_dependencies(
            build_package(skill.path, limits=_limits()),
            max_dependencies=environments.max_dependencies,
            infer=environments.infer_imports,
        )
    for line in dependency_lines(spec):
        err.print(Text(terminal_safe(f"dependency: {line}")), soft_wrap=True)
    for line in skill_notes(skill, report=report, limit=limit):
        err.print(line, soft_wrap=True)


def _limits() -> PackageLimits:
    return package_limits(get_settings().skills)


@skills_app.command("pack")
def pack(
    directory: Annotated[Path, typer.Argument(help="The skill folder to pack.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The ZIP file to write.")],
) -> None:
    """Pack a skill folder (with its sub-skills) into a deterministic ZIP."""
    if not directory.is_dir():
        raise fail(f"not a directory: {directory}", code=EXIT_USAGE)
    with errors():
        written = write_package(directory, output, limits=_limits())
    size = written.stat().st_size
    out.print(Text(terminal_safe(f"packed {directory} → {written} ({counted(size, 'byte')})")))


@skills_app.command("unpack")
def unpack(
    archive: Annotated[Path, typer.Argument(help="The ZIP file to extract.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to extract it.")],
) -> None:
    """Safely extract a skill package (refuses traversal, symlinks, bombs, overwrites)."""
    if not archive.is_file():
        raise fail(f"no such file: {archive}", code=EXIT_USAGE)
    with errors():
        found = extract_package(archive, output, limits=_limits())
    for skill_dir in found:
        out.print(Text(terminal_safe(f"extracted skill folder {skill_dir}")), soft_wrap=True)


@skills_app.command("build")
def build(
    name: Annotated[str, typer.Argument(help="The skill whose dependencies to prepare.")],
    dirs: DirsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Prepare a skill's environment of declared dependencies (requirements.txt, PEP 723,
    package.json, its `dependencies` field) ahead of its first run: built once by the manager
    at SANDBOX__MANAGER_URL (or one started here), in a build sandbox, and stored."""
    import asyncio

    from skillweave.cli.sandbox import prepare_environment

    registry = registry_of(dirs)
    with errors():
        skill = registry.get(name)
        prepared = asyncio.run(prepare_environment(get_settings(), skill))
    if as_json:
        dump(prepared)
        return
    if not prepared["needed"]:
        out.print(
            Text(
                terminal_safe(
                    f"{name} declares no dependencies and its scripts import none to install: "
                    "nothing to build"
                )
            )
        )
        return
    python = prepared["dependencies"].get("python") or []
    node = prepared["dependencies"].get("node") or []
    how = "built" if prepared["built"] else "already built"
    out.print(
        Text(
            terminal_safe(
                f"{name} {skill.version[:12]}: environment ready, {how} "
                f"({counted(len(python), 'Python dependency')}, "
                f"{counted(len(node), 'Node dependency')}; {counted(prepared['bytes'], 'byte')}; "
                f"{prepared['seconds']:.1f} s)"
            )
        ),
        soft_wrap=True,
    )
    for line in dependency_lines(DependencySpec.from_json(prepared["dependencies"])):
        out.print(Text(terminal_safe(f"  {line}")), soft_wrap=True)


@skills_app.command("upload")
def upload(
    archive: Annotated[Path, typer.Argument(help="The skill package (ZIP) to upload.")],
    *,
    name: Annotated[str | None, typer.Option(help="Override the skill's name.")] = None,
    description: Annotated[
        str | None, typer.Option(help="Override the skill's description.")
    ] = None,
) -> None:
    """Upload a skill package (ZIP, e.g. from `skills pack`) to the API at SKILLWEAVE_API_URL;
    its scan as the API answers it (each finding with its evidence, and why the server's policy
    decided what it did)."""
    from skillweave.cli.remote import open_remote

    if not archive.is_file():
        raise fail(f"no such file: {archive}", code=EXIT_USAGE)
    with errors(), open_remote(get_settings()) as api:
        skill = api.upload_skill(archive, name=name, description=description)
    shown = terminal_safe(f"uploaded {skill['name']} version {skill['version']}")
    out.print(Text(shown), soft_wrap=True)
    if skill.get("scan") and skill.get("scan_decision"):
        from skillweave.skills import ScanDecision
        from skillweave.skills.scan import ScanReport

        report = ScanReport.model_validate(skill["scan"])
        decided = ScanDecision.model_validate(skill["scan_decision"])
        for line in scan_texts(report, decided, name=skill["name"], limit=findings_limit()):
            out.print(line, soft_wrap=True)
    if skill.get("held"):
        how = f"PATCH /v1/skills/{skill['name']} with enabled true, once its findings are read"
        err.print(Text(terminal_safe(f"{skill['name']} is off until approved: {how}")))
