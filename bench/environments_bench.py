"""Benchmark of skill environments: the first-use build, and what a prepared environment adds to
every later run.

A real manager (in this process, local warm pool, real executors and bubblewrap) over a local
store. Packages come from hermetic indexes on this machine (hand-written wheels in a find-links
folder, npm tarballs from a loopback registry: the ones the tests use), so the figures are the
builder's own cost, not a network's. For each environment:

- *build*: ``POST /sandbox/environments`` on a version never built (the build sandbox, pip or
  npm, packing, storing), median of a few fresh versions;
- *ready*: the same call once built (a store lookup), median;
- *run with* / *run without*: end-to-end ``execute`` of a trivial script, with the environment
  sent and put on the path read-only, against the same skill declaring nothing, each from a
  warm sandbox (the pool settles between runs); medians and p95; the difference is the per-run
  overhead of a cached environment. Measured twice in one run: with the executors' shared
  cache (the default: unpacked once per host, hard-linked into each run) and without it
  (unpacked for every run).

``python bench/environments_bench.py`` (about a minute); ``--quick`` for the smoke test. Prints
tables and exits 0 (figures, not enforced targets). Nothing waits against a short clock, so a
loaded machine makes it slower, not failed: sandboxes get minutes to start, a build gets the
builder's own timeout, and the pool counts as settled once it stops changing with a sandbox
ready (not only at its full target, which a start that failed under load would never reach).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import httpx
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from bench.measures import percentile, until_settled
from bench.skills_bench import _machine_info
from mcp_manager import LocalBackend, create_app
from mcp_manager.server import LoopbackServer
from skillweave.config import EnvironmentSettings, Settings
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.mcp_manager.environment_support import NpmRegistry, python_index, write_wheel

TOKEN: Final = "bench-environments"
BUILDS: Final = 3
_EDITIONS: Final = itertools.count()
BUILDS_QUICK: Final = 1
RUNS: Final = 20
RUNS_QUICK: Final = 3
START_SECONDS: Final = 120.0
"""How long an executor may take to start (the manager's default is 20 s): a loaded machine
starts interpreters slowly, and a start that times out leaves the pool short."""
HTTP_SECONDS: Final = EnvironmentSettings().build_timeout_seconds + 30.0
"""Manager calls wait as long as a build may take: ``SandboxClient`` keeps httpx's 5 s for
``prepare_environment`` and ``pool``, less than a build on a busy machine."""
SETTLE_STALL_SECONDS: Final = START_SECONDS + 30.0
"""The pool may go this long without changing before it counts as stuck."""


@dataclass(frozen=True, slots=True)
class _Case:
    label: str
    files: dict[str, str]  # the skill's declaration and script
    script: str


@dataclass(frozen=True, slots=True)
class _Row:
    label: str
    cache: bool
    size: int
    build_s: float
    ready_ms: float
    with_ms: tuple[float, float]
    without_ms: tuple[float, float]


def _cases() -> list[_Case]:
    python_use = "import swdemo_plus\nprint(swdemo_plus.DOUBLE)\n"
    large_use = "import swlarge\nprint(len(swlarge.__path__))\n"
    node_use = "console.log(require('swnode-plus').double);\n"
    return [
        _Case(
            "python: 2 small wheels",
            {"requirements.txt": "swdemo-plus==1.0\n", "scripts/use.py": python_use},
            "scripts/use.py",
        ),
        _Case(
            "python: 1 wheel, 400 files (8 MB unpacked)",
            {"requirements.txt": "swlarge==1.0\n", "scripts/use.py": large_use},
            "scripts/use.py",
        ),
        _Case(
            "node: 2 small packages",
            {
                "package.json": '{"dependencies": {"swnode-plus": "1.0.0"}}\n',
                "scripts/use.js": node_use,
            },
            "scripts/use.js",
        ),
    ]


def _large_wheel(folder: Path) -> None:
    blob = hashlib.shake_256(b"swlarge").digest(20_000)  # incompressible
    files = {f"swlarge/data/{i:03d}.bin": blob for i in range(400)}
    write_wheel(folder, "swlarge", "1.0", {"swlarge/__init__.py": "", **files})


@contextlib.asynccontextmanager
async def _manager(
    store: LocalArtifactStore, index: Path, registry: str, *, cache: bool
) -> AsyncIterator[str]:
    settings = Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(TOKEN),
            "pool_target": 2,
            "pool_max": 4,
            "start_timeout_seconds": START_SECONDS,
            "claim_timeout_seconds": SETTLE_STALL_SECONDS,
            "environments": {
                "find_links": [str(index)],
                "no_index": True,
                "npm_registry": registry,
                # The bare skill runs the same scripts without an environment: not inferred.
                "infer_imports": False,
            },
        },
    )
    backend = LocalBackend(environment_cache=cache, start_timeout=START_SECONDS)
    app = create_app(settings, store=store, backend=backend, publish=False)
    async with LoopbackServer(app) as server:
        yield server.url


async def _timed(call: object) -> float:
    start = time.perf_counter()
    await call  # type: ignore[misc]
    return time.perf_counter() - start


async def _bench_case(
    case: _Case,
    *,
    root: Path,
    store: LocalArtifactStore,
    client: SandboxClient,
    http: httpx.AsyncClient,
    quick: bool,
) -> _Row:
    builds, ready = [], []
    version = ""
    size = 0
    for attempt in range(BUILDS_QUICK if quick else BUILDS):
        # Environments are keyed by what they install: each attempt's dependencies differ (a
        # requires-python no other attempt has, which every interpreter here meets), so each
        # is built, never found.
        folder = root / f"{case.label.split(':')[0]}-{attempt}"
        edition = f'# /// script\n# requires-python = ">=2.{next(_EDITIONS)}"\n# ///\n'
        files = {**case.files, "scripts/edition.py": edition}
        write_skill(folder / "with-deps", description="Uses packages.", files=files)
        skill = SkillRegistry.from_scan(SkillScanner([folder]).scan()).get("with-deps")
        await publish_skill(store, skill)
        start = time.perf_counter()
        prepared = await _prepare(http, skill.name, skill.version)
        builds.append(time.perf_counter() - start)
        assert prepared["built"], prepared
        size = int(prepared["bytes"])
        start = time.perf_counter()
        await _prepare(http, skill.name, skill.version)
        ready.append((time.perf_counter() - start) * 1000)
        version = skill.version
    bare_folder = root / f"bare-{case.label.split(':')[0]}"
    script_files = {k: v for k, v in case.files.items() if k.startswith("scripts/")}
    write_skill(bare_folder / "no-deps", description="Declares nothing.", files=script_files)
    bare = SkillRegistry.from_scan(SkillScanner([bare_folder]).scan()).get("no-deps")
    await publish_skill(store, bare)

    async def run(skill: str, skill_version: str) -> float:
        await _pool_settled(http)  # every run claims a warm sandbox: only the run is timed
        request = ExecuteRequest(
            execution_id=f"bench/{time.monotonic_ns()}",
            run_id="bench",
            skill=skill,
            version=skill_version,
            script=case.script,
        )
        start = time.perf_counter()
        result = await client.execute(request)
        elapsed = (time.perf_counter() - start) * 1000
        if skill == "with-deps" and result.status != "succeeded":
            raise RuntimeError(f"{case.label}: {result.stderr}")
        return elapsed

    with_deps, without = [], []
    for _ in range(RUNS_QUICK if quick else RUNS):  # interleaved: the same load for both
        with_deps.append(await run("with-deps", version))
        without.append(await run("no-deps", bare.version))
    return _Row(
        case.label,
        True,
        size,
        statistics.median(builds),
        statistics.median(ready),
        (statistics.median(with_deps), percentile(with_deps, 0.95)),
        (statistics.median(without), percentile(without, 0.95)),
    )


async def _prepare(http: httpx.AsyncClient, skill: str, version: str) -> dict[str, object]:
    """``POST /sandbox/environments``, waiting as long as a build may take."""
    response = await http.post("/sandbox/environments", json={"skill": skill, "version": version})
    response.raise_for_status()
    return response.json()


async def _pool_settled(http: httpx.AsyncClient) -> None:
    """Until a sandbox is ready and none is starting or busy (nothing else competes with the
    timed run); see :func:`until_settled`."""

    async def pool() -> dict[str, object]:
        response = await http.get("/sandbox/pool")
        response.raise_for_status()
        return response.json()

    await until_settled(
        pool,
        lambda p: p["ready"] >= 1 and p["starting"] == 0 and p["busy"] == 0,
        stall_seconds=SETTLE_STALL_SECONDS,
        what="the pool settling",
    )


def _table(rows: Sequence[_Row]) -> Table:
    table = Table(title="Skill environments: first-use build and per-run overhead once cached")
    for column in (
        "environment",
        "executors' cache",
        "packed bytes",
        "build s (first use)",
        "ready ms (cached)",
        "run with p50 / p95 ms",
        "run without p50 / p95 ms",
        "overhead p50 ms",
    ):
        label = column == "environment"
        table.add_column(column, justify="left" if label else "right", no_wrap=label)
    for row in rows:
        table.add_row(
            row.label,
            "on" if row.cache else "off",
            f"{row.size:,}",
            f"{row.build_s:.2f}",
            f"{row.ready_ms:.1f}",
            f"{row.with_ms[0]:.1f} / {row.with_ms[1]:.1f}",
            f"{row.without_ms[0]:.1f} / {row.without_ms[1]:.1f}",
            f"{row.with_ms[0] - row.without_ms[0]:+.1f}",
        )
    return table


async def _main(quick: bool, console: Console) -> None:
    with tempfile.TemporaryDirectory(prefix="skillweave-env-bench-") as tmp:
        root = Path(tmp)
        index = python_index(root / "index")
        _large_wheel(index)
        store = LocalArtifactStore(root / "store")
        async with NpmRegistry() as npm:
            npm.add("swnode", "1.0.0", "module.exports = { value: 21 };\n")
            npm.add(
                "swnode-plus",
                "1.0.0",
                "module.exports = { double: require('swnode').value * 2 };\n",
                dependencies={"swnode": "1.0.0"},
            )
            rows = []
            for cache in (True, False):  # the executors' shared cache, then without it
                async with (
                    _manager(store, index, npm.url, cache=cache) as url,
                    SandboxClient(url, token=TOKEN) as client,
                    httpx.AsyncClient(
                        base_url=url,
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        timeout=HTTP_SECONDS,
                    ) as http,
                ):
                    for case in _cases():
                        row = await _bench_case(
                            case,
                            root=root / f"skills-{cache}",
                            store=store,
                            client=client,
                            http=http,
                            quick=quick,
                        )
                        rows.append(replace(row, cache=cache))
    console.print(_table(rows))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one build, a few runs")
    args = parser.parse_args(argv)
    console = Console(width=160)
    console.print("Machine: " + "; ".join(f"{k} {v}" for k, v in _machine_info()))
    started = time.perf_counter()
    asyncio.run(_main(args.quick, console))
    console.print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
