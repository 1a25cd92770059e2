"""A run harness for loop tests: real services, store and scripted model; a fake sandbox.

The fake sandbox runs a script as a plain subprocess in a temporary workspace laid out like a
real one (``skill/``, ``inputs/``, ``outputs/``) and stores its outputs as the manager would.
It counts runs. Integration tests use the real manager and pool instead.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from skillweave.agent import AgentEvent, AgentSpec
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest, RunResult
from skillweave.errors import ExecutionRejectedError
from skillweave.llm.messages import ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult, OutputArtifact
from skillweave.skills import SkillRegistry, SkillScanner, extract_package
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef
from skillweave.storage.local import LocalArtifactStore
from tests.transcripts import stored_messages

_INTERPRETERS = {".py": [sys.executable], ".mjs": ["node"], ".js": ["node"], ".sh": ["bash"]}


class RecordingProvider:
    """Delegates to a scripted provider and keeps every request it was sent."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.name = "scripted"
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        return None

    def offered(self, call: int) -> dict[str, dict]:
        """Tool name → input schema offered on model call `call` (1-based)."""
        return {t.name: t.input_schema for t in self.requests[call - 1].tools}

    def texts(self, call: int) -> list[str]:
        """The message texts model call `call` (1-based) carried."""
        return [m.text for m in self.requests[call - 1].messages]


class FakeSandbox:
    """Runs scripts as subprocesses; the manager's bookkeeping (outputs to the store, one
    result per execution id) without its isolation."""

    def __init__(self, store: LocalArtifactStore) -> None:
        self.store = store
        self.requests: list[ExecuteRequest] = []
        self._results: dict[str, ExecutionResult] = {}

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        if request.execution_id in self._results:
            return self._results[request.execution_id]
        self.requests.append(request)
        result = await asyncio.to_thread(self._run, request)
        self._results[request.execution_id] = result
        return result

    async def cancel(self, execution_id: str) -> bool:
        return False

    def _run(self, request: ExecuteRequest) -> ExecutionResult:
        package_key = keys.skill_package_key(request.skill, request.version)
        package = self.store.root / package_key
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp)
            extract_package(package.read_bytes(), workspace / "package")
            (top,) = list((workspace / "package").iterdir())
            shutil.move(top, workspace / "skill")
            (workspace / "inputs").mkdir()
            (workspace / "outputs").mkdir()
            for ref in request.inputs:
                name = ref.key.rsplit("/", 1)[1]
                (workspace / "inputs" / name).write_bytes((self.store.root / ref.key).read_bytes())
            script = workspace / "skill" / request.script
            if not script.is_file():
                raise ExecutionRejectedError(
                    404, f"script {request.script!r} is not in skill {request.skill!r}"
                )
            command = [*_INTERPRETERS.get(script.suffix, []), str(script), *request.args]
            done = subprocess.run(
                command, cwd=workspace, capture_output=True, text=True, check=False
            )
            outputs = []
            for path in sorted((workspace / "outputs").rglob("*")):
                if path.is_file():
                    relative = path.relative_to(workspace / "outputs").as_posix()
                    key = keys.execution_output_key(request.run_id, request.execution_id, relative)
                    ref = asyncio.run(self.store.put_bytes(key, path.read_bytes()))
                    outputs.append(OutputArtifact(path=relative, ref=ref))
        return ExecutionResult(
            execution_id=request.execution_id,
            run_id=request.run_id,
            skill=request.skill,
            version=request.version,
            script=request.script,
            status="succeeded" if done.returncode == 0 else "failed",
            exit_code=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            duration_ms=1,
            outputs=outputs,
        )


def write_skill(root: Path, name: str, body: str = "", *, meta: str = "", files=None) -> Path:
    """A skill folder `root/name` with a SKILL.md and `files` (path → text)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    frontmatter = f"---\nname: {name.rsplit('/', 1)[-1]}\ndescription: The {name} skill.\n"
    if meta:
        frontmatter += f"metadata:\n{textwrap.indent(meta.strip(), '  ')}\n"
    (folder / "SKILL.md").write_text(f"{frontmatter}---\n\n{body or f'# {name}'}\n")
    for path, text in (files or {}).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


ECHO_TOOL = """
import json, sys, pathlib
if sys.argv[1:2] == ["--help-json"]:
    print(json.dumps({"name": "shout", "description": "Upper-case a word into outputs/.",
                      "input_schema": {"type": "object",
                                       "properties": {"word": {"type": "string"}},
                                       "required": ["word"]}}))
    sys.exit(0)
args = json.loads(sys.argv[2])
pathlib.Path("outputs/shout.txt").write_text(args["word"].upper())
print("shouted", args["word"], "inputs:", sorted(p.name for p in pathlib.Path("inputs").iterdir()))
"""


def sample_library(root: Path) -> SkillRegistry:
    """toolkit (parent) → profiler (child, a script, a reference); shouter (executable);
    notes (contextual)."""
    write_skill(root, "toolkit", "# Toolkit\nUse the profiler child.")
    write_skill(
        root,
        "toolkit/profiler",
        "# Profiler\nRun scripts/count.py FILE.",
        files={
            "scripts/count.py": (
                "import sys, pathlib\n"
                "data = pathlib.Path(sys.argv[1]).read_text()\n"
                "pathlib.Path('outputs/count.txt').write_text(str(len(data.split())))\n"
                "print('words:', len(data.split()))\n"
            ),
            "references/guide.md": "# Guide\nCounting is easy.\n",
        },
    )
    write_skill(
        root, "shouter", "# Shouter", meta="type: executable", files={"scripts/shout.py": ECHO_TOOL}
    )
    write_skill(root, "notes", "# Notes\nTake notes.")
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


@dataclass
class Run:
    result: RunResult
    events: list[AgentEvent]
    engine: DirectEngine
    store: LocalArtifactStore
    sandbox: FakeSandbox
    provider: RecordingProvider

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def transcript(self) -> list[dict]:
        return stored_messages(self.store, self.result.run_id)


async def run_agent(
    tmp_path: Path,
    script: str,
    *,
    task: str = "Do the thing.",
    spec: AgentSpec | None = None,
    registry: SkillRegistry | None = None,
    inputs: dict[str, bytes] | None = None,
    settings: Settings | None = None,
) -> Run:
    """Run one run to its end with the scripted model `script` (YAML text)."""
    settings = settings or Settings(_env_file=None)
    registry = registry or sample_library(tmp_path / "skills")
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = FakeSandbox(store)
    provider = RecordingProvider(ScriptedProvider.from_yaml(textwrap.dedent(script)))
    services = AgentServices(
        settings=settings,
        registry=registry,
        store=store,
        provider=provider,
        model="scripted",
        sandbox=sandbox,  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    run_id = f"run-{tmp_path.name[-20:].strip('_') or 'x'}".replace("_", "-")
    refs: list[ArtifactRef] = []
    for name, data in (inputs or {}).items():
        refs.append(await store.put_bytes(keys.run_input_key(run_id, name), data))
    await engine.start(
        RunRequest(run_id=run_id, task=task, agent=spec or AgentSpec(), inputs=tuple(refs))
    )
    events = [event async for event in engine.events(run_id)]
    result = await engine.result(run_id)
    return Run(result, events, engine, store, sandbox, provider)
