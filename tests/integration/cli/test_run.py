"""`skillweave run` and `skillweave demo` as a user runs them: subprocesses that start their own
manager with a local warm pool, on the bundled skills, with a store under `tmp_path`."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.cli.temporal_server import free_port
from skillweave.sandbox.models import describe_isolation
from tests.conftest import REPO
from tests.llm_server import strict_llm_server, text_reply

pytestmark = pytest.mark.timeout(180)

DEMO = REPO / "examples" / "demo"
TASK = "Profile the attached sales.csv and write a short data-quality report"


def _skillweave(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`skillweave ARGS` in `tmp_path` with its own store, the bundled skills, no model set."""
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **base,
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            "SKILLS__DIRS": '["bundled"]',
            **(env or {}),
        },
        timeout=150,
        check=False,
    )


def _mode_here() -> str:
    """The mode ``SANDBOX__ISOLATION=auto`` comes to on this host (the one rule that decides)."""
    from sandbox_executor.isolation import probe_isolation
    from sandbox_executor.settings import ExecutorSettings

    return probe_isolation(ExecutorSettings(isolation="auto")).isolation


def _json_lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def _sales_columns() -> list[str]:
    with (DEMO / "sales.csv").open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


def test_demo_runs_the_example_run_and_stores_the_report(tmp_path: Path) -> None:
    done = _skillweave(tmp_path, "demo")
    assert done.returncode == 0, done.stdout + done.stderr
    # Said plainly, at the start and at the end: the model is a script.
    assert "model: SCRIPTED, not a real model" in done.stdout
    assert "The model above was scripted" in done.stdout
    # And how scripts are contained: the mode in force, as an executor here settles it.
    assert describe_isolation(_mode_here(), setting="auto") in done.stderr
    assert "--model openai:gpt-4o-mini" in done.stdout
    # The live view shows the steps a model would take, each one real.
    for step in (
        "activated  data-toolkit",
        "sub-skills: csv-cleaner, csv-profiler, json-report",
        "activated  csv-profiler",
        "read       csv-profiler/references/stats-format.md",
        "script     csv-profiler scripts/profile_csv.py · succeeded",
        "tools: render_stats_report",
        "(as render_stats_report) · succeeded",
        "finished   completed",
    ):
        assert step in done.stderr, step
    assert "completed: answered" in done.stdout
    # The report is an artifact of the run, in the store.
    keys = re.findall(r"(runs/\S+/outputs/report\.md) \(", done.stdout)
    assert len(keys) == 1, done.stdout
    report = (tmp_path / "store" / keys[0]).read_text(encoding="utf-8")
    assert report.startswith("# Sales data quality report\n")
    for column in _sales_columns():
        assert f"| {column} |" in report, column
    assert "**high-missing** `discount`" in report
    # Every door that wrote the audit log (the worker's activations, the manager's starts)
    # anchored its last records when it stopped: nothing is left uncovered by a checkpoint.
    verified = _skillweave(tmp_path, "audit", "verify", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = json.loads(verified.stdout)
    assert log["intact"], log["problems"]
    assert log["unanchored"] == 0, log
    shown = _skillweave(tmp_path, "audit", "show", "--json")
    events = {json.loads(line)["event"] for line in shown.stdout.splitlines()}
    assert {"activation", "execution"} <= events, events


def test_run_json_streams_events_then_the_result(tmp_path: Path) -> None:
    data = tmp_path / "orders.csv"
    data.write_text("region,units\nnorth,3\nsouth,\neast,5\n", encoding="utf-8")
    # The profiler twice: by run_skill_script and by the tool its activation registered.
    script = tmp_path / "script.yaml"
    script.write_text(
        """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: data-toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: csv-profiler}}]
  - expect: {tools_include: [profile_csv]}
    tool_calls:
      - name: run_skill_script
        arguments:
          skill: csv-profiler
          script: scripts/profile_csv.py
          inputs: ["{{artifact:orders.csv}}"]
      - name: profile_csv
        arguments: {input_artifacts: ["{{artifact:orders.csv}}"]}
  - expect:
      tool_results:
        - {contains: outputs/stats.json, not_error: true}
        - {contains: outputs/stats.json, not_error: true}
    say: "Profiled: {{artifact:stats.json}}"
""",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = _skillweave(
        tmp_path,
        "run",
        "Profile orders.csv",
        "--engine",
        "direct",
        "--json",
        "--model",
        f"scripted:{script}",
        "--file",
        str(data),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = _json_lines(done.stdout)  # every stdout line is JSON
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "run_started"
    assert kinds[-2:] == ["run_finished", "result"]
    assert kinds.count("script_ran") == 2
    result = lines[-1]
    assert result["status"] == "completed"
    assert result["script_runs"] == 2
    active = result["active_skills"]
    assert isinstance(active, dict)
    assert set(active) == {"data-toolkit", "csv-profiler"}
    run_id = result["run_id"]
    assert isinstance(run_id, str)
    assert re.fullmatch(r"run-\d{8}-\d{6}-[0-9a-f]{8}", run_id)
    outputs = result["outputs"]
    assert isinstance(outputs, list)
    assert [o["key"].rsplit("/", 1)[-1] for o in outputs] == ["stats.json", "stats.json"]
    # The input went to the store under the run's id; the answer names an output.
    assert (tmp_path / "store" / "runs" / run_id / "inputs" / "orders.csv").is_file()
    assert result["answer"] == f"Profiled: {outputs[-1]['key']}"
    # --out copies both, the second name prefixed with a counter.
    assert result["copied"] == [str(out / "stats.json"), str(out / "2-stats.json")]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["rows"] == 3
    assert (out / "2-stats.json").read_bytes() == (out / "stats.json").read_bytes()


def test_run_with_out_copies_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _skillweave(
        tmp_path,
        "run",
        TASK,
        "--engine",
        "direct",
        "--agent",
        str(DEMO / "agent.yaml"),
        "--model",
        f"scripted:{DEMO / 'script.yaml'}",
        "--file",
        str(DEMO / "sales.csv"),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "model: scripted (replaying" in done.stderr
    assert f"copied → {out / 'report.md'}" in done.stdout
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Sales data quality report\n")
    assert json.loads((out / "stats.json").read_text())["rows"] == 20


def test_a_run_that_fails_exits_1_with_the_reason(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: unit-converter}}]
  - expect: {tool_results: [{contains: "something the activation does not say"}]}
    say: never
""",
        encoding="utf-8",
    )
    done = _skillweave(
        tmp_path, "run", "Convert 3 MB", "--engine", "direct", "--model", f"scripted:{script}"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed: ScriptedModelError: scripted model, turn 2" in done.stdout
    assert "finished   failed" in done.stderr


@pytest.mark.parametrize(
    "how", [(), ("--engine", "temporal")], ids=["the default engine", "--engine temporal"]
)
def test_temporal_without_a_server_exits_2_naming_both_remedies(
    tmp_path: Path, how: tuple[str, ...]
) -> None:
    """Temporal is the default engine: with no server, a few lines that say how to start one
    and how to run without it (WORKFLOW__* cleared: nothing picks the engine here)."""
    address = f"127.0.0.1:{free_port()}"  # bound and closed: nothing listens there
    done = _skillweave(
        tmp_path, "run", "anything", *how, env={"WORKFLOW__TEMPORAL_ADDRESS": address}
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) <= 3, done.stderr  # the run's header and the error
    said = " ".join(done.stderr.split())
    assert f"error: cannot reach Temporal at {address} (connection refused)" in said
    assert "Start it with `skillweave dev` in another terminal" in said
    assert "--engine direct (or WORKFLOW__EXECUTION_ENGINE=direct)" in said
    assert "local and not durable" in said
    assert "Traceback" not in done.stderr


def test_bad_agent_file_is_named_in_the_error(tmp_path: Path) -> None:
    agent = tmp_path / "agent.yaml"
    agent.write_text("name: demo\nskils: [data-toolkit]\n", encoding="utf-8")
    done = _skillweave(tmp_path, "run", "anything", "--agent", str(agent))
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"error: agent spec {agent}: skils:" in done.stderr
    agent.write_text("skills: [no-such-skill]\n", encoding="utf-8")
    unknown = _skillweave(tmp_path, "run", "anything", "--agent", str(agent))
    assert unknown.returncode == 2
    assert f"{agent}: skills: unknown skill 'no-such-skill'" in unknown.stderr


def test_files_with_the_same_name_and_no_model_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.csv").write_text("a\n1\n")
    (tmp_path / "x.csv").write_text("a\n2\n")
    script = DEMO / "script.yaml"
    done = _skillweave(
        tmp_path, "run", "t", "--model", f"scripted:{script}", "--file", "a/x.csv", "-f", "x.csv"
    )
    assert done.returncode == 2
    assert "would both be inputs/x.csv" in done.stderr
    # The default settings name no model: a run started here says how to set one.
    no_model = _skillweave(tmp_path, "run", "t", "--engine", "direct")
    assert no_model.returncode == 2
    assert "MODEL__PROVIDER/MODEL__NAME/MODEL__API_KEY" in no_model.stderr


def test_a_demo_without_isolation_says_so_loudly(tmp_path: Path) -> None:
    done = _skillweave(tmp_path, "demo", "--engine", "direct", env={"SANDBOX__ISOLATION": "none"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SANDBOX ISOLATION IS OFF (SANDBOX__ISOLATION=none)" in done.stderr
    assert "completed: answered" in done.stdout


async def test_run_with_a_base_url_and_a_provider_name_asks_that_server_with_its_key(
    tmp_path: Path,
) -> None:
    """The reported bug: with MODEL__PROVIDER unset, `--model openai:NAME` dropped
    MODEL__BASE_URL and sent the local server's key to the public OpenAI endpoint."""
    key = "sk-local-2b3c4d5e"
    async with strict_llm_server(text_reply("the local model answered")) as server:
        done = await asyncio.to_thread(
            _skillweave,
            tmp_path,
            "run",
            "Say hello",
            "--engine",
            "direct",
            "--model",
            "openai:smollm2",
            env={"MODEL__BASE_URL": server.base_url, "MODEL__API_KEY": key},
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the local model answered" in done.stdout
    assert server.requests
    assert [r.authorization for r in server.requests] == [f"Bearer {key}"] * len(server.requests)
    assert {r.body["model"] for r in server.requests} == {"smollm2"}


def test_run_refuses_to_send_a_key_to_another_providers_endpoint(tmp_path: Path) -> None:
    key = "sk-ant-5f6a7b8c"
    done = _skillweave(
        tmp_path,
        "run",
        "Say hello",
        "--model",
        "openai:gpt-4o-mini",
        env={
            "MODEL__PROVIDER": "anthropic",
            "MODEL__NAME": "claude-haiku-4-5",
            "MODEL__API_KEY": key,
        },
    )
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "model 'openai:gpt-4o-mini' needs an API key at api.openai.com" in said
    assert "are not sent to openai" in said
    assert key not in done.stdout + done.stderr
