"""Skill registries at scale: what a search over a large static index costs.

For each size, a synthetic index of that many entries is written (format 1, as `skillweave
registry build` writes one), and a fresh process searches it three times with the settings'
selection (bm25 here): the first search of a process reads, verifies and ranks the listing
(with no cache, then again with the on-disk cache of the first process warm); the next
searches of the same process reuse the listing and ranker it keeps. A worker pays the first
once per process; `skills find` pays it on every command.

    python bench/registry_bench.py [--quick] [--sizes 1000,5000,20000]

Prints a table only and always exits 0: timings on shared machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.table import Table

SIZES: Final = (1_000, 5_000, 20_000)
QUICK_SIZES: Final = (200, 1_000)
QUERIES: Final = ("convert csv files to json", "summarise pdf reports", "translate text")
_WORDS: Final = [
    "convert",
    "parse",
    "render",
    "summarise",
    "csv",
    "pdf",
    "json",
    "table",
    "chart",
    "image",
    "audio",
    "text",
    "log",
    "metric",
    "deploy",
    "test",
    "lint",
    "format",
    "translate",
    "extract",
    "merge",
    "split",
    "compress",
    "encrypt",
    "sign",
    "verify",
    "schedule",
    "notify",
    "email",
    "calendar",
    "invoice",
    "report",
]

# Run in a fresh interpreter: the first search of a process is what is measured.
_SEARCH: Final = """
import asyncio, json, sys, time
from skillweave.config import SkillsSettings
from skillweave.skills.registries import Registries
settings = SkillsSettings.model_validate(
    {"registries": ["index:" + sys.argv[1]], "registry_cache_dir": sys.argv[2],
     "selection": "bm25"})
async def main():
    registries, times = Registries(settings), []
    for query in json.loads(sys.argv[3]):
        started = time.perf_counter()
        hits = await registries.search(query, top_k=5)
        times.append((time.perf_counter() - started) * 1000)
        assert hits, query
    print(json.dumps(times))
asyncio.run(main())
"""


def write_index(path: Path, size: int) -> None:
    """A format-1 index of `size` entries with varied names and descriptions."""
    chosen = random.Random(size)
    skills = []
    for i in range(size):
        w = chosen.sample(_WORDS, 5)
        skills.append(
            {
                "name": f"{w[0]}-{w[1]}-{i}",
                "description": f"{w[0].title()} {w[1]} {w[2]} files into {w[3]} and {w[4]}. "
                f"Use when asked to {w[0]} {w[1]}.",
                "source": "https://git.example.com/acme/skills.git",
                "commit": "0" * 40,
                "path": f"skills/s{i}",
                "version": f"{i:064x}",
            }
        )
    document = {
        "format": 1,
        "name": "bench",
        "generated_at": datetime.now(UTC).isoformat(),
        "skills": skills,
    }
    path.write_text(json.dumps(document))


def _searches(index: Path, cache: Path) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", _SEARCH, str(index), str(cache), json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    times: list[float] = json.loads(done.stdout)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table; always returns 0."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small indexes only")
    parser.add_argument("--sizes", help="comma-separated entry counts (default 1000,5000,20000)")
    args = parser.parse_args(argv)
    sizes = (
        tuple(int(size) for size in args.sizes.split(","))
        if args.sizes
        else QUICK_SIZES
        if args.quick
        else SIZES
    )
    table = Table(title="Registry search (bm25, top 5), ms", title_justify="left")
    for column in ("entries", "index MB", "first, no cache", "first, cache warm", "next"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="registry-bench-") as temp:
        for size in sizes:
            index = Path(temp) / f"index-{size}.json"
            write_index(index, size)
            cache = Path(temp) / f"cache-{size}"
            cold = _searches(index, cache)
            warm = _searches(index, cache)
            following = sorted(cold[1:] + warm[1:])
            table.add_row(
                f"{size:,}",
                f"{index.stat().st_size / 1e6:.1f}",
                f"{cold[0]:.0f}",
                f"{warm[0]:.0f}",
                f"{following[len(following) // 2]:.0f}",
            )
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
