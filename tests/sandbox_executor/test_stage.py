"""A warm sandbox runs Python scripts in its already started interpreter: that must be
indistinguishable from ``python3 script.py``. Each script here runs both ways, in the sandbox
and as a bare subprocess of the same interpreter, and the two must agree on exit code, stdout
and stderr (paths aside)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from sandbox_executor import ExecutorSettings
from sandbox_executor.run_order import stage_python
from skillweave.sandbox.models import ExecutorResult
from tests.sandbox_executor.conftest import MakeClient
from tests.sandbox_executor.support import AUTH, execute_form, make_package

FACTS = """\
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
print(__name__, os.path.basename(__file__), sys.argv[1:])
print(sys.path[0] == here, sys.path[1] == os.environ["PYTHONPATH"])
print(sys.dont_write_bytecode, sys.stdout.write_through or sys.stdout.line_buffering)
print(repr(sys.stdin.read()))
"""

SCRIPTS = {
    "facts.py": FACTS,
    "exit_code.py": "import sys\nprint('before')\nsys.exit(3)\n",
    "exit_message.py": "raise SystemExit('stopped: bad input')\n",
    "traceback.py": "def inner():\n    raise ValueError('boom')\n\ninner()\n",
    "syntax.py": "print('never'\nx = \n",
    "at_exit.py": (
        "import atexit, threading, time\n"
        "atexit.register(print, 'atexit ran')\n"
        "def late():\n    time.sleep(0.2)\n    print('thread joined', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "print('main done', flush=True)\n"
    ),
    "unclosed.py": (
        "import os\n"
        "os.makedirs('outputs', exist_ok=True)\n"
        "handle = open('outputs/left-open.txt', 'w')\n"
        "handle.write('flushed at exit')\n"
    ),
    "pickles.py": (
        "import pickle\n"
        "class Point:\n    def __init__(self, x):\n        self.x = x\n"
        "print(pickle.loads(pickle.dumps(Point(4))).x, Point.__module__)\n"
    ),
    "uses_skill_root.py": "import helper\nprint(helper.VALUE)\n",
    "helper.py": "VALUE = 'imported from the skill root'\n",
    "warns.py": "import warnings\nwarnings.warn('careful')\nprint('after')\n",
    "modules.py": "import sys\nprint(' '.join(sorted(sys.modules)))\n",
    "exit_wraps.py": "import sys\nsys.exit(300)\n",
    "exit_true.py": "import sys\nsys.exit(True)\n",
    "zip_left_open.py": (
        "import zipfile\n"
        "archive = zipfile.ZipFile('outputs/left-open.zip', 'w')\n"
        "archive.writestr('inside.txt', 'the central directory is written at exit')\n"
    ),
    "file_held_by_a_module.py": "import keeper\nkeeper.keep()\n",
    "keeper.py": (
        "handle = None\n"
        "def keep():\n"
        "    global handle\n"
        "    handle = open('outputs/kept.txt', 'w')\n"
        "    handle.write('held by a module, never closed')\n"
    ),
}
LIBRARIES = {"helper.py", "keeper.py"}
# What the stage itself needed and leaves loaded; nothing else may differ.
STAGE_MODULES = {"__future__", "gc", "resource"}
# Debian's sitecustomize is a link into the host's /etc, which a sandbox does not see.
HOST_ONLY_MODULES = {"sitecustomize"}
_PATH_TO_SKILL = re.compile(r"/[^\s\"']*/skill/")


def _paths_out(text: str) -> str:
    return _PATH_TO_SKILL.sub("SKILL/", text)


Run = tuple[int, str, str, dict[str, int]]


def _bare(folder: Path, script: str, args: list[str]) -> Run:
    """``python3 script.py`` in a workspace laid out like the sandbox's."""
    skill = folder / "skill"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(folder),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(skill),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    done = subprocess.run(
        [stage_python(), str(skill / script), *args],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=30,
    )
    outputs = {
        f"outputs/{path.relative_to(folder / 'outputs')}": path.stat().st_size
        for path in sorted((folder / "outputs").rglob("*"))
        if path.is_file()
    }
    return done.returncode, done.stdout.decode(), done.stderr.decode(), outputs


@pytest.fixture(scope="module")
def bare_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for script in SCRIPTS:
        folder = tmp_path_factory.mktemp(script.replace(".", "-"))
        (folder / "skill").mkdir()
        (folder / "outputs").mkdir()
        for name, text in SCRIPTS.items():
            (folder / "skill" / name).write_text(text, encoding="utf-8")
        runs[script] = _bare(folder, script, ["a b", "--flag"])
    return runs


async def _sandboxed(client: httpx.AsyncClient, script: str) -> ExecutorResult:
    package = make_package(dict(SCRIPTS))
    response = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": script, "args": ["a b", "--flag"]}, package),
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


@pytest.mark.parametrize("isolation", ["auto", "namespaces", "none"])
@pytest.mark.parametrize("script", sorted(set(SCRIPTS) - LIBRARIES))
async def test_a_python_script_behaves_as_under_python3(
    make_client: MakeClient,
    bare_runs: dict[str, Run],
    script: str,
    isolation: str,
) -> None:
    client = await make_client(ExecutorSettings(isolation=isolation))
    result = await _sandboxed(client, script)
    code, stdout, stderr, outputs = bare_runs[script]
    assert result.exit_code == code, result.stderr
    assert _paths_out(result.stderr) == _paths_out(stderr)
    if script == "modules.py":
        sandboxed, bare = set(result.stdout.split()), set(stdout.split())
        assert bare - HOST_ONLY_MODULES <= sandboxed
        assert sandboxed - bare <= STAGE_MODULES
    else:
        assert result.stdout == stdout
    # Files left open are complete, as the interpreter's exit leaves them.
    assert {output.name: output.size for output in result.outputs} == outputs
    if script == "traceback.py":
        assert "stage.py" not in result.stderr  # the traceback starts at the script


async def test_executables_run_by_their_shebang(make_client: MakeClient) -> None:
    files = {
        "py-tool": "#!/usr/bin/env python3\nimport sys\nprint('py', sys.argv[1:], __name__)\n",
        "sh-tool": '#!/bin/sh\necho "sh $1"\n',
    }
    package = make_package(files, executable=("py-tool", "sh-tool"))
    for script, expected in (("py-tool", "py ['x'] __main__\n"), ("sh-tool", "sh x\n")):
        client = await make_client()
        response = await client.post(
            "/execute", headers=AUTH, **execute_form({"script": script, "args": ["x"]}, package)
        )
        result = ExecutorResult.model_validate(response.json())
        assert result.exit_code == 0, result.stderr
        assert result.stdout == expected


def test_stage_python_is_a_system_interpreter() -> None:
    assert os.access(stage_python(), os.X_OK)
