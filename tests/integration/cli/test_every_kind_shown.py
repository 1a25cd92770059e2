"""The live view shows every kind a real run emits (issue 40): `skillweave run`, without
``--json``, of a run that uses egress (a skill reaches an "external API" on loopback through
the manager's egress proxy, which adds the token the script never holds), reads a skill's
reference, writes a skill of its own (``create_skill``: its example runs in a sandbox), uses
it, and asks to publish it (an approval). On the direct engine, without a terminal to ask on,
the approval is denied at once; on Temporal (`skillweave dev`) a person approves
with `skillweave runs approve`. Each run exits 0 with no traceback, and its live view has one
line per event, with its kind's label, in the order the same run's ``--json`` lines give.

The issue's bug: the view's own table of kinds had no ``skill_drafted`` and the live view died
with ``KeyError: 'skill_drafted'`` where ``--json`` worked. Real subprocesses, as a user types
them; a scripted model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from skillweave.agent.events import AgentEvent
from skillweave.agent.rendering import event_line
from skillweave.cli.view import LABEL_CHARS
from skillweave.engines.contract import workflow_id
from tests.conftest import REPO, write_skill
from tests.mcp_manager.egress_support import external_api

pytestmark = pytest.mark.timeout(300)

TOKEN = "s3cret-sales-token-4711"
RUN_ID = re.compile(r"run-\d{8}-\d{6}-[0-9a-f]{8}")
LIVE_LINE = re.compile(rf"^turn +\d+  (.{{{LABEL_CHARS - 1}}}) ")
COUNT_PY = "import sys\\nprint(len(' '.join(sys.argv[1:]).split()))\\n"
FETCH = """
import sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as response:
        print(response.status, response.read().decode())
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode().strip())
except OSError as error:
    print("no network:", error)
"""


def model_script(port: int, draft: str) -> str:
    """The run's model: it writes the skill `draft`. Each turn's ``expect`` checks what the
    turn before it got back."""
    return f"""
model: every-kind
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: sales-api}}}}]
  - tool_calls:
      - {{name: read_skill_resource, arguments: {{skill: sales-api, path: references/api.md}}}}
    expect: {{tool_results: [{{not_error: true, contains: sales-api}}]}}
  - tool_calls:
      - name: run_skill_script
        arguments: {{skill: sales-api, script: scripts/fetch.py,
                    args: ["http://127.0.0.1:{port}/q3"]}}
    expect: {{tool_results: [{{not_error: true, contains: "GET /q3"}}]}}
  - tool_calls:
      - name: create_skill
        arguments:
          name: {draft}
          description: Counts the words of a text. Use when words must be counted.
          instructions: "# Word count\\n\\nRun scripts/count.py with the text as arguments."
          files: [{{path: scripts/count.py, content: "{COUNT_PY}"}}]
          examples: [{{script: scripts/count.py, args: [three little words], expect: "3"}}]
    expect: {{tool_results: [{{not_error: true, contains: "200 figures for /q3"}}]}}
  - tool_calls: [{{name: activate_skill, arguments: {{name: {draft}}}}}]
    expect: {{tool_results: [{{not_error: true, contains: "Kept your skill"}}]}}
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {draft}, script: scripts/count.py, args: [one, two]}}}}
    expect: {{tool_results: [{{not_error: true}}]}}
  - tool_calls: [{{name: publish_skill, arguments: {{name: {draft}}}}}]
    expect: {{tool_results: [{{not_error: true, contains: "2"}}]}}
  - say: "Q3 figures fetched; {draft} written."
"""


@dataclass
class Rig:
    """The skill library, the models, the agent, the environment every command gets."""

    root: Path
    env: dict[str, str]
    port: int

    def model(self, draft: str) -> Path:
        """A model that writes the skill `draft` (each run its own: a published skill's name
        is taken for the next), in ``MODEL__SCRIPTS_DIR``."""
        script = self.root / f"model-{draft}.yaml"
        script.write_text(model_script(self.port, draft), encoding="utf-8")
        return script

    def agent(self, *, approval_seconds: float) -> Path:
        spec = self.root / f"agent-{approval_seconds:g}.yaml"
        spec.write_text(
            "name: every-kind\n"
            "skills: [sales-api]\n"
            "authoring: {enabled: true}\n"
            f"approvals: {{timeout_seconds: {approval_seconds:g}}}\n",
            encoding="utf-8",
        )
        return spec


@asynccontextmanager
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    """The sales API on loopback and a library whose `sales-api` may reach it (approved in
    the settings, the token bound to it as a header the proxy adds)."""
    async with external_api(TOKEN) as port:
        destination = f"127.0.0.1:{port}"
        library = tmp_path / "library"
        write_skill(
            library / "sales-api",
            description="Reads the sales API. Use when sales figures are needed.",
            extra=f'metadata:\n  network:\n    "{destination}": the sales API',
            files={
                "scripts/fetch.py": FETCH,
                "references/api.md": "The sales-api answers GET /q3 with the figures.\n",
            },
        )
        base = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
        }
        env = {
            **base,
            "HOME": str(tmp_path / "home"),
            "COLUMNS": "200",
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            # Where a server (dev's worker) takes a run's scripted model from, by its name.
            "MODEL__SCRIPTS_DIR": str(tmp_path),
            "SKILLS__DIRS": json.dumps([str(library)]),
            "SANDBOX__SKILL_SECRETS": json.dumps({"sales-api": {"SALES_TOKEN": TOKEN}}),
            "SANDBOX__EGRESS__APPROVALS": json.dumps(
                {"sales-api": {"destinations": [destination], "private": [destination]}}
            ),
            "SANDBOX__EGRESS__CREDENTIALS": json.dumps(
                {
                    "sales-api": [
                        {
                            "destination": destination,
                            "header": "Authorization",
                            "value": "Bearer ${SALES_TOKEN}",
                        }
                    ]
                }
            ),
        }
        yield Rig(tmp_path, env, port)


@dataclass
class Command:
    """A ``skillweave`` command in a subprocess, its output read line by line as it comes."""

    process: asyncio.subprocess.Process
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    readers: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    async def start(cls, *args: str, env: dict[str, str], cwd: Path) -> Command:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "skillweave.cli",
            *args,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        command = cls(process)
        command.readers = [
            asyncio.create_task(command._read(process.stdout, command.stdout)),
            asyncio.create_task(command._read(process.stderr, command.stderr)),
        ]
        return command

    @staticmethod
    async def _read(stream: asyncio.StreamReader | None, lines: list[str]) -> None:
        assert stream is not None
        while line := await stream.readline():
            lines.append(line.decode(errors="replace").rstrip("\n"))

    async def wait_for(self, pattern: str, *, on: str = "stderr", timeout: float = 120) -> str:
        """The first line of `on` that `pattern` matches, once it has come."""
        lines = self.stdout if on == "stdout" else self.stderr
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for line in lines:
                if re.search(pattern, line):
                    return line
            if self.process.returncode is not None or (
                asyncio.get_running_loop().time() > deadline
            ):
                raise AssertionError(f"no line matches {pattern!r}\n{self}")
            await asyncio.sleep(0.1)

    async def wait(self, timeout: float = 180) -> int:
        code = await asyncio.wait_for(self.process.wait(), timeout)
        await asyncio.gather(*self.readers)
        return code

    async def stop(self) -> None:
        if self.process.returncode is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()
        await asyncio.gather(*self.readers, return_exceptions=True)

    def __str__(self) -> str:
        return "--- stdout\n" + "\n".join(self.stdout) + "\n--- stderr\n" + "\n".join(self.stderr)


async def finished(command: Command) -> Command:
    try:
        await command.wait()
    finally:
        await command.stop()
    return command


# --- what the two executions of one run must show ---------------------------------------------


def json_events(command: Command) -> list[AgentEvent]:
    """The events of a ``--json`` run (every stdout line but the result)."""
    lines = [json.loads(line) for line in command.stdout if line.strip()]
    assert lines[-1]["kind"] == "result", command
    assert lines[-1]["status"] == "completed", command
    return [AgentEvent.model_validate(line) for line in lines[:-1]]


def live_labels(command: Command) -> list[str]:
    """The label of each event line of the live view (notes have no turn: not counted)."""
    return [m.group(1).rstrip() for line in command.stderr if (m := LIVE_LINE.match(line))]


def assert_the_live_view_shows_every_kind(live: Command, as_json: Command) -> list[AgentEvent]:
    assert live.process.returncode == 0, live
    assert as_json.process.returncode == 0, as_json
    for command in (live, as_json):
        assert "Traceback" not in "\n".join(command.stderr), command
    events = json_events(as_json)
    kinds = {event.kind for event in events}
    assert {
        "run_started",
        "model_called",
        "skill_activated",
        "resource_read",
        "script_ran",
        "skill_drafted",
        "approval_requested",
        "approval_decided",
        "answered",
        "run_finished",
    } <= kinds, kinds
    # One line per event, its kind's label, in the order the JSON lines give.
    assert live_labels(live) == [event_line(event).label for event in events], live
    said = "\n".join(live.stderr)
    assert "script     sales-api scripts/fetch.py · succeeded" in said, live
    assert "drafted    word-count @ " in said, live
    assert "script     word-count scripts/count.py · succeeded" in said, live
    assert "approval?  publish word-count version " in said, live
    assert "finished   completed · answered" in said, live
    assert "completed: answered" in "\n".join(live.stdout), live
    return events


def _how(at: Rig, agent: Path, *, json: bool = False) -> tuple[str, ...]:
    """The run's agent and model (``--json``: another draft's name, and JSON lines)."""
    draft = "word-tally" if json else "word-count"
    how = ("--agent", str(agent), "--model", f"scripted:{at.model(draft).name}")
    return (*how, "--json") if json else how


async def test_the_live_view_of_a_direct_run_shows_every_kind(tmp_path: Path) -> None:
    async with rig(tmp_path) as at:
        agent = at.agent(approval_seconds=2)  # no terminal to ask on: denied at once
        run = ("run", "Fetch the Q3 figures, then write a word counter.", "--engine", "direct")
        live = await finished(await Command.start(*run, *_how(at, agent), env=at.env, cwd=tmp_path))
        as_json = await finished(
            await Command.start(*run, *_how(at, agent, json=True), env=at.env, cwd=tmp_path)
        )

    events = assert_the_live_view_shows_every_kind(live, as_json)
    decided = [event for event in events if event.kind == "approval_decided"]
    assert [event.status for event in decided] == ["denied"]
    said = "\n".join(live.stderr)
    assert "denied (a direct run started without a terminal cannot be approved" in said, live
    assert "refused    publish_skill: Publishing 'word-count' was not approved" in said, live


@asynccontextmanager
async def dev(at: Rig) -> AsyncIterator[str]:
    """`skillweave dev` on free ports, the scripted model its workers' default; its Temporal
    address."""
    command = await Command.start(
        "dev",
        "--port",
        "0",
        "--ui-port",
        "0",
        "--db-file",
        str(at.root / "temporal.db"),
        "--model",
        f"scripted:{at.model('word-count')}",
        env=at.env,
        cwd=REPO,
    )
    try:
        await command.wait_for("Ctrl-C stops everything", on="stdout", timeout=120)
        found = re.search(r"Temporal gRPC\s+(127\.0\.0\.1:\d+)", "\n".join(command.stdout))
        assert found, command
        yield found.group(1)
    except BaseException:
        print(command)
        raise
    finally:
        await command.stop()


async def approve(run_id: str, env: dict[str, str], cwd: Path) -> None:
    command = await finished(await Command.start("runs", "approve", run_id, env=env, cwd=cwd))
    assert command.process.returncode == 0, command
    assert f"approved: run {run_id}" in "\n".join(command.stdout), command


async def test_the_live_view_of_a_temporal_run_shows_every_kind(tmp_path: Path) -> None:
    async with rig(tmp_path) as at, dev(at) as address:
        env = {**at.env, "WORKFLOW__TEMPORAL_ADDRESS": address}
        agent = at.agent(approval_seconds=120)
        run = ("run", "Fetch the Q3 figures, then write a word counter.", "--engine", "temporal")
        live = await Command.start(*run, *_how(at, agent), env=env, cwd=tmp_path)
        asked = await live.wait_for(r"^turn +\d+  approval\? ")
        run_id = RUN_ID.search(await live.wait_for(r"^run run-"))
        assert run_id, live
        await approve(run_id.group(), env, tmp_path)
        await finished(live)

        as_json = await Command.start(*run, *_how(at, agent, json=True), env=env, cwd=tmp_path)
        line = await as_json.wait_for('"kind":"approval_requested"', on="stdout")
        await approve(json.loads(line)["run_id"], env, tmp_path)
        await finished(as_json)
        details = await current_details(address, run_id.group())

    assert "publish word-count version" in asked
    events = assert_the_live_view_shows_every_kind(live, as_json)
    assert [e.status for e in events if e.kind == "approval_decided"] == ["approved"]
    said = "\n".join(live.stderr)
    assert "published  word-count @ " in said, live
    assert "· published · " in said, live
    # The Temporal UI's details end on the run's last step, in the words of the live view.
    assert "**Last step:** finished · completed · answered" in details.split("\n\n"), details


async def current_details(address: str, run_id: str) -> str:
    """What the Temporal UI shows as the run's current details (the metadata query)."""
    client = await Client.connect(address)
    handle = client.get_workflow_handle(workflow_id(run_id))
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return metadata.current_details
