"""What the CLI prints from skill libraries, scripts, models and remote services reaches the
terminal with its control characters shown as escapes and its rich markup literal: the skills
commands on a hostile library, the live view and result of a run, the `runs` commands on a
hostile run, `sandbox run`'s result, the agents table and the error line of a remote API.
JSON stays lossless, with what a terminal would act on written as JSON escapes.

The commands run in-process through typer's runner (`runs` with its Temporal engine replaced
by one that answers with a hostile run); the printing functions of `run` and `sandbox run`
are given hostile results directly (their end-to-end runs are in
tests/integration/cli/test_terminal_injection.py).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading
import unicodedata
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from skillweave.agent.events import AgentEvent
from skillweave.cli import app, run_report, runs, sandbox
from skillweave.cli.agent_run import FinishedRun
from skillweave.cli.sandbox import SandboxRun, print_script_result
from skillweave.cli.view import EventView, print_result
from skillweave.config import get_settings
from skillweave.engines.base import RunResult
from skillweave.engines.contract import EventPage, Reply, RunView
from skillweave.engines.temporal import FollowNote, RunRow
from skillweave.llm.messages import Usage
from skillweave.sandbox.models import ExecutionResult, OutputArtifact
from skillweave.storage.base import ArtifactRef
from skillweave.waiting import Waiting

runner = CliRunner()

# One of each class a terminal acts on, and rich markup, in the text attackers control.
HOSTILE = (
    "A\x1b[2J\x1b[H clear, \x1b]52;c;cm0gLXJmIH4=\x07 clipboard, "
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\, \x9b31m C1, "
    "txt.\u202eexe bidi, [red]markup[/red] :smile:, over\rwrite Z"
)
SHOWN = (
    "\\x1b[2J\\x1b[H clear",
    "\\x1b]52;c;cm0gLXJmIH4=\\x07 clipboard",
    "\\x1b]8;;https://evil.example/\\x1b\\link\\x1b]8;;\\x1b\\",
    "\\x9b31m C1",
    "txt.\\u202eexe bidi",
    "[red]markup[/red] :smile:",
    "over\\rwrite",
)
# The same, written as a YAML double-quoted scalar (a SKILL.md cannot hold raw ESC bytes).
# A skill's CRs never reach a terminal: the loader reads them as newlines.
HOSTILE_YAML = (
    '"A\\e[2J\\e[H clear, \\e]52;c;cm0gLXJmIH4=\\a clipboard, '
    "\\e]8;;https://evil.example/\\e\\\\link\\e]8;;\\e\\\\, \\x9b31m C1, "
    'txt.\\u202eexe bidi, [red]markup[/red] :smile:, over\\rwrite Z"'
)


def assert_terminal_safe(text: str) -> None:
    """No character of `text` is one a terminal acts on: no control but newline and tab (CR
    too, which a pseudo-terminal adds before each newline, when `text` came through one), no
    C1, no bidi or other format character but the zero-width (non-)joiner."""
    acting = sorted(
        {
            f"U+{ord(char):04X}"
            for char in text
            if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")
            and char not in "\t\n\u200c\u200d"
        }
    )
    assert acting == [], text


RICH_LIVE_CONTROLS = re.compile(r"\x1b\[(?:\?25[lh]|2K|\d*A)|\r")
"""What rich itself writes on a terminal to draw and clear a spinner: hide and show the
cursor, erase the line, move up, return to the line's start. None of the hostile sequences
above is one of these."""


def without_rich_live_controls(text: str) -> str:
    """`text` without the controls rich's own live display (the spinner) writes."""
    return RICH_LIVE_CONTROLS.sub("", text)


def assert_shown(text: str, *, parts: tuple[str, ...] = SHOWN) -> None:
    """`text` shows every hostile sequence visibly, as its escape (wherever rich wraps)."""
    flat = "".join(text.split())
    for part in parts:
        assert "".join(part.split()) in flat, part


def _console() -> tuple[Console, io.StringIO]:
    """A console that believes it writes to a terminal, without colours (so that any ESC in
    its output came from the text, not from a style)."""
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, color_system=None, width=300), buffer


@pytest.fixture
def hostile_lib(tmp_path: Path) -> Path:
    folder = tmp_path / "lib" / "evil-skill"
    folder.mkdir(parents=True)
    body = f"# Instructions\n\n{HOSTILE}\n"
    (folder / "SKILL.md").write_bytes(
        f"---\nname: evil-skill\ndescription: {HOSTILE_YAML}\n---\n{body}".encode()
    )
    return tmp_path / "lib"


def _cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("skills", "list"),
        ("skills", "search", "clear clipboard"),
        ("skills", "catalog"),
        ("skills", "show", "evil-skill"),
    ],
    ids=" ".join,
)
def test_skill_texts_from_a_library_are_shown_escaped(
    hostile_lib: Path, command: tuple[str, ...]
) -> None:
    code, out, err = _cli(*command, "--dir", str(hostile_lib))
    assert code == 0, err
    assert_terminal_safe(out + err)
    # The list gives each skill one line, its description cut to the terminal (whole in
    # --json and `skills show`): what it shows of the text is shown escaped.
    assert_shown(out, parts=SHOWN[:1] if command == ("skills", "list") else SHOWN[:-1])


def test_skills_list_json_keeps_the_exact_description(hostile_lib: Path) -> None:
    code, out, _ = _cli("skills", "list", "--json", "--dir", str(hostile_lib))
    assert code == 0
    assert_terminal_safe(out.replace("\n", ""))
    [skill] = json.loads(out)
    assert skill["description"] == " ".join(HOSTILE.split())  # as the loader folds it


def _ref(key: str) -> ArtifactRef:
    return ArtifactRef(key=key, size=3, sha256="0" * 64)


def _events() -> list[AgentEvent]:
    base = {"run_id": "run-1", "at": 0.0}
    return [
        AgentEvent(kind="run_started", turn=0, detail=HOSTILE, **base),
        AgentEvent(kind="model_called", turn=1, detail=HOSTILE, usage=Usage(), **base),
        AgentEvent(
            kind="skill_activated",
            turn=1,
            skill=HOSTILE,
            version="v" * 64,
            detail=HOSTILE,
            tools_registered=(HOSTILE,),
            **base,
        ),
        AgentEvent(kind="resource_read", turn=1, skill="s", detail=HOSTILE, **base),
        AgentEvent(kind="skills_searched", turn=1, detail=HOSTILE, **base),
        AgentEvent(
            kind="script_ran",
            turn=2,
            skill="s",
            detail=HOSTILE,
            tool=HOSTILE,
            status="succeeded",
            artifacts=(_ref(f"runs/run-1/outputs/{HOSTILE}"),),
            **base,
        ),
        AgentEvent(kind="tool_refused", turn=2, tool=HOSTILE, detail=HOSTILE, **base),
        AgentEvent(kind="answered", turn=3, detail=HOSTILE, **base),
        AgentEvent(kind="run_finished", turn=3, status="failed", detail=HOSTILE, **base),
    ]


def test_the_live_view_of_a_run_shows_model_and_script_text_escaped() -> None:
    # `run`, `demo` and `runs logs` print these lines.
    console, buffer = _console()
    with EventView(console) as view:
        for event in _events():
            view(event)
    printed = buffer.getvalue()
    assert "waiting for the model" in printed  # the spinner ran, as on a terminal
    assert_terminal_safe(without_rich_live_controls(printed))
    for kind in ("model", "activated", "read", "script", "refused", "finished"):
        assert kind in printed
    assert "\\x1b[2J" in printed
    assert "[red]markup[/red]" in printed
    assert "\\u202e" in printed


def test_the_result_of_a_run_shows_the_answer_and_reason_escaped() -> None:
    console, buffer = _console()
    result = RunResult(
        run_id="run-1",
        status="failed",
        reason=HOSTILE,
        answer=HOSTILE,
        outputs=(_ref(f"runs/run-1/outputs/{HOSTILE}"),),
    )
    print_result(FinishedRun(result=result, model=HOSTILE, copied=(Path(HOSTILE),)), out=console)
    printed = buffer.getvalue()
    assert_terminal_safe(printed)
    assert_shown(printed)
    assert printed.count("\\x1b]52;c;") == 5  # answer, model, reason, output key, copied path


def _view() -> RunView:
    return RunView(
        run_id="run-1",
        agent=HOSTILE,
        task=HOSTILE,
        phase="failed",
        status="failed",
        turn=3,
        script_runs=1,
        usage=Usage(),
        active_skills={HOSTILE: "v" * 64},
        last_error=HOSTILE,
        reason=HOSTILE,
        answer=HOSTILE,
        answer_turn=3,
    )


def test_runs_show_prints_a_hostile_run_view_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    view = _view()
    console, buffer = _console()
    monkeypatch.setattr(run_report, "out", console)  # a run is printed on the CLI's stdout console
    run_report.print_view(view, "http://ui/run-1")
    printed = buffer.getvalue()
    assert_terminal_safe(printed)
    assert_shown(printed)


def test_sandbox_run_result_shows_output_error_and_file_names_escaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = ExecutionResult(
        execution_id="cli-1/1",
        run_id="cli-1",
        skill="s",
        version="v",
        script="scripts/x.py",
        status="failed",
        exit_code=1,
        stdout=HOSTILE,
        stderr=HOSTILE,
        error=HOSTILE,
        outputs=[OutputArtifact(path=HOSTILE, ref=_ref(f"runs/cli-1/outputs/{HOSTILE}"))],
        stdout_ref=_ref(f"runs/cli-1/{HOSTILE}"),
    )
    console, buffer = _console()
    monkeypatch.setattr(sandbox, "out", console)
    print_script_result(SandboxRun(result=result, run_id="cli-1", copied=(Path(HOSTILE),)))
    printed = buffer.getvalue()
    assert_terminal_safe(printed)
    assert_shown(printed)


# --- a remote API that answers with hostile text -----------------------------------------------


class _HostileApi(BaseHTTPRequestHandler):
    """`GET /v1/agents/`: one agent with hostile fields; anything else: a hostile problem."""

    def do_GET(self) -> None:
        if self.path.startswith("/v1/agents/?"):
            agent = {"id": "ag-0123456789abcdef", "name": HOSTILE, "model_id": HOSTILE}
            body, status, kind = {"items": [agent | {"skill_ids": [HOSTILE]}], "total": 1}, 200, ""
        else:
            body = {"title": "Not Found", "detail": f"no agent {HOSTILE}", "status": 404}
            status, kind = 404, "problem+"
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", f"application/{kind}json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostileApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _remote_cli(url: str, *args: str) -> tuple[int, str, str]:
    env = {"SKILLWEAVE_API_URL": url, "SKILLWEAVE_API_TOKEN": "t" * 16, "REMOTE_API_URL": None}
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, list(args), env=env)
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stdout, result.stderr


def test_the_agents_table_of_a_remote_api_is_escaped(hostile_api: str) -> None:
    code, out, err = _remote_cli(hostile_api, "agents", "list")
    assert code == 0, err
    assert_terminal_safe(out + err)
    assert "\\x1b]52;c;" in out
    assert "[red]markup[/red]" in out


def test_a_remote_problem_is_one_escaped_error_line(hostile_api: str) -> None:
    code, out, err = _remote_cli(hostile_api, "agents", "show", "ag-0123456789abcdef")
    assert code == 1
    assert_terminal_safe(out + err)
    assert err.startswith("error: no agent A\\x1b[2J")


def test_agents_list_json_keeps_the_exact_values(hostile_api: str) -> None:
    code, out, _ = _remote_cli(hostile_api, "agents", "list", "--json")
    assert code == 0
    assert_terminal_safe(out.replace("\n", ""))
    assert json.loads(out)[0]["name"] == HOSTILE


# --- `runs`: the commands on a Temporal engine that answers with hostile text -----------------


class _HostileEngine:
    """What `runs` asks a Temporal engine, answered with a hostile run."""

    async def list_runs(self, **_: object) -> list[RunRow]:
        return [
            RunRow(
                run_id="run-1",
                workflow_id="run-1",
                execution_run_id="r",
                status="running",
                agent=HOSTILE,
                phase=HOSTILE,
                active_skills=(HOSTILE,),
                start_time=datetime.now(UTC),
            )
        ]

    async def status(self, run_id: str) -> RunView:
        return _view()

    async def waiting(self, run_id: str) -> list[Waiting]:
        since = datetime.now(UTC)
        return [Waiting(on=HOSTILE, detail=HOSTILE, since=since, call=HOSTILE)]

    async def event_page(self, run_id: str, *, after: int = 0) -> EventPage:
        return EventPage(events=tuple(_events()), next=9, finished=True)

    async def follow(
        self, run_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        yield FollowNote(kind="waiting_for_worker", run_id=run_id, task_queue=HOSTILE)
        for event in _events():
            yield event

    async def ask(self, run_id: str, text: str, *, reply_to_turn: int | None = None) -> Reply:
        return Reply(run_id=run_id, turn=4, status="running", text=HOSTILE)

    async def cancel(self, run_id: str, *, reason: str) -> None:
        pass

    async def result(self, run_id: str) -> RunResult:
        return RunResult(run_id=run_id, status="cancelled", reason=HOSTILE)


@pytest.mark.parametrize(
    "command",
    [
        ("runs", "list"),
        ("runs", "show", "run-1"),
        ("runs", "logs", "run-1"),
        ("runs", "send", "run-1", "hello"),
        ("runs", "cancel", "run-1"),
    ],
    ids=" ".join,
)
def test_runs_commands_show_a_hostile_run_escaped(
    monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setattr(runs, "_on_engine", lambda work: asyncio.run(work(_HostileEngine())))
    code, out, err = _cli(*command)
    assert code == 0, err
    assert_terminal_safe(out + err)
    assert "A\\x1b[2J\\x1b[H clear" in out  # (a table may cut the rest at its width)


@pytest.mark.parametrize(
    "command",
    [
        ("runs", "list", "--json"),
        ("runs", "show", "run-1", "--json"),
        ("runs", "logs", "run-1", "--json"),
        ("runs", "send", "run-1", "hello", "--json"),
    ],
    ids=" ".join,
)
def test_runs_json_keeps_the_exact_values(
    monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setattr(runs, "_on_engine", lambda work: asyncio.run(work(_HostileEngine())))
    code, out, err = _cli(*command)
    assert code == 0, err
    assert_terminal_safe(out.replace("\n", ""))
    documents = (
        [json.loads(line) for line in out.splitlines()] if "logs" in command else [json.loads(out)]
    )
    assert HOSTILE in _strings(documents)


def _strings(value: object) -> list[str]:
    """Every string in a decoded JSON document."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.items() for s in _strings(list(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
