"""Managers (``tests.integration.harness``) with a local pool of real executor processes and a
backend that counts what ran, over a local artifact store holding a test skill library
(published the way the manager publishes)."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Final

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager import LocalBackend, Sandbox
from mcp_manager.backends import SandboxBackend
from skillweave.config import Settings
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import BUNDLED_SKILLS, write_skill
from tests.integration.harness import Manager, StartManager

TOKEN = "manager-test-token"

SCRIPTS = {
    "hello.py": "import sys\nprint('hello', *sys.argv[1:])\n",
    "copy.py": textwrap.dedent(
        """
        import pathlib
        data = pathlib.Path('inputs/in.txt').read_bytes()
        pathlib.Path('outputs').mkdir(exist_ok=True)
        pathlib.Path('outputs/out.txt').write_bytes(data[::-1])
        print(len(data))
        """
    ),
    "loop.py": "while True:\n    pass\n",
    "leftovers.py": textwrap.dedent(
        """
        import os, sys
        print(sorted(os.listdir('outputs')), sorted(os.listdir('/tmp')))
        with open(f'outputs/mark-{sys.argv[1]}.txt', 'w') as out:
            out.write(sys.argv[1])
        with open(f'/tmp/scratch-{sys.argv[1]}', 'w') as out:
            out.write('x')
        """
    ),
    "residue.py": textwrap.dedent(
        """
        import json, os, subprocess, sys
        mark = sys.argv[1]
        places = ['.', 'outputs', '/tmp', '/dev/shm', os.environ.get('HOME', '/nonexistent')]
        seen = {}
        for place in places:
            try:
                seen[place] = sorted(n for n in os.listdir(place) if 'residue-' in n)
            except OSError:
                seen[place] = []
        others = []
        for pid in os.listdir('/proc'):
            if pid.isdigit() and int(pid) != os.getpid():
                try:
                    with open(f'/proc/{pid}/cmdline', 'rb') as cmdline:
                        others.append(cmdline.read().replace(b'\\0', b' ').decode())
                except OSError:
                    pass
        seen['processes'] = [c for c in others if 'residue-' in c]
        print(json.dumps(seen))
        os.makedirs('outputs', exist_ok=True)
        for place in ['.', 'outputs', '/tmp', '/dev/shm']:
            with open(os.path.join(place, f'residue-{mark}'), 'w') as out:
                out.write(mark)
        # A daemon that outlives the script if it can: own session, no parent to wait for it.
        subprocess.Popen(
            [sys.executable, '-c', 'import time; time.sleep(60)', f'residue-{mark}'],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        """
    ),
    "sleep.py": "import time\ntime.sleep(60)\n",
    "nap.py": "import sys, time\ntime.sleep(float(sys.argv[1]))\nprint('rested')\n",
    "memory.py": "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))\n",
    "fork.py": textwrap.dedent(
        """
        import os, time
        children = 0
        try:
            for _ in range(10000):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
        except OSError as exc:
            print('fork refused after', children, exc)
            raise SystemExit(3)
        """
    ),
    "flood.py": textwrap.dedent(
        """
        import sys
        line = 'x' * 1023 + '\\n'
        for _ in range(100 * 1024):
            sys.stdout.write(line)
        """
    ),
    "connect.py": textwrap.dedent(
        """
        import socket, sys
        try:
            socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2).close()
            print('CONNECTED')
        except OSError as exc:
            print('BLOCKED', exc)
        """
    ),
    "env.py": "import os\nfor k in sorted(os.environ):\n    print(k, '=', os.environ[k])\n",
    "names.py": textwrap.dedent(
        """
        import json, os, sys
        os.makedirs('outputs', exist_ok=True)
        for index, name in enumerate(json.loads(sys.argv[1])):
            with open(os.path.join('outputs', name), 'w', encoding='utf-8') as out:
                out.write(str(index))
        print(json.dumps(sys.argv[2:]))
        """
    ),
    "readfile.py": textwrap.dedent(
        """
        import sys
        try:
            print('READ', open(sys.argv[1]).read())
        except OSError as exc:
            print('DENIED', type(exc).__name__)
        """
    ),
}


_BUSY_CHECKS: Final = 10


class CountingBackend(LocalBackend):
    """A local backend that counts executions that really ran, outside the sandbox: before a
    one-shot executor is destroyed, its own /healthz says whether it served an execution."""

    def __init__(self) -> None:
        super().__init__(start_timeout=30.0)
        self.runs = 0
        self.destroyed = 0
        self.destroying = 0  # asked for and not finished: counted once the pool asks

    def destroy(self, sandbox: Sandbox) -> Coroutine[object, object, None]:
        # Not ``async``: the pool asks (and this counts) in the same step as it stops counting
        # the sandbox as busy, so a test that saw the pool settle waits for the count too.
        self.destroying += 1
        return self._destroy(sandbox)

    async def _destroy(self, sandbox: Sandbox) -> None:
        try:
            self.destroyed += 1
            if sandbox.url:
                with contextlib.suppress(httpx.HTTPError):
                    if await _served(sandbox.url):
                        self.runs += 1
            await super().destroy(sandbox)
        finally:
            self.destroying -= 1


async def _served(url: str) -> bool:
    """Whether the executor at `url` took an execution. "busy" also means a request it took
    and is about to give back (the manager dropped it before its end, and the executor has
    not seen the drop yet, which a loaded machine makes likely): asked again until it is
    "ready" again (given back: nothing ran) or "done", for up to a second."""
    async with httpx.AsyncClient() as client:
        for _ in range(_BUSY_CHECKS):
            status = (await client.get(f"{url}/healthz", timeout=2.0)).json().get("status")
            if status != "busy":
                return status == "done"
            await asyncio.sleep(0.1)
    return True  # busy all along: it is running one


class TrackingBackend(CountingBackend):
    """A counting backend that also knows its live sandboxes, to find the busy one."""

    def __init__(self) -> None:
        super().__init__()
        self.alive: list[Sandbox] = []

    async def create(self) -> Sandbox:
        sandbox = await super().create()
        self.alive.append(sandbox)
        return sandbox

    async def _destroy(self, sandbox: Sandbox) -> None:
        with contextlib.suppress(ValueError):
            self.alive.remove(sandbox)
        await super()._destroy(sandbox)

    async def busy(self) -> Sandbox | None:
        async with httpx.AsyncClient() as client:
            for sandbox in list(self.alive):
                with contextlib.suppress(httpx.HTTPError):
                    health = await client.get(f"{sandbox.url}/healthz", timeout=2.0)
                    if health.json().get("status") == "busy":
                        return sandbox
        return None


@pytest.fixture
def library(tmp_path: Path) -> SkillRegistry:
    root = tmp_path / "skills"
    write_skill(
        root / "probe",
        description="Test scripts for the sandbox suite.",
        files={f"scripts/{name}": code for name, code in SCRIPTS.items()},
    )
    write_skill(
        root / "secret-holder",
        description="Has a secret.",
        files={"scripts/env.py": SCRIPTS["env.py"]},
    )
    return SkillRegistry.from_scan(SkillScanner([BUNDLED_SKILLS, root]).scan())


@pytest.fixture
async def start_manager(tmp_path: Path, library: SkillRegistry) -> AsyncIterator[StartManager]:
    """Start managers on one store holding `library`; every one is stopped at the end."""
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, library)
    async with contextlib.AsyncExitStack() as started:

        async def start(
            *,
            pool_target: int = 1,
            pool_max: int = 4,
            claim_timeout: float = 20.0,
            backend: SandboxBackend | None = None,
            environments: dict[str, object] | None = None,
        ) -> Manager:
            settings = Settings(
                _env_file=None,
                # The manager's own library is the published one: secrets bind to its versions.
                skills={"dirs": ["bundled", str(tmp_path / "skills")]},
                sandbox={
                    "environments": environments or {},
                    "manager_token": SecretStr(TOKEN),
                    "pool_target": pool_target,
                    "pool_max": pool_max,
                    "claim_timeout_seconds": claim_timeout,
                    "skill_secrets": {"secret-holder": {"HOLDER_TOKEN": SecretStr("tok-8f2d9c1a")}},
                },
            )
            return await started.enter_async_context(
                Manager.serving(
                    settings, store=store, registry=library, backend=backend or CountingBackend()
                )
            )

        yield start
