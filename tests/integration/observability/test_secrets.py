"""Secrets set for a skill appear in no log line, span attribute or metric label.

A run on the Temporal engine runs a script that reads its skill's secret from the environment
(``SANDBOX__SKILL_SECRETS``) and prints it, with its SHA-256: the digest in the answer proves
the script had it, so the checks below cannot pass because the secret never travelled. The
worker and the MCP manager run in this process, configured as ``skillweave dev`` configures
them (JSON lines, the settings' secrets registered), with every logger at DEBUG, libraries
included, into a buffer; one line logs the secret on purpose, and must show ``***``. Every
line, every label of the manager's ``/metrics`` and of the worker's registry, and every
attribute of the spans the run made (traced into memory) goes through :func:`assert_no_secret`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from temporalio.contrib.opentelemetry import TracingInterceptor

from skillweave.agent import AgentSpec
from skillweave.config import Settings
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.conftest import StartExecutor
from tests.integration.temporal.harness import open_engine, serving_stack, start_dev_server
from tests.telemetry.support import captured_logs, in_memory_tracing

SKILL = "secret-user"
VARIABLE = "SECRET_USER_KEY"
SECRET = secrets.token_urlsafe(24)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()

_USE_SECRET = f"""\
import hashlib, os
value = os.environ["{VARIABLE}"]
print("sha256", hashlib.sha256(value.encode()).hexdigest())
print("value", value)
"""

MODEL = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {SKILL}}}}}]
  - tool_calls:
      - {{name: run_skill_script, arguments: {{skill: {SKILL}, script: scripts/use_secret.py}}}}
  - say: "The script said: {{{{last_result}}}}"
"""


def assert_no_secret(text: str, secret: str, *, where: str) -> None:
    """The one check every place a secret could surface goes through: log lines, metric
    labels and span attributes."""
    assert secret not in text, f"the skill's secret appears in {where}: {text[:300]!r}"


def _labels(exposition: str) -> list[str]:
    """Every label value of a Prometheus text exposition."""
    return [
        value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        for value in sample.labels.values()
    ]


@pytest.mark.asyncio(loop_scope="session")  # the Temporal tests' loop
async def test_a_skill_secret_reaches_its_script_and_no_log_line_or_metric_label(
    tmp_path: Path,
) -> None:
    library = tmp_path / "skills"
    write_skill(
        library / SKILL,
        description="Uses a key from its environment. Use when a test needs a skill secret.",
        files={"scripts/use_secret.py": _USE_SECRET},
    )
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(token),
            "pool_target": 1,
            "pool_max": 2,
            "timeout_seconds": 60,
            "skill_secrets": {SKILL: {VARIABLE: SecretStr(SECRET)}},
        },
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
        observability={"log_format": "json", "log_level": "DEBUG"},
    )
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    store = LocalArtifactStore(tmp_path / "store")

    with (
        captured_logs(
            secrets=settings, service="skillweave-dev", **settings.observability.model_dump()
        ) as buffer,
        in_memory_tracing() as exporter,
    ):
        logging.getLogger().setLevel(logging.DEBUG)  # the libraries' lines too
        env = await start_dev_server(store, interceptors=[TracingInterceptor()])
        try:
            async with serving_stack(settings, registry=registry, store=store, env=env) as stack:
                async with open_engine("temporal", stack, MODEL) as harness:
                    run_id = await harness.start("Use the key.", agent=AgentSpec(skills=(SKILL,)))
                    await harness.all_events(run_id)
                    result = await harness.engine.result(run_id)
                    assert harness.services is not None
                    worker_metrics = generate_latest(harness.services.metrics.registry).decode()
                manager_metrics = (await stack.manager.http.get("/metrics")).text
                # A careless line (a request's environment echoed, say) is redacted too.
                logging.getLogger("skillweave.manager").debug("env: %s", {VARIABLE: SECRET})
        finally:
            await env.shutdown()

    # The script had the secret: it printed its digest; the manager masked the value itself.
    assert result.status == "completed", result.reason
    answer = result.answer or ""
    assert f"sha256 {DIGEST}" in answer
    assert "value ***" in answer
    assert_no_secret(answer, SECRET, where="the answer")

    # Every line is one JSON object; the run's and the execution's lines were captured.
    lines = buffer.getvalue().splitlines()
    records = [json.loads(line) for line in lines]
    assert any(r.get("run_id") == run_id for r in records)
    assert any(r.get("skill") == SKILL and r.get("execution_id") for r in records)
    assert any(r["message"] == f"env: {{'{VARIABLE}': '***'}}" for r in records)
    for line in lines:
        assert_no_secret(line, SECRET, where="a log line")

    # Metric labels: the manager's /metrics and the worker's registry.
    assert SKILL in _labels(worker_metrics)  # labels that name the skill were checked
    for name, exposition in (("manager", manager_metrics), ("worker", worker_metrics)):
        for value in _labels(exposition):
            assert_no_secret(value, SECRET, where=f"a label of the {name}'s metrics")
        assert_no_secret(exposition, SECRET, where=f"the {name}'s metrics")

    # Span attributes (and names): every span the run made, from the workflow's to the
    # manager's; those that name the skill were among them.
    spans = exporter.get_finished_spans()
    assert any(s.attributes.get("skillweave.skill") == SKILL for s in spans)
    assert any(s.name.startswith("RunActivity:") for s in spans)
    for span in spans:
        assert_no_secret(span.name, SECRET, where="a span name")
        for key, value in (span.attributes or {}).items():
            assert_no_secret(f"{key}={value}", SECRET, where=f"span {span.name!r}")
        for event in span.events:
            assert_no_secret(str(dict(event.attributes or {})), SECRET, where="a span event")


def test_the_executor_logs_json_lines_without_its_token(start_executor: StartExecutor) -> None:
    token = secrets.token_urlsafe(24)
    executor = start_executor(
        env={"EXECUTOR__TOKEN": token}, args=("--log-level", "debug", "--log-format", "json")
    )
    for bearer, status in ((token, 404), ("wrong", 401)):
        answer = executor.client.get(
            "/files/missing", headers={"Authorization": f"Bearer {bearer}"}
        )
        assert answer.status_code == status
    executor.process.terminate()
    executor.process.wait(timeout=10)

    lines = executor.stdout_path.read_text().splitlines()
    ready = [json.loads(line) for line in lines if '"executor ready on port' in line]
    assert [(r["service"], r["logger"]) for r in ready] == [
        ("skillweave-executor", "sandbox_executor.server")
    ]
    for line in lines:
        assert token not in line
