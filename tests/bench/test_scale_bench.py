"""The scale benchmark: how it reads a process's CPU, memory and metrics, the worker tuning it
passes to every framework alike, its per-step figures and verdicts, and one real batch of
skillweave's side (a dev server and a worker subprocess; the peers need ``.venv-bench``).
"""

from __future__ import annotations

import argparse
import io
import math
import os

import pytest
from rich.console import Console
from temporalio.worker import PollerBehaviorSimpleMaximum, UnsandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxRestrictions

from bench import scale_bench
from bench.peers_bench import SKILLWEAVE, print_table
from bench.processes import (
    cpu_seconds,
    memory_kib,
    metric_totals,
    status_kib,
    tree_cpu_seconds,
)
from bench.scale_bench import Batch, batch_order, sample, verdicts
from bench.scale_worker import Tuning, add_tuning_options, tuning_of
from skillweave.config import WorkflowSettings
from workflows.worker import sandbox_runner, worker_tuning

# A process named "(my) worker" that used 250 + 50 ticks: the name holds a space and a paren.
STAT = (
    "4242 ((my) worker) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 "
    "12345 1048576 4096 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
)
STATUS = "Name:\tpython\nVmPeak:\t  900000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  131072 kB\n"
METRICS_TEXT = """\
# HELP temporal_sticky_cache_total_forced_eviction Workflows evicted from the cache
# TYPE temporal_sticky_cache_total_forced_eviction counter
temporal_sticky_cache_total_forced_eviction{task_queue="a",workflow_type="X"} 3
temporal_sticky_cache_total_forced_eviction{task_queue="a",workflow_type="Y"} 4
# HELP temporal_sticky_cache_size Current number of cached workflows
# TYPE temporal_sticky_cache_size gauge
temporal_sticky_cache_size{task_queue="a"} 100
# HELP temporal_workflow_task_replay_latency Replay latency
# TYPE temporal_workflow_task_replay_latency histogram
temporal_workflow_task_replay_latency_bucket{le="1"} 5
temporal_workflow_task_replay_latency_bucket{le="+Inf"} 5
temporal_workflow_task_replay_latency_sum 2
temporal_workflow_task_replay_latency_count 5
"""


def _batch(framework: str, jobs: int, *, completed: int | None = None, wall: float) -> Batch:
    return Batch(
        framework=framework,
        jobs=jobs,
        steps=10,
        completed=jobs if completed is None else completed,
        wall_seconds=wall,
        worker_cpu=2.0,
        server_cpu=1.0,
        client_cpu=0.5,
        history_events=150.0,
        history_bytes=40_000.0,
        rss_ready_kib=100_000,
        rss_peak_kib=151_200,
    )


def test_cpu_is_read_after_the_command_name_whatever_it_holds() -> None:
    assert cpu_seconds(STAT, 100) == 3.0
    with pytest.raises(ValueError, match="not a /proc/<pid>/stat line"):
        cpu_seconds("4242 (python", 100)
    with pytest.raises(ValueError, match="not a /proc/<pid>/stat line"):
        cpu_seconds("4242 (python) S 1 2", 100)


def test_memory_fields_are_read_in_kib() -> None:
    assert status_kib(STATUS, "VmRSS") == 131_072
    assert status_kib(STATUS, "VmHWM") == 204_800
    with pytest.raises(ValueError, match="no VmSwap"):
        status_kib(STATUS, "VmSwap")


def test_this_process_is_read_from_proc() -> None:
    assert tree_cpu_seconds(os.getpid()) > 0
    assert memory_kib(os.getpid(), "VmHWM") >= memory_kib(os.getpid(), "VmRSS") > 0


def test_runtime_metrics_are_summed_over_their_labels_by_exposed_name() -> None:
    assert metric_totals(METRICS_TEXT) == {
        "temporal_sticky_cache_total_forced_eviction": 7.0,
        "temporal_sticky_cache_size": 100.0,
    }
    assert set(scale_bench.METRICS.values()) >= set(metric_totals(METRICS_TEXT))


def test_every_framework_gets_skillweaves_tuning_and_the_options_over_it() -> None:
    defaults = worker_tuning(WorkflowSettings())
    assert Tuning().worker_options() == defaults
    assert "max_cached_workflows 1000 (default)" in Tuning().describe()
    tuning = Tuning(cache=100, workflow_slots=8, activity_slots=16, local_activity_slots=4)
    assert tuning.worker_options() == {
        **defaults,
        "max_cached_workflows": 100,
        "max_concurrent_workflow_tasks": 8,
        "max_concurrent_activities": 16,
        "max_concurrent_local_activities": 4,
    }
    polled = Tuning(pollers=3)
    assert polled.worker_options() == {
        **defaults,
        "workflow_task_poller_behavior": PollerBehaviorSimpleMaximum(3),
        "activity_task_poller_behavior": PollerBehaviorSimpleMaximum(3),
    }
    assert "workflow_task_poller_behavior 3 ·" in polled.describe()


def test_the_tuning_reaches_the_worker_subprocess_unchanged() -> None:
    parser = argparse.ArgumentParser()
    add_tuning_options(parser)
    tuning = Tuning(cache=100, activity_slots=16, pollers=2)
    assert tuning.argv() == ["--cache", "100", "--activity-slots", "16", "--pollers", "2"]
    assert tuning_of(parser.parse_args(tuning.argv())) == tuning
    assert tuning_of(parser.parse_args([])) == Tuning()
    unsandboxed = Tuning(sandbox=False)
    assert unsandboxed.argv() == ["--no-sandbox"]
    assert tuning_of(parser.parse_args(["--no-sandbox"])) == unsandboxed
    local = Tuning(local_reads=True)
    assert local.argv() == ["--local-reads"]
    assert tuning_of(parser.parse_args(["--local-reads"])) == local
    assert "skillweave's reads: local activities" in local.describe()


def test_every_framework_runs_in_the_sandbox_or_none_does() -> None:
    assert isinstance(Tuning(sandbox=False).runner(SKILLWEAVE), UnsandboxedWorkflowRunner)
    assert isinstance(Tuning(sandbox=False).runner("pydantic-ai"), UnsandboxedWorkflowRunner)
    # skillweave's sandbox passes its pure modules through; a peer's is the SDK's own
    assert Tuning(sandbox=True).runner(SKILLWEAVE).restrictions == sandbox_runner().restrictions
    assert Tuning(sandbox=True).runner("pydantic-ai").restrictions == SandboxRestrictions.default
    default = Tuning().sandboxed
    assert default == WorkflowSettings().worker_workflow_sandbox
    assert Tuning().describe().endswith(f"workflow sandbox {'on' if default else 'off'} (default)")


def test_a_batch_counts_completed_steps_over_its_window() -> None:
    batch = _batch("x", 50, completed=40, wall=8.0)
    assert batch.done_steps == 400
    assert batch.steps_per_second == 50.0
    assert batch.jobs_per_second == 5.0
    assert batch.cpu_ms_per_step(batch.worker_cpu) == 5.0
    assert batch.peak_kib_per_job == pytest.approx(51_200 / 50)
    # 3.5 CPU seconds over 400 steps, worker, server and client together
    assert batch.cpu_ms_total == pytest.approx(8.75)
    assert batch.steps_per_cpu_second == pytest.approx(400 / 3.5)
    nothing = _batch("x", 50, completed=0, wall=0.0)
    assert (nothing.steps_per_second, nothing.jobs_per_second) == (0.0, 0.0)
    assert math.isnan(nothing.cpu_ms_per_step(1.0))


def test_a_finished_batch_prints_its_figures_at_once() -> None:
    batch = Batch(**{**_batch("x", 50, completed=40, wall=8.0).__dict__, "metrics": {"hits": 9}})
    line = scale_bench._summary(batch)
    assert line.startswith("40/50 jobs in 8.0 s · 50.0 steps/s · CPU ms/step worker 5.0 ")
    assert line.endswith("· 1,024 KiB / job · hits 9")


def test_skillweave_is_judged_against_the_fastest_peer_at_each_n() -> None:
    batches = [
        _batch(SKILLWEAVE, 50, wall=10.0),  # 50 steps/s
        _batch("slow-peer", 50, wall=50.0),  # 10 steps/s
        _batch("fast-peer", 50, wall=15.0),  # 33.3 steps/s: 1.5x exactly
        _batch(SKILLWEAVE, 200, completed=199, wall=10.0),
        _batch("fast-peer", 200, wall=100.0),
        _batch("fast-peer", 1000, wall=10.0),  # no skillweave batch: no verdict
    ]
    found = verdicts(batches)
    assert [(v.jobs, v.peer.framework) for v in found] == [(50, "fast-peer"), (200, "fast-peer")]
    assert found[0].ratio == pytest.approx(1.5)
    assert found[0].met
    # the same CPU a step on both sides: what the cores would sustain is alike
    assert found[0].cpu_ratio == pytest.approx(1.0)
    # far faster, but a job did not complete: the target is missed
    assert found[1].ratio > 1.5
    assert not found[1].all_completed
    assert not found[1].met
    assert verdicts([_batch(SKILLWEAVE, 50, wall=1.0)]) == []


def test_histories_are_sampled_evenly_from_first_to_last() -> None:
    ids = [str(n) for n in range(100)]
    picked = sample(ids, 10)
    assert len(picked) == 10
    assert (picked[0], picked[-1]) == ("0", "99")
    assert sample(ids[:3], 10) == ids[:3]


def test_at_each_n_another_framework_runs_first() -> None:
    order = batch_order(["a", "b", "c"], [50, 200, 1000])
    assert [order[i][1] for i in (0, 3, 6)] == ["a", "b", "c"]
    assert sorted(f for n, f in order if n == 200) == ["a", "b", "c"]


def test_without_the_peers_only_skillweave_runs_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scale_bench, "PEERS_INSTALLED", False)
    out = io.StringIO()
    console = Console(file=out, width=200)
    wanted = [SKILLWEAVE, "pydantic-ai", "openai-agents"]
    assert scale_bench._frameworks(wanted, console) == [SKILLWEAVE]
    assert "skipping pydantic-ai, openai-agents" in out.getvalue()
    assert "make bench-peers" in out.getvalue()


def test_the_target_table_says_when_a_job_did_not_complete() -> None:
    batches = [_batch(SKILLWEAVE, 200, completed=150, wall=1.0), _batch("peer", 200, wall=9.0)]
    out = io.StringIO()
    print_table(
        Console(file=out, width=200), scale_bench._targets_table(verdicts(batches)), markdown=True
    )
    row = out.getvalue().splitlines()[4]
    assert row.startswith("| 200 |")
    assert row.endswith("| no | MISSED | 2.3 ms | 1.8 ms | 0.75× |")


@pytest.mark.slow
def test_skillweaves_side_runs_a_batch_on_a_real_server_and_worker_subprocess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # three jobs and a warm-up on a worker that caches two: it evicts, replays, and completes all
    argv = ["--frameworks", SKILLWEAVE, "--jobs", "3", "--steps", "2", "--cache", "2"]
    assert scale_bench.main([*argv, "--markdown", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    throughput = next(line for line in out.splitlines() if line.startswith("| skillweave | 3 |"))
    assert "| 3/3 |" in throughput
    cost, cache = [line for line in out.splitlines() if line.startswith("| skillweave | 3 |")][1:]
    worker, server = (float(cell) for cell in cost.split("|")[3:5])
    assert worker > 0
    assert server > 0
    evictions = float(cache.split("|")[3].replace(",", ""))
    assert evictions > 0
    assert "max_cached_workflows 2 · max_concurrent_workflow_tasks 100 (default)" in out


@pytest.mark.slow
def test_local_reads_put_a_marker_in_every_read_step(capsys: pytest.CaptureFixture[str]) -> None:
    """``--local-reads``: skillweave's runs read with local activities (a marker each in the
    history), as runs an earlier worker started do; without it the reads ride with the model
    calls. The difference is what the benchmark's A/B measures."""
    argv = ["--frameworks", SKILLWEAVE, "--jobs", "2", "--steps", "4", "--markdown"]

    def events_per_step(*extra: str) -> float:
        assert scale_bench.main([*argv, *extra, "--timeout", "60"]) == 0
        out = capsys.readouterr().out.splitlines()
        rows = [row for row in out if row.startswith("| skillweave | 2 |")]
        return float(rows[1].split("|")[7])

    riding, local = events_per_step(), events_per_step("--local-reads")
    assert local == pytest.approx(riding + 1.0, abs=0.01)
