"""The worker metrics: what ``AgentServices`` counts as a run runs (model calls and tokens,
script runs by outcome, activations by skill, searches), and the ``/metrics`` server the
worker processes start."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import cast

import httpx
import pytest

from skillweave.agent import AgentSpec, CatalogOptions
from skillweave.agent.effect_models import RunScriptInput
from skillweave.config import ObservabilitySettings, Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.worker_metrics import WorkerMetrics, serve_worker_metrics
from skillweave.errors import ConfigError, ModelError, SandboxLostError
from skillweave.llm.base import ModelProvider
from skillweave.llm.messages import ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, run_agent, sample_library


def value(metrics: WorkerMetrics, name: str, **labels: str) -> float:
    """A sample's value (0 when the series does not exist yet)."""
    return metrics.registry.get_sample_value(name, labels) or 0.0


USAGE = "usage: {input_tokens: 100, output_tokens: 10}"

RUN = f"""
turns:
  - tool_calls: [{{name: search_skills, arguments: {{query: shouter skill}}}}]
    {USAGE}
  - tool_calls: [{{name: activate_skill, arguments: {{name: shouter}}}}]
    {USAGE}
  - tool_calls:
      - {{name: shout, arguments: {{word: hi}}}}
      - {{name: run_skill_script,
          arguments: {{skill: shouter, script: scripts/shout.py, args: [--run-json, "{{"]}}}}
      - {{name: run_skill_script, arguments: {{skill: shouter, script: scripts/missing.py}}}}
    {USAGE}
  - say: done
    expect: {{tool_results: [{{not_error: true, contains: shouted hi}}]}}
    {USAGE}
"""


async def test_a_run_counts_its_model_calls_tokens_scripts_activations_and_searches(
    tmp_path: Path,
) -> None:
    run = await run_agent(
        tmp_path,
        RUN,
        task="take some notes",
        spec=AgentSpec(catalog=CatalogOptions(mode="auto", top_k=1)),
    )
    assert run.result.status == "completed", run.result.reason
    metrics = run.engine.services.metrics

    assert value(metrics, "skillweave_model_calls_total", provider="scripted", outcome="ok") == 4
    assert value(metrics, "skillweave_model_call_seconds_count", provider="scripted") == 4
    assert value(metrics, "skillweave_model_tokens_total", provider="scripted", type="input") == 400
    assert value(metrics, "skillweave_model_tokens_total", provider="scripted", type="output") == 40
    # The tool's --help-json run at activation is not a step of the run: not counted.
    assert len(run.sandbox.requests) == 4
    assert value(metrics, "skillweave_script_runs_total", outcome="succeeded") == 1
    assert value(metrics, "skillweave_script_runs_total", outcome="failed") == 1
    assert value(metrics, "skillweave_script_runs_total", outcome="error") == 1  # refused
    assert value(metrics, "skillweave_skill_activations_total", skill="shouter") == 1
    assert value(metrics, "skillweave_skill_searches_total", result="found") == 1
    # Labels never carry what the run said: no task, arguments or output text.
    labels = {
        label
        for family in metrics.registry.collect()
        for sample in family.samples
        for key, label in sample.labels.items()
        if key != "le"
    }
    assert labels == {"scripted", "ok", "input", "output", "succeeded", "failed", "error"} | {
        "shouter",
        "found",
    }


class _FailingOnce:
    """A model whose first call fails (retryable), then answers."""

    name = "openai:gpt-test"

    def __init__(self) -> None:
        self.inner = ScriptedProvider.from_yaml("turns: [{say: fine}]")
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            raise ModelError("429", retryable=True, retry_after=0.01, status=429)
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        return None


async def test_a_failed_model_call_counts_as_an_error_of_its_provider(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=cast(ModelProvider, _FailingOnce()),
        model="gpt-test",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    await engine.start(RunRequest(run_id="m1", task="t"))
    assert (await engine.result("m1")).status == "completed"
    metrics = services.metrics
    assert value(metrics, "skillweave_model_calls_total", provider="openai", outcome="error") == 1
    assert value(metrics, "skillweave_model_calls_total", provider="openai", outcome="ok") == 1
    assert value(metrics, "skillweave_model_call_seconds_count", provider="openai") == 2


class _LostSandbox:
    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        raise SandboxLostError(request.execution_id, "its pod was deleted")


async def test_a_script_step_that_gets_no_result_counts_as_an_infrastructure_error(
    tmp_path: Path,
) -> None:
    registry = sample_library(tmp_path / "skills")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=LocalArtifactStore(tmp_path / "store"),
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, _LostSandbox()),
    )
    step = RunScriptInput(
        run_id="run-1",
        execution_id="wf/script-1",
        skill="shouter",
        version=registry.get("shouter").version,
        script="scripts/shout.py",
        seq=1,
        tool_call_id="call-1",
    )
    with pytest.raises(SandboxLostError):
        await services.run_skill_script(step)
    assert value(services.metrics, "skillweave_script_runs_total", outcome="infrastructure_error")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_worker_serves_its_metrics_on_the_configured_port_until_stopped() -> None:
    metrics = WorkerMetrics()
    metrics.activations.labels(skill="csv-profiler").inc()
    port = _free_port()
    settings = ObservabilitySettings(worker_metrics_port=port)
    with serve_worker_metrics(metrics, settings) as url:
        assert url == f"http://127.0.0.1:{port}/metrics"
        text = httpx.get(url).text
        assert 'skillweave_skill_activations_total{skill="csv-profiler"} 1.0' in text
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_port_zero_serves_nothing() -> None:
    with serve_worker_metrics(WorkerMetrics(), ObservabilitySettings()) as url:
        assert url is None


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = ObservabilitySettings(worker_metrics_port=port)
        with (
            pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1 is in use") as refused,
            serve_worker_metrics(WorkerMetrics(), settings),
        ):
            pass
    assert "OBSERVABILITY__WORKER_METRICS_PORT" in str(refused.value)
