"""The audit benchmark stays runnable: --quick runs both tables against real processes (writer
processes on a local folder and on ``moto_server``, two uvicorn-served managers on one moto
bucket) and fails when a run fails or a log does not verify.

Timings are not asserted (shared machines are noisy); docs/BENCHMARKS.md holds the numbers.
The benchmark waits on progress, not on short clocks, and the time limit is generous: on a
machine that another CPU-heavy process shares it is slower, and must still pass.
"""

from __future__ import annotations

import re

import pytest

from bench.audit_bench import main

pytestmark = pytest.mark.timeout(900)


def test_quick_audit_benchmark_runs_and_every_log_verifies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--quick"]) == 0  # a failed run or a damaged log raises SystemExit
    out = capsys.readouterr().out
    for title in ("1. Appends", "2. Two managers on one S3 store", "Targets"):
        assert title in out
    rows = re.findall(r"^│ +(local|s3) │ +(\d+) │.*│ (\w+) +│$", out, re.M)
    assert [(store, writers) for store, writers, _ in rows] == [
        ("local", "1"),
        ("local", "4"),
        ("s3", "1"),
        ("s3", "4"),
    ]
    assert {verdict for _, _, verdict in rows} == {"intact"}
    rounds = re.findall(
        r"^│ +\d │ +(on|off) │ +[\d.]+ │ +(\d+) │ +\d+ / \d+ │ +(\d+) │ +(\d+) │ (\w+) +│$",
        out,
        re.M,
    )
    # No run failed; with the log, one `execution` record per run in one chain per manager.
    assert rounds == [("on", "0", "24", "2", "intact"), ("off", "0", "0", "0", "empty")]
