"""The docs' code blocks as a tested contract: find every code block of the user-facing
documents, read the marker that says how it is tested, and run it as a new user would.

Called by tests/docs/test_readme_markers.py (every block is marked, without running anything)
and tests/integration/docs/test_readme_blocks.py (every block runs, or is checked, its way).

**Markers.** Every code block (fenced or indented, any language) of :data:`DOCUMENTS` has an
HTML comment on the line before it (blank lines between are allowed)::

    <!-- test: offline -->      run it, no server needed
    <!-- test: stack -->        run it against the ephemeral stack (below)
    <!-- test: synopsis -->     usage lines: each `skillweave …` line's command exists and takes
                                every `--option` the line shows (its --help says so)
    <!-- test: parses -->       a JSON or YAML example (a YAML frontmatter too) parses
    <!-- test: skip — why -->   not run; the reason is required (a cluster, Docker, a model key…)

A block without a marker, with an unknown mode, or skipped without a reason fails, so a new
block cannot ship untested.

**How a block runs.** One :class:`Session` serves a test module: a fresh HOME and working
directory (holding a copy of the repository's ``examples/``, so that paths read as from the
repository's root), a clean environment (PATH is the venv's ``bin`` then the system's; no
``MODEL__``, ``SKILLS__``… variable of the caller's), and free ports. Blocks run in document
order in that one HOME and folder, like a user going down the page: files one block writes
(a skill folder, a key) are there for the next. Each block is one ``bash -e -o pipefail``
script, run in the working directory, that must exit 0 within :data:`BLOCK_TIMEOUT_SECONDS`.
Before it runs, the text is adjusted in these ways only, each what a user on a busy machine
would do:

- the default ports the docs name (``127.0.0.1:8080`` or ``localhost:8080``, likewise 7233,
  8233, 8090) become the session's free ports, and a ``skillweave dev`` line without
  ``--port`` gets ``--port``/``--ui-port`` for them; the environment carries the same ports
  (``WORKFLOW__TEMPORAL_ADDRESS``, ``WORKFLOW__UI_URL``, ``API__PORT``, ``SANDBOX__PORT``:
  what ``skillweave dev`` tells a user to export when its ports are not the defaults);
- a token left as ``…`` (``API__TOKEN=…``, ``SANDBOX__MANAGER_TOKEN=…``,
  ``EXECUTOR__TOKEN=…``) becomes the session's token, which the environment also carries
  (``API__TOKEN``, ``SKILLWEAVE_API_TOKEN``), as a user's shell would after exporting it;
- a long-running command (``skillweave dev``, ``api``, ``worker``, ``manager``: the
  :data:`SERVICES`) is started in the background, as in another terminal, and the block goes
  on once it says it is ready (its ready line, :data:`SERVICES`). It runs until the session
  ends (Ctrl-C, that is SIGINT, then SIGKILL after :data:`STOP_SECONDS`); a later line that
  starts the same service finds it running and goes on;
- ``make TARGET`` runs in the repository (``-C``, where the Makefile is) with this session's
  venv (``VENV=``), which it does not reinstall (``-o`` on the venv's install stamps):
  installing from the lock is what CI's fresh clone checks.

**The stack.** Before a ``stack`` block, the session makes sure ``skillweave dev`` (Temporal
dev server, worker, MCP manager) and ``skillweave api`` run, starting each as the docs do if
no earlier block did. The environment then has ``SKILLWEAVE_API_URL`` for the API.

**Expected output.** A ``# prints: TEXT`` comment (a line of its own, or after a command)
says what the block prints: TEXT must appear in the block's output (stdout and stderr, in
order of the comments, whitespace not counted); ``<anything in angle brackets>`` and ``…`` in
TEXT stand for any text.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import yaml
from markdown_it import MarkdownIt

REPO: Final = Path(__file__).resolve().parents[2]
DOCUMENTS: Final = ("README.md", "examples/demo/README.md", "deploy/README.md")
"""The user-facing documents whose blocks are a contract, relative to the repository."""

Mode = Literal["offline", "stack", "synopsis", "parses", "skip"]
MODES: Final[tuple[Mode, ...]] = ("offline", "stack", "synopsis", "parses", "skip")
BLOCK_TIMEOUT_SECONDS: Final = 300.0
READY_SECONDS: Final = 120.0
STOP_SECONDS: Final = 20.0

SERVICES: Final = {
    "dev": r"Ctrl-C stops everything",
    "api": r"Uvicorn running on",  # its "skillweave API on" line comes before it listens
    "worker": r"Ctrl-C stops it",
    "manager": r"Uvicorn running on|Application startup complete",
    "executor": r"EXECUTOR_READY port=",
}
"""Long-running ``skillweave`` commands, each with the line that says it is ready."""

_MARKER: Final = re.compile(r"^\s*<!--\s*test:\s*(?P<body>.*?)\s*-->\s*$")
_SKIP: Final = re.compile(r"^skip\s*(?:[—–:-]+\s*(?P<reason>.*))?$")
_DEFAULT_PORTS: Final = {"7233": "temporal", "8233": "ui", "8080": "api", "8090": "manager"}
_ADDRESS: Final = re.compile(r"\b(?:127\.0\.0\.1|localhost):(7233|8233|8080|8090)\b")
_TOKEN_PLACEHOLDER: Final = re.compile(
    r"\b(API__TOKEN|SANDBOX__MANAGER_TOKEN|EXECUTOR__TOKEN)=…(?=\s|$)"
)
_PRINTS: Final = re.compile(r"(?:^|\s)#\s*prints:\s*(?P<text>.+?)\s*$")
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WILDCARD: Final = re.compile(r"<[^<>]*>|…")
_MAKE_STAMPS: Final = (".locked-stamp", ".installed-stamp")


@dataclass(frozen=True)
class Block:
    """One code block of a document and its marker."""

    document: str
    line: int
    """The 1-based line of the block's first line of code."""
    language: str
    text: str
    mode: Mode | None
    reason: str = ""
    problem: str = ""
    """Why the marker is not valid (none, unknown mode, a skip without a reason); empty if it is."""

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}"

    def commands(self) -> list[str]:
        """The block's logical command lines: continuations joined, comments and blanks out."""
        return [line for line in logical_lines(self.text) if not line.lstrip().startswith("#")]

    def expected(self) -> list[str]:
        """The texts its ``# prints:`` comments say it prints, in order."""
        found = []
        for line in logical_lines(self.text):
            match = _PRINTS.search(line)
            if match:
                found.append(match.group("text"))
        return found


def logical_lines(text: str) -> list[str]:
    """Lines of shell text with backslash continuations joined (here-documents kept whole)."""
    lines: list[str] = []
    pending = ""
    heredoc: str | None = None
    for raw in text.splitlines():
        if heredoc is not None:
            lines[-1] += "\n" + raw
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = pending + raw
        pending = ""
        if line.strip():
            lines.append(line)
            opened = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
            if opened and not line.lstrip().startswith("#"):
                heredoc = opened.group(1)
    if pending.strip():
        lines.append(pending)
    return lines


def parse_marker(body: str | None) -> tuple[Mode | None, str, str]:
    """(mode, skip reason, problem) of a marker's text after ``test:``; None: no marker."""
    if body is None:
        return None, "", "no <!-- test: … --> marker before the block"
    skip = _SKIP.match(body)
    if skip:
        reason = (skip.group("reason") or "").strip()
        if not reason:
            return "skip", "", "a skipped block must say why: <!-- test: skip — REASON -->"
        return "skip", reason, ""
    if body in MODES:
        return body, "", ""  # type: ignore[return-value]
    return None, "", f"unknown test mode {body!r}: one of {', '.join(MODES)}"


def blocks(document: str, *, root: Path = REPO) -> list[Block]:
    """Every code block of `document` (relative to `root`), fenced or indented, in order."""
    source = (root / document).read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse(source):
        if token.type not in ("fence", "code_block") or token.map is None:
            continue
        start = token.map[0]
        body = None
        above = start - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above >= 0:
            match = _MARKER.match(lines[above])
            body = match.group("body") if match else None
        mode, reason, problem = parse_marker(body)
        first = start + 2 if token.type == "fence" else start + 1
        found.append(
            Block(
                document,
                first,
                token.info.strip().split(" ")[0] if token.type == "fence" else "",
                token.content,
                mode,
                reason,
                problem,
            )
        )
    return found


def all_blocks(*, root: Path = REPO) -> list[Block]:
    """The blocks of every document of :data:`DOCUMENTS`, in order."""
    return [block for document in DOCUMENTS for block in blocks(document, root=root)]


# --- checks that run no command --------------------------------------------------------------


def check_parses(block: Block) -> None:
    """A ``parses`` block: JSON or YAML (a ``---`` frontmatter too) that loads.

    Raises:
        AssertionError: It does not parse, or its language is neither.
    """
    if block.language == "json":
        json.loads(block.text)
    elif block.language in ("yaml", "yml"):
        text = block.text
        if text.startswith("---"):
            parts = text.split("---")
            assert len(parts) >= 3, f"{block.id}: a frontmatter opened with --- is not closed"
            text = parts[1]
        assert isinstance(yaml.safe_load(text), dict), f"{block.id}: not a YAML mapping"
    else:
        raise AssertionError(f"{block.id}: `parses` knows json and yaml, not {block.language!r}")


def synopsis_commands(block: Block) -> list[tuple[tuple[str, ...], list[str]]]:
    """Each usage line's command path (``("skills", "list")``) and the options it shows."""
    found = []
    for line in block.commands():
        words = line.split()
        if not words or words[0] != "skillweave":
            continue
        path = []
        for word in words[1:]:
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            path.append(word)
        options = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line.split("#", 1)[0])
        found.append((tuple(path), sorted(set(options))))
    return found


def expected_in(output: str, expected: list[str]) -> str | None:
    """None when every expected text appears in `output` in order; else the first missing."""
    flat = " ".join(output.split())
    position = 0
    for text in expected:
        parts = [re.escape(" ".join(part.split())) for part in _WILDCARD.split(text)]
        pattern = re.compile(r".+?".join(parts).replace(r"\ ", r"\s*"))
        match = pattern.search(flat, position)
        if match is None:
            return text
        position = match.end()
    return None


# --- the session that runs blocks ------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Result:
    """What a block's script did."""

    returncode: int
    output: str
    seconds: float


_PREAMBLE: Final = r"""
__sw_service() {  # KIND SCRIPT: start a long-running command once, wait for its ready line
    local kind=$1 script=$2 pid_file="$SW_SERVICES/$1.pid" log="$SW_SERVICES/$1.log"
    if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
        echo "[readme-blocks] $kind runs already (another terminal): not started again"
        return 0
    fi
    setsid bash "$script" >"$log" 2>&1 </dev/null &
    echo $! >"$pid_file"
    local deadline=$((SECONDS + SW_READY_SECONDS))
    until grep -Eq "$3" "$log"; do
        if ! kill -0 "$(cat "$pid_file")" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
            echo "[readme-blocks] $kind did not get ready; its output:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.2
    done
    echo "[readme-blocks] $kind is ready (log: $log)"
}
"""


@dataclass
class Session:
    """One HOME, working directory, set of ports and services for the blocks of a test module.

    Use it as a context manager: leaving it stops every service its blocks started.
    """

    root: Path
    venv_bin: Path
    ports: dict[str, int] = field(default_factory=dict)
    token: str = ""
    ran: set[str] = field(default_factory=set)

    @classmethod
    @contextlib.contextmanager
    def open(cls, *, venv_bin: Path) -> Iterator[Session]:
        """A fresh session in a temporary folder, removed with its services at the end."""
        root = Path(tempfile.mkdtemp(prefix="readme-blocks-"))
        session = cls(root, venv_bin)
        session.ports = {name: free_port() for name in _DEFAULT_PORTS.values()}
        session.token = os.urandom(16).hex()
        for folder in (session.home, session.cwd, session.services):
            folder.mkdir(parents=True)
        shutil.copytree(REPO / "examples", session.cwd / "examples")
        try:
            yield session
        finally:
            session.stop()
            shutil.rmtree(root, ignore_errors=True)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return self.root / "work"

    @property
    def services(self) -> Path:
        return self.root / "services"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['api']}"

    def environment(self) -> dict[str, str]:
        """The clean environment a block runs in (the module docstring says what it holds)."""
        return {
            "HOME": str(self.home),
            "PATH": f"{self.venv_bin}:/usr/local/bin:/usr/bin:/bin",
            # The repository these docs belong to (the venv installs it editable).
            "PYTHONPATH": str(REPO),
            "LANG": "C.UTF-8",
            "COLUMNS": "200",
            "TMPDIR": tempfile.gettempdir(),
            "WORKFLOW__TEMPORAL_ADDRESS": f"127.0.0.1:{self.ports['temporal']}",
            "WORKFLOW__UI_URL": f"http://127.0.0.1:{self.ports['ui']}",
            "API__PORT": str(self.ports["api"]),
            "SANDBOX__PORT": str(self.ports["manager"]),
            "API__TOKEN": self.token,
            "SKILLWEAVE_API_TOKEN": self.token,
            "SW_SERVICES": str(self.services),
            "SW_READY_SECONDS": str(int(READY_SECONDS)),
        }

    def adjust(self, text: str) -> str:
        """The block's text with the session's ports and token (see the module docstring)."""
        text = _ADDRESS.sub(lambda m: f"127.0.0.1:{self.ports[_DEFAULT_PORTS[m.group(1)]]}", text)
        return _TOKEN_PLACEHOLDER.sub(lambda m: f"{m.group(1)}={self.token}", text)

    def script(self, block: Block) -> str:
        """The bash script that runs `block`: services to the background, the rest in order."""
        parts = [_PREAMBLE]
        for index, line in enumerate(logical_lines(self.adjust(block.text))):
            kind = service_of(line)
            if kind is None:
                parts.append(_make_in_repository(line, self.venv_bin.parent))
                continue
            command = line.split(" #", 1)[0].rstrip()
            if kind == "dev" and "--port" not in command:
                command += f" --port {self.ports['temporal']} --ui-port {self.ports['ui']}"
            script = self.services / f"{_slug(block.id)}-{index}.sh"
            script.write_text(command + "\n", encoding="utf-8")
            parts.append(
                f"__sw_service {kind} {shlex.quote(str(script))} {shlex.quote(SERVICES[kind])}"
            )
        return "\n".join(parts) + "\n"

    def ensure_stack(self) -> None:
        """``skillweave dev`` and ``skillweave api`` running, started as the docs do if needed.

        Raises:
            AssertionError: One of them did not get ready; the message holds its output.
        """
        stack = Block(
            "(the stack)",
            0,
            "sh",
            "skillweave dev\nAPI__TOKEN=… skillweave api\n",
            "offline",
        )
        done = self.execute(stack)
        assert done.returncode == 0, f"the stack did not start:\n{done.output}"

    def execute(self, block: Block) -> Result:
        """Run `block`'s script in the session; its output is stdout and stderr together."""
        env = self.environment()
        if block.mode == "stack":
            env["SKILLWEAVE_API_URL"] = self.api_url
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", self.script(block)],
                cwd=self.cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=BLOCK_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.stdout if isinstance(exc.stdout, str) else ""
            return Result(124, f"{output}\n[readme-blocks] timed out", time.monotonic() - started)
        return Result(done.returncode, done.stdout, time.monotonic() - started)

    def service_log(self, kind: str) -> str:
        """What a service started in this session has printed so far ('' if none)."""
        log = self.services / f"{kind}.log"
        return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""

    def stop(self) -> None:
        """Ctrl-C (SIGINT) to every service's process group, newest first; SIGKILL the rest."""
        pids = []
        for pid_file in sorted(self.services.glob("*.pid"), key=lambda p: -p.stat().st_mtime):
            with contextlib.suppress(ValueError, OSError):
                pids.append(int(pid_file.read_text().strip()))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGINT)
            deadline = time.monotonic() + STOP_SECONDS
            while time.monotonic() < deadline and _group_alive(pid):
                time.sleep(0.2)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def service_of(line: str) -> str | None:
    """The :data:`SERVICES` kind a command line starts, or None (``--help`` starts none)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if len(words) >= 2 and words[0] == "skillweave" and words[1] in SERVICES:
        return None if "--help" in words else words[1]
    return None


def _make_in_repository(line: str, venv: Path) -> str:
    """A ``make TARGET`` line, run where the Makefile is, with the session's venv, which it
    does not reinstall (installing from the lock is what CI's fresh clone checks)."""
    words = line.split()
    if not words or words[0] != "make":
        return line
    stamps = " ".join(f"-o {shlex.quote(str(venv / stamp))}" for stamp in _MAKE_STAMPS)
    venv_arg = shlex.quote(f"VENV={venv}")
    return f"make -C {shlex.quote(str(REPO))} {venv_arg} {stamps} {line[len('make') :].lstrip()}"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")
