"""Benchmark: the audit log's appends, and the execution rate it leaves two managers on S3.

Prints two tables (issue 42):

- **appends**: 1, 4 and 16 writers, each a process of its own with an :class:`AuditLog`
  (HMAC-keyed) that 8 tasks append to as fast as they can, a fixed number of appends per
  writer, on the local store (a temporary folder) and on S3 (``moto_server`` on loopback, a
  fresh bucket per row). The writers start together; the rate is every writer's appends over
  the time from the first start to the last end, and the latency of one append (from the call
  to its record being stored) is given at p50/p95/p99 over all of them. ``AuditLog.verify``
  runs after each row: the log must be intact and hold every append in one chain per writer.
- **two managers on one S3 store**: two uvicorn-served MCP managers on loopback (warm pools of
  the local backend, executors under bubblewrap when it is installed), each with its own S3
  client on one moto bucket and a manager id of its own, run 192 executions of a trivial
  script at concurrency 32 (16 per manager), with the audit log enabled (``AUDIT__KEY`` set)
  and disabled. Rounds alternate (on, off, off, on) so both see the machine in the same
  state; each round starts fresh managers on a fresh bucket, and after a round with the log
  ``verify`` must find it intact with one ``execution`` record per run.

Targets (issue 42): no run fails; the execution rate with the audit log is at least 0.90× the
rate without it (the means of the rounds of one invocation). Before issue 42, one chain took
55–90 appends/s on a local disk, and the two managers ran 3.8 runs/s with 12–15 of 192 runs
failing. A damaged log or a failed run stops the benchmark with an error (after the tables);
rates are only reported, as the machines are shared and noisy.

Run: ``python bench/audit_bench.py`` (``--quick`` for a smaller smoke run: 1 and 4 writers,
one round each way with smaller pools).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import logging
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Final, Literal

import urllib3
from minio import Minio
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from bench.measures import percentile, until_settled
from mcp_manager import create_app
from mcp_manager.server import LoopbackServer
from skillweave.config import Settings
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.audit import AuditLog, AuditReport
from skillweave.storage.base import ArtifactStore
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.s3 import S3ArtifactStore
from tests.moto import moto_server

KEY: Final = SecretStr("audit-bench-key-not-a-secret")
TOKEN: Final = "bench-token"
ACCESS_KEY: Final = "audit-bench-access"
SECRET_KEY: Final = "audit-bench-secret"
REGION: Final = "us-east-1"
TASKS_PER_WRITER: Final = 8
WRITERS: Final = (1, 4, 16)
WRITERS_QUICK: Final = (1, 4)
APPENDS: Final = {"local": 1000, "s3": 400}
"""Appends per writer in the full run (S3 on moto is slower; the rows still last seconds)."""
APPENDS_QUICK: Final = 40
RUNS: Final = 192
CONCURRENCY: Final = 32
RUNS_QUICK: Final = 24
CONCURRENCY_QUICK: Final = 8
ROUNDS: Final = (True, False, False, True)
"""Audit on/off per round of the managers' table: alternating, so drift hits both alike."""
ROUNDS_QUICK: Final = (True, False)
RATIO_TARGET: Final = 0.90
START_SECONDS: Final = 120.0
"""How long a sandbox may take to start on a loaded machine (as in sandbox_bench)."""
STALL_SECONDS: Final = START_SECONDS + 30.0
TRIVIAL: Final = "print('ok')\n"
AUDIT_LOGGER: Final = "skillweave.storage.audit"

StoreKind = Literal["local", "s3"]


class _AuditWarnings(logging.Handler):
    """Counts what the audit log warns of (a skipped checkpoint, a failed block write) and
    keeps the last message."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = record.getMessage()


# -- appends: one process per writer ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Where:
    """A store a writer process can open: a folder, or a bucket on an S3 endpoint."""

    kind: StoreKind
    place: str
    endpoint: str = ""

    def open(self) -> ArtifactStore:
        match self.kind:
            case "local":
                return LocalArtifactStore(self.place)
            case "s3":
                return S3ArtifactStore(
                    endpoint=self.endpoint,
                    bucket=self.place,
                    access_key=ACCESS_KEY,
                    secret_key=SECRET_KEY,
                    region=REGION,
                )


@dataclass(frozen=True, slots=True)
class _Appended:
    """What one writer process did: its start and end (``time.monotonic``, one clock for all
    processes on Linux) and the seconds each append took; or the error that stopped it."""

    started: float
    finished: float
    latencies: list[float] = field(default_factory=list)
    warnings: int = 0
    """How often its audit log warned (a checkpoint skipped after losing every race)."""
    warning: str = ""
    """The last warning."""
    error: str | None = None


def _writer(where: _Where, index: int, count: int, go: Barrier, out: Queue[_Appended]) -> None:
    """A writer process: open the store, wait for the others, append `count` records."""
    try:
        out.put(asyncio.run(_appends(where, index, count, go)))
    except BaseException as exc:  # the parent must hear of it, or it waits forever
        go.abort()
        out.put(_Appended(0.0, 0.0, error=f"writer {index}: {exc!r}"))


async def _appends(where: _Where, index: int, count: int, go: Barrier) -> _Appended:
    store = where.open()
    log = AuditLog(store, key=KEY, actor=f"bench-writer-{index}")
    warnings = _AuditWarnings()
    logging.getLogger(AUDIT_LOGGER).addHandler(warnings)
    remaining = list(range(count))
    latencies: list[float] = []

    async def task() -> None:
        while remaining:
            n = remaining.pop()
            began = time.monotonic()
            await log.record(
                "execution",
                skill="probe",
                version="b7072df443ca" * 5 + "abcd",
                run=f"bench-run-{index}",
                args=["--n", str(n)],
                script="scripts/trivial.py",
                execution_id=f"skillweave-run-bench-{index}/script-{n}",
            )
            latencies.append(time.monotonic() - began)

    await asyncio.to_thread(go.wait)
    started = time.monotonic()
    await asyncio.gather(*(task() for _ in range(TASKS_PER_WRITER)))
    finished = time.monotonic()
    await log.aclose()
    if isinstance(store, S3ArtifactStore):
        await store.aclose()
    return _Appended(started, finished, latencies, warnings.count, warnings.last)


@dataclass(frozen=True, slots=True)
class _AppendRow:
    kind: StoreKind
    writers: int
    appends: int
    rate: float
    latencies: list[float]
    warnings: int
    warning: str
    report: AuditReport


def _append_row(
    context: multiprocessing.context.BaseContext, where: _Where, writers: int, count: int
) -> _AppendRow:
    go = context.Barrier(writers + 1)
    out: Queue[_Appended] = context.Queue()
    processes = [
        context.Process(target=_writer, args=(where, n, count, go, out), daemon=True)
        for n in range(writers)
    ]
    for process in processes:
        process.start()
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a writer failed: it says why
            go.wait(timeout=STALL_SECONDS)  # every writer has its store and log
        results = [out.get(timeout=STALL_SECONDS * 4) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    errors = [r.error for r in results if r.error is not None]
    if errors:
        raise RuntimeError(f"{where.kind}, {writers} writer(s): {'; '.join(errors)}")
    elapsed = max(r.finished for r in results) - min(r.started for r in results)
    report = asyncio.run(_verify(where))
    return _AppendRow(
        where.kind,
        writers,
        writers * count,
        writers * count / elapsed,
        [t for r in results for t in r.latencies],
        sum(r.warnings for r in results),
        next((r.warning for r in results if r.warning), ""),
        report,
    )


async def _verify(where: _Where) -> AuditReport:
    store = where.open()
    try:
        return await AuditLog(store, key=KEY).verify()
    finally:
        if isinstance(store, S3ArtifactStore):
            await store.aclose()


def _bucket(endpoint: str) -> str:
    """A new, empty bucket on `endpoint`, made as an operator makes one (a store told to create
    its bucket says so in a warning line, which would only be noise here)."""
    name = f"audit-bench-{uuid.uuid4().hex[:12]}"
    http = urllib3.PoolManager()
    try:
        Minio(
            endpoint,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            secure=False,
            region=REGION,
            http_client=http,
        ).make_bucket(name)
    finally:
        http.clear()
    return name


def _appends_table(
    root: Path, endpoint: str, *, quick: bool, broken: list[str], console: Console
) -> None:
    # Writers fork from a server that imported this module once (a spawned writer would import
    # the manager and the S3 client again: seconds of CPU per process on a small machine).
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", _writer.__module__])
    counts = (
        f"{APPENDS_QUICK}"
        if quick
        else " / ".join(f"{APPENDS[kind]} ({kind})" for kind in ("local", "s3"))
    )
    table = Table(
        title=f"1. Appends ({counts} per writer process, {TASKS_PER_WRITER} tasks each; "
        "HMAC; latency in ms)"
    )
    for column in ("store", "writers", "appends/s", "p50", "p95", "p99", "checkpoints"):
        table.add_column(column, justify="right")
    table.add_column("verify")
    warned: list[str] = []
    for kind in ("local", "s3"):
        for writers in WRITERS_QUICK if quick else WRITERS:
            if kind == "local":
                where = _Where("local", str(root / f"appends-{writers}"))
            else:
                where = _Where("s3", _bucket(endpoint), endpoint)
            count = APPENDS_QUICK if quick else APPENDS[kind]
            row = _append_row(context, where, writers, count)
            report = row.report
            if row.warnings:
                warned.append(f"{kind} × {writers}: {row.warnings} ({row.warning})")
            verdict = _checked(
                report,
                records=row.appends,
                writers=writers,
                what=f"appends: {kind}, {writers} writer(s)",
                broken=broken,
            )
            table.add_row(
                kind,
                str(writers),
                f"{row.rate:.0f}",
                *(f"{percentile(row.latencies, q) * 1000:.1f}" for q in (0.50, 0.95, 0.99)),
                str(report.checkpoints),
                verdict,
            )
    table.caption = (
        "appends/s: all writers' appends, first start to last end; latency: one append, call "
        "to stored; verify: AuditLog.verify after the row (one chain per writer, every append; "
        "unanchored: records after their writer's last checkpoint once all closed); audit "
        f"warnings in the writers: {', '.join(warned) or 'none'}"
    )
    console.print(table)


def _checked(
    report: AuditReport, *, records: int, writers: int | None, what: str, broken: list[str]
) -> str:
    """The verify column for `report`; what is wrong with it goes to `broken`."""
    wrong = [problem.message for problem in report.problems[:3]]
    if report.records != records:
        wrong.append(f"{report.records} records, expected {records}")
    if writers is not None and report.writers != writers:
        wrong.append(f"{report.writers} chains, expected {writers}")
    if not report.keyed:
        wrong.append("not keyed")
    if wrong:
        broken.append(f"{what}: {'; '.join(wrong)}")
        return f"[bold red]BROKEN[/] ({len(report.problems)} problems)"
    # Every writer closed its log, which anchors its newest record: records left after their
    # writer's newest checkpoint mean a checkpoint was skipped (said, not a failure).
    return f"intact, {report.unanchored} unanchored" if report.unanchored else "intact"


# -- two managers on one S3 store ------------------------------------------------------------------


class _Manager:
    """A manager served on loopback over its own client of the shared bucket."""

    def __init__(self, store: S3ArtifactStore, *, name: str, pool: int, audit: bool) -> None:
        settings = Settings(
            _env_file=None,
            sandbox={
                "manager_token": SecretStr(TOKEN),
                "manager_id": name,
                "pool_target": pool,
                "pool_max": pool,
                "start_timeout_seconds": START_SECONDS,
                "claim_timeout_seconds": STALL_SECONDS,
            },
            audit={"enabled": audit, "key": KEY},
        )
        self.store = store
        self.app = create_app(settings, store=store, publish=False)
        self.server = LoopbackServer(self.app)
        self.client: SandboxClient | None = None

    async def start(self) -> SandboxClient:
        self.client = SandboxClient(await self.server.start(), token=TOKEN)
        pool = self.app.state.manager.pool

        async def status() -> dict[str, int]:
            return dict(pool.status())

        await until_settled(
            status,
            lambda s: s["ready"] >= s["target"],
            stall_seconds=STALL_SECONDS,
            what="the pool short of its target",
        )
        return self.client

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        await self.server.stop()
        await self.store.aclose()


@dataclass(slots=True)
class _Round:
    audit: bool
    rate: float = 0.0
    failures: list[str] = field(default_factory=list)
    per_manager: list[int] = field(default_factory=list)
    isolation: str = "?"
    report: AuditReport | None = None
    executions: int = 0


async def _round(
    endpoint: str,
    registry: SkillRegistry,
    *,
    audit: bool,
    runs: int,
    concurrency: int,
) -> _Round:
    bucket = _bucket(endpoint)
    publisher = _Where("s3", bucket, endpoint).open()
    try:
        await publish_library(publisher, registry)
    finally:
        assert isinstance(publisher, S3ArtifactStore)
        await publisher.aclose()
    version = registry.get("probe").version
    per = concurrency // 2
    managers = []
    for name in ("bench-manager-a", "bench-manager-b"):
        store = _Where("s3", bucket, endpoint).open()
        assert isinstance(store, S3ArtifactStore)
        managers.append(_Manager(store, name=name, pool=per, audit=audit))
    result = _Round(audit, per_manager=[0, 0])
    try:
        clients = await asyncio.gather(*(m.start() for m in managers))
        queue = list(range(runs))
        tag = uuid.uuid4().hex[:8]

        async def worker(index: int) -> None:
            client = clients[index]
            while queue:
                n = queue.pop()
                request = ExecuteRequest(
                    execution_id=f"skillweave-run-bench-{tag}/script-{n}",
                    run_id=f"bench-{tag}",
                    skill="probe",
                    version=version,
                    script="scripts/trivial.py",
                    args=[str(n)],
                )
                try:
                    ran = await client.execute(request)
                except Exception as exc:  # a failed run is counted and named, not fatal here
                    result.failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                if ran.status != "succeeded":
                    result.failures.append(f"{ran.status}: {ran.stderr or ran.error}")
                    continue
                result.per_manager[index] += 1
                result.isolation = ran.isolation or "?"

        started = time.perf_counter()
        await asyncio.gather(*(worker(n % 2) for n in range(concurrency)))
        result.rate = runs / (time.perf_counter() - started)
    finally:
        for manager in managers:
            await manager.stop()
    checker = _Where("s3", bucket, endpoint)
    result.report = await _verify(checker)
    store = checker.open()
    try:
        result.executions = len(
            [r async for r in AuditLog(store, key=KEY).read() if r.event == "execution"]
        )
    finally:
        assert isinstance(store, S3ArtifactStore)
        await store.aclose()
    return result


async def _managers_table(
    root: Path, endpoint: str, *, quick: bool, broken: list[str], console: Console
) -> float:
    """Runs the rounds, prints their table and returns the ratio of the mean rates."""
    skills = root / "skills"
    probe = skills / "probe"
    (probe / "scripts").mkdir(parents=True)
    (probe / "SKILL.md").write_text(
        "---\nname: probe\ndescription: Benchmark scripts.\n---\n# Probe\n"
    )
    (probe / "scripts" / "trivial.py").write_text(TRIVIAL)
    registry = SkillRegistry.from_scan(SkillScanner([skills]).scan())
    runs = RUNS_QUICK if quick else RUNS
    concurrency = CONCURRENCY_QUICK if quick else CONCURRENCY
    warnings = _AuditWarnings()
    audit_logger = logging.getLogger(AUDIT_LOGGER)
    audit_logger.addHandler(warnings)
    rounds: list[_Round] = []
    try:
        for audit in ROUNDS_QUICK if quick else ROUNDS:
            rounds.append(
                await _round(endpoint, registry, audit=audit, runs=runs, concurrency=concurrency)
            )
    finally:
        audit_logger.removeHandler(warnings)

    table = Table(
        title=f"2. Two managers on one S3 store ({runs} runs of a trivial script, "
        f"concurrency {concurrency})"
    )
    for column in (
        "round",
        "audit",
        "runs/s",
        "failed",
        "a / b",
        "records",
        "chains",
    ):
        table.add_column(column, justify="right")
    table.add_column("verify")
    for n, result in enumerate(rounds, 1):
        label = "on" if result.audit else "off"
        report = result.report
        assert report is not None
        what = f"managers, round {n} (audit {label})"
        if result.failures:
            broken.append(
                f"{what}: {len(result.failures)} of {runs} runs failed, first: {result.failures[0]}"
            )
        if result.audit:
            # Records == starts: one `execution` record per run, and nothing else.
            verdict = _checked(
                report, records=runs - len(result.failures), writers=2, what=what, broken=broken
            )
            if result.executions != report.records:
                broken.append(f"{what}: {result.executions} of {report.records} are executions")
        elif report.records:
            broken.append(f"{what}: {report.records} records with the log off")
            verdict = "[bold red]NOT EMPTY[/]"
        else:
            verdict = "empty"
        table.add_row(
            str(n),
            label,
            f"{result.rate:.1f}",
            str(len(result.failures)),
            f"{result.per_manager[0]} / {result.per_manager[1]}",
            str(result.executions),
            str(report.writers),
            verdict,
        )
    on = statistics.mean(r.rate for r in rounds if r.audit)
    off = statistics.mean(r.rate for r in rounds if not r.audit)
    table.caption = (
        f"isolation: {rounds[-1].isolation}; a fresh bucket and fresh managers (pools of "
        f"{concurrency // 2}) per round; records: `execution` records in the log after the "
        f"round (one per run); mean runs/s with the log {on:.1f}, without {off:.1f}: "
        f"{on / off:.2f}×; audit warnings logged: {warnings.count}"
        + (f" (the last: {warnings.last})" if warnings.count else "")
    )
    console.print(table)
    return on / off


# -- the whole -------------------------------------------------------------------------------------


def _run(quick: bool, console: Console) -> list[str]:
    broken: list[str] = []
    with tempfile.TemporaryDirectory(prefix="skillweave-audit-bench-") as tmp:
        root = Path(tmp)
        with moto_server(root) as endpoint:
            _appends_table(root, endpoint, quick=quick, broken=broken, console=console)
            ratio = asyncio.run(
                _managers_table(root, endpoint, quick=quick, broken=broken, console=console)
            )
    summary = Table(title="Targets")
    for column in ("target", "measured", ""):
        summary.add_column(column)
    summary.add_row(
        f"two managers: rate with the audit log ≥ {RATIO_TARGET:.2f}× without",
        f"{ratio:.2f}×",
        "met" if ratio >= RATIO_TARGET else "[bold red]MISSED[/]",
    )
    summary.add_row(
        "every run succeeds, every log verifies",
        "yes" if not broken else f"{len(broken)} problem(s)",
        "met" if not broken else "[bold red]MISSED[/]",
    )
    console.print(summary)
    console.print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return broken


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, for a smoke test")
    options = parser.parse_args(argv)
    console = Console()
    console.print(
        f"skillweave audit benchmark · {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
        f" · {os.cpu_count()} cores · {platform.python_implementation()} "
        f"{platform.python_version()} · load {os.getloadavg()[0]:.2f}"
    )
    broken = _run(options.quick, console)
    if broken:
        raise SystemExit("audit bench: " + " | ".join(broken))
    return 0


if __name__ == "__main__":
    sys.exit(main())
