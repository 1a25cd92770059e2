"""``skillweave agents``: make, list and show agents on the control-plane API at
``SKILLWEAVE_API_URL`` (through :class:`~skillweave.cli.remote.RemoteApi`); :func:`agent_body`,
an agent spec file as the API's body for a new agent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table
from rich.text import Text

from skillweave.agent import AgentSpec
from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.exits import errors, spec_errors
from skillweave.config import get_settings
from skillweave.errors import AgentSpecError
from skillweave.terminal import terminal_safe

__all__ = ["agent_body", "agents_app"]

agents_app = typer.Typer(
    help="Make and list agents on the API at SKILLWEAVE_API_URL.", no_args_is_help=True
)


@agents_app.command("create")
def agents_create(
    spec_file: Annotated[Path, typer.Argument(help="An agent spec (YAML), as for `run --agent`.")],
    as_json: JsonOption = False,
) -> None:
    """Make an agent on the API from an agent spec file; prints its id.

    The spec's model, skills and catalog.mode become the API's model_id, skill_ids and
    catalog_mode; its limits, follow_up_seconds, approvals, authoring and acquisition are
    passed as they are; fields the API does not take are named on stderr.
    """
    from skillweave.cli.remote import open_remote

    settings = get_settings()
    with errors(), spec_errors():
        body, notes = agent_body(spec_file)
    for note in notes:
        err.print(Text(terminal_safe(f"note: {note}"), style="yellow"), soft_wrap=True)
    with errors(), open_remote(settings) as api:
        agent = api.create_agent(body)
    if as_json:
        dump(agent)
        return
    err.print(Text(terminal_safe(f"created agent {agent['name']}"), style="green"), soft_wrap=True)
    sys.stdout.write(terminal_safe(str(agent["id"])) + "\n")


@agents_app.command("list")
def agents_list(as_json: JsonOption = False) -> None:
    """List the agents on the API, oldest first."""
    from skillweave.cli.remote import open_remote

    with errors(), open_remote(get_settings()) as api:
        agents = api.list_agents()
    if as_json:
        dump(agents)
        return
    if not agents:
        err.print("No agents yet. Make one with `skillweave agents create SPEC.yaml`.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("id", "slug", "name", "model", "skills"):
        table.add_column(column, overflow="fold" if column == "skills" else "ellipsis")
    for agent in agents:
        cells = (
            agent["id"],
            agent.get("slug") or "",
            agent["name"],
            agent.get("model_id") or "(server's)",
            ", ".join(agent.get("skill_ids") or []),
        )
        table.add_row(*(Text(terminal_safe(str(cell))) for cell in cells))
    out.print(table)


@agents_app.command("show")
def agents_show(
    agent_id: Annotated[str, typer.Argument(help="The agent's id (ag-…) or its slug.")],
) -> None:
    """Print one agent of the API as JSON."""
    from skillweave.cli.remote import open_remote

    with errors(), open_remote(get_settings()) as api:
        dump(api.get_agent(agent_id))


def agent_body(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The API's AgentCreate body for the agent spec (YAML) in `path`, and notes on the spec's
    fields the API does not take.

    Raises:
        AgentSpecError: the file cannot be read, is not a valid spec, or does not fit the API.
    """
    # Loaded when the command runs, not when the CLI starts (httpx, and the web stack).
    from skillweave.api import AgentCreate
    from skillweave.cli.agent_run import read_agent_spec

    source = str(path)
    spec = read_agent_spec(path)
    try:
        body = AgentCreate(
            name=spec.name,
            description=spec.description,
            instruction=spec.instruction,
            model_id=spec.model,
            skill_ids=list(spec.skills or ()),
            catalog_mode=spec.catalog.mode,
            limits=spec.limits,
            follow_up_seconds=spec.follow_up_seconds,
            approvals=spec.approvals,
            authoring=spec.authoring,
            acquisition=spec.acquisition,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise AgentSpecError(source, f"{field}: {first['msg']}") from None
    return body.model_dump(mode="json"), _not_taken(spec)


def _not_taken(spec: AgentSpec) -> list[str]:
    notes = []
    if spec.skills is None:
        notes.append("skills: not set, so the API's agent gets no skills (list them)")
    if spec.catalog.top_k is not None:
        notes.append("catalog.top_k is not taken by the API (the server's setting applies)")
    if "preload" in spec.model_fields_set:
        notes.append("preload is not taken by the API")
    return notes
