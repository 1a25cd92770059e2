"""What a benchmark reads of a process it started: its CPU and memory from ``/proc``, its
runtime metrics from a Prometheus endpoint, and the machine's load.

``bench/scale_bench.py`` attributes a batch's CPU to the worker, the server and the client,
each a process of its own, with these; the parsers are pure (tested on sample text), the
readers read ``/proc/<pid>/...`` (Linux).
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from prometheus_client.parser import text_string_to_metric_families

__all__ = [
    "STICKY_CACHE_EVICTIONS",
    "STICKY_CACHE_HITS",
    "STICKY_CACHE_MISSES",
    "STICKY_CACHE_SIZE",
    "cpu_seconds",
    "load_average",
    "memory_kib",
    "metric_totals",
    "own_cpu_seconds",
    "reaped_cpu_seconds",
    "status_kib",
    "tree_cpu_seconds",
]


STICKY_CACHE_EVICTIONS: Final = "temporal_sticky_cache_total_forced_eviction"
STICKY_CACHE_HITS: Final = "temporal_sticky_cache_hit"
STICKY_CACHE_MISSES: Final = "temporal_sticky_cache_miss"
STICKY_CACHE_SIZE: Final = "temporal_sticky_cache_size"
"""The Temporal SDK's runtime metrics of a worker's sticky cache, as its Prometheus exporter
names them (docs/SCALING.md says what each means)."""


def cpu_seconds(stat: str, ticks_per_second: int) -> float:
    """User + system CPU seconds of a process, from its ``/proc/<pid>/stat`` text.

    The command name (field 2) is in parentheses and may hold spaces or parentheses, so the
    fields are counted after the last ``)``: utime and stime are fields 14 and 15.

    Raises:
        ValueError: `stat` is not such a line.
    """
    after = _after_name(stat, 13)
    return (int(after[11]) + int(after[12])) / ticks_per_second


def reaped_cpu_seconds(stat: str, ticks_per_second: int) -> float:
    """User + system CPU seconds of the children a process has waited for (and of theirs that
    they waited for), from its ``/proc/<pid>/stat`` text: cutime and cstime, fields 16 and 17.

    Raises:
        ValueError: `stat` is not such a line.
    """
    after = _after_name(stat, 15)
    return (int(after[13]) + int(after[14])) / ticks_per_second


def _after_name(stat: str, fields: int) -> list[str]:
    """The fields of a ``/proc/<pid>/stat`` text after the command name (field 2, in
    parentheses, which may hold spaces or parentheses: counted after the last ``)``); at
    least `fields` of them, else ValueError."""
    _, paren, rest = stat.rpartition(")")
    after = rest.split()
    if not paren or len(after) < fields:
        raise ValueError(f"not a /proc/<pid>/stat line: {stat[:80]!r}")
    return after


def status_kib(status: str, key: str) -> int:
    """A ``kB`` field (``VmRSS``, ``VmHWM``) of a ``/proc/<pid>/status`` text, in KiB.

    Raises:
        ValueError: `status` has no such field.
    """
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name == key:
            return int(value.split()[0])
    raise ValueError(f"no {key} in /proc/<pid>/status")


def _tree(pid: int) -> Iterator[int]:
    """`pid` and its descendants (from the ``children`` of each of its threads)."""
    yield pid
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in task.read_text().split():
                yield from _tree(int(child))


def tree_cpu_seconds(pid: int) -> float:
    """The CPU seconds of `pid` and its live descendants, from ``/proc``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in _tree(pid):
        with contextlib.suppress(OSError):
            total += cpu_seconds(Path(f"/proc/{member}/stat").read_text(), ticks)
    return total


def memory_kib(pid: int, key: str) -> int:
    """A memory field (``VmRSS``, ``VmHWM``) of `pid`, in KiB."""
    return status_kib(Path(f"/proc/{pid}/status").read_text(), key)


def own_cpu_seconds() -> float:
    """This process's user + system CPU seconds, every thread."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def metric_totals(text: str) -> dict[str, float]:
    """Prometheus text: each counter's and gauge's value by its name as exposed, summed over
    its labels (the parser names a counter's samples ``<name>_total``; the exporter of
    Temporal's SDK core does not add the suffix). Histograms and summaries are left out."""
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in (family.name, f"{family.name}_total"):
                totals[family.name] = totals.get(family.name, 0.0) + sample.value
    return totals


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as ``os.getloadavg`` gives them."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())
