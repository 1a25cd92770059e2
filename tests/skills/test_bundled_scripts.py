"""The bundled example skills' scripts, run as real subprocesses in a fresh workspace.

Each test prepares a workspace (``inputs/`` filled in), runs a script with the workspace as its
working directory, the way the sandbox runs it, and checks the files it writes to ``outputs/``
and its exit code.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

SKILLS = Path(__file__).resolve().parents[2] / "skills"
DATA = SKILLS / "data-toolkit"
PROFILER = DATA / "csv-profiler" / "scripts" / "profile_csv.py"
CLEANER = DATA / "csv-cleaner" / "scripts" / "clean_csv.py"
REPORT = DATA / "json-report" / "scripts" / "report.mjs"
CONVERTER = SKILLS / "unit-converter" / "scripts" / "convert.py"
COMMIT_LINT = SKILLS / "commit-message" / "scripts" / "lint_commit.py"
TRIAGE = SKILLS / "log-triage" / "scripts" / "triage.py"
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

SALES_CSV = (
    "\ufeffregion,units,price,shipped,order_date,note\n"
    "north,3,10.5,true,2024-01-05,rush\n"
    "south,5,20.25,false,2024-02-10,\n"
    "north,7,30,yes,2024-03-15,rush\n"
    "east,,NA,no,2024-01-01,rush\n"
)


def run(script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a bundled script the way the sandbox does: its own interpreter, cwd = workspace."""
    if script.suffix == ".mjs":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed")
        cmd = [node, str(script), *args]
    else:
        cmd = [sys.executable, str(script), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30, check=False)


def make_workspace(root: Path, name: str, files: dict[str, str]) -> Path:
    workspace = root / name
    (workspace / "inputs").mkdir(parents=True)
    for filename, content in files.items():
        (workspace / "inputs" / filename).write_text(content, encoding="utf-8")
    return workspace


def read_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def column(stats: dict, name: str) -> dict:
    matches = [c for c in stats["columns"] if c["name"] == name]
    assert len(matches) == 1, f"no single column {name!r} in {stats['columns']}"
    return matches[0]


# ------------------------------------------------------------------------ data-toolkit chain


def test_profile_then_report_chain(tmp_path: Path) -> None:
    profile_ws = make_workspace(tmp_path, "profile", {"sales.csv": SALES_CSV})
    done = run(PROFILER, cwd=profile_ws)
    assert done.returncode == 0, done.stderr
    assert "4 rows" in done.stdout

    stats = read_json(profile_ws / "outputs" / "stats.json")
    assert stats["rows"] == 4
    assert stats["column_count"] == 6
    assert stats["ragged_rows"] == 0
    assert [c["name"] for c in stats["columns"]] == [
        "region",
        "units",
        "price",
        "shipped",
        "order_date",
        "note",
    ]  # the BOM is not part of the first column name
    assert {c["name"]: c["type"] for c in stats["columns"]} == {
        "region": "string",
        "units": "integer",
        "price": "number",
        "shipped": "boolean",
        "order_date": "date",
        "note": "string",
    }
    units = column(stats, "units")
    assert (units["count"], units["missing"], units["min"], units["max"]) == (3, 1, 3, 7)
    assert units["mean"] == 5
    assert units["stdev"] == 2
    price = column(stats, "price")
    assert price["missing"] == 1  # "NA" is a missing value
    assert price["mean"] == pytest.approx(20.25)
    assert price["max"] == 30
    region = column(stats, "region")
    assert region["distinct"] == 3
    assert region["top"][0] == {"value": "north", "count": 2}
    assert column(stats, "order_date")["min"] == "2024-01-01"
    note = column(stats, "note")
    assert (note["count"], note["missing"], note["distinct"]) == (3, 1, 1)

    report_ws = make_workspace(tmp_path, "report", {})
    shutil.copy(profile_ws / "outputs" / "stats.json", report_ws / "inputs" / "stats.json")
    done = run(REPORT, cwd=report_ws)
    assert done.returncode == 0, done.stderr
    report = (report_ws / "outputs" / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Data profile: inputs/sales.csv")
    assert "- Rows: 4" in report
    for name in ("region", "units", "price", "shipped", "order_date", "note"):
        assert f"### {name}" in report
    assert "| price | number | 3 | 1 | 3 | 20.25 |" in report
    assert "| mean | 20.25 |" in report
    assert "**constant** `note`" in report  # every present note is "rush"
    assert "**high-missing** `units`" in report  # 1 of 4 = 25% > 20%


def test_profiler_is_deterministic_and_counts_ragged_rows(tmp_path: Path) -> None:
    csv_text = "a;b;c\n1;x;2\n2;y\n3;z;4;extra\n4;x;5\n"
    workspace = make_workspace(tmp_path, "ws", {"data.csv": csv_text})
    first = run(PROFILER, cwd=workspace)
    assert first.returncode == 0, first.stderr
    stats_path = workspace / "outputs" / "stats.json"
    before = stats_path.read_bytes()
    assert run(PROFILER, cwd=workspace).returncode == 0
    assert stats_path.read_bytes() == before

    stats = read_json(stats_path)
    assert stats["delimiter"] == ";"
    assert stats["rows"] == 4
    assert stats["ragged_rows"] == 2
    assert stats["ragged_row_lines"] == [3, 4]
    assert any("2 row(s)" in w for w in stats["warnings"])
    assert column(stats, "c")["missing"] == 1  # the short row is padded as missing
    assert column(stats, "c")["max"] == 5


def test_profiler_rejects_an_empty_file(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {"empty.csv": ""})
    done = run(PROFILER, cwd=workspace)
    assert done.returncode != 0
    assert "empty" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (workspace / "outputs" / "stats.json").exists()


def test_profiler_run_json_protocol(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {"sales.csv": SALES_CSV})
    done = run(
        PROFILER, "--run-json", json.dumps({"file": "inputs/sales.csv", "top": 2}), cwd=workspace
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["rows"] == 4
    assert result["output"] == "outputs/stats.json"
    assert {"name": "price", "type": "number"} in result["columns"]

    missing = run(PROFILER, "--run-json", json.dumps({"file": "inputs/nope.csv"}), cwd=workspace)
    assert missing.returncode == 2
    assert "not found" in json.loads(missing.stdout)["error"]


def test_report_rejects_a_file_that_is_not_a_profile(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {"stats.json": '{"hello": 1}'})
    done = run(REPORT, cwd=workspace)
    assert done.returncode != 0
    assert "rows" in done.stderr
    assert not (workspace / "outputs" / "report.md").exists()


def test_cleaner_counts_every_change(tmp_path: Path) -> None:
    lines = [
        "name , city",
        " Alice,Paris ",  # 2 cells to strip
        "Bob,Berlin",
        "Bob ,Berlin",  # a duplicate once stripped
        " , ",  # empty once stripped
        "",  # a blank line: skipped, not a record
        "Carol",  # short: padded
        "Alice,Paris",  # a duplicate
    ]
    csv_text = "\n".join(lines) + "\n"
    workspace = make_workspace(tmp_path, "ws", {"people.csv": csv_text})
    done = run(CLEANER, "--strip", "--drop-empty-rows", "--dedupe", cwd=workspace)
    assert done.returncode == 0, done.stderr

    report = read_json(workspace / "outputs" / "cleaning.json")
    assert report["rows_in"] == 6
    assert report["rows_out"] == 3
    assert report["operations"] == ["strip", "drop_empty_rows", "dedupe"]
    assert report["changes"] == {
        "blank_lines_skipped": 1,
        "cells_stripped": 7,
        "duplicate_rows_dropped": 2,
        "empty_rows_dropped": 1,
        "long_rows_kept": 0,
        "long_rows_trimmed": 0,
        "short_rows_padded": 1,
    }
    clean = (workspace / "outputs" / "clean.csv").read_text(encoding="utf-8")
    assert clean == "name,city\nAlice,Paris\nBob,Berlin\nCarol,\n"


def test_cleaner_runs_only_the_requested_operation(tmp_path: Path) -> None:
    csv_text = "k,v\na,1\na,1\na ,1\n,\n"
    workspace = make_workspace(tmp_path, "ws", {"data.csv": csv_text})
    done = run(CLEANER, "--dedupe", cwd=workspace)
    assert done.returncode == 0, done.stderr
    report = read_json(workspace / "outputs" / "cleaning.json")
    assert report["operations"] == ["dedupe"]
    assert report["changes"]["duplicate_rows_dropped"] == 1  # "a " differs without --strip
    assert report["changes"]["cells_stripped"] == 0
    assert report["changes"]["empty_rows_dropped"] == 0
    assert report["rows_out"] == 3


# ------------------------------------------------------------------------ tool protocol


@pytest.mark.parametrize(
    ("script", "tool_name"),
    [
        pytest.param(PROFILER, "profile_csv", id="profile_csv"),
        pytest.param(CLEANER, "clean_csv", id="clean_csv"),
        pytest.param(REPORT, "render_stats_report", id="render_stats_report"),
        pytest.param(CONVERTER, "convert_units", id="convert_units"),
        pytest.param(TRIAGE, "triage_logs", id="triage_logs"),
    ],
)
def test_help_json_describes_a_tool(tmp_path: Path, script: Path, tool_name: str) -> None:
    done = run(script, "--help-json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    spec = json.loads(done.stdout)
    assert set(spec) == {"name", "description", "input_schema"}
    assert spec["name"] == tool_name
    assert TOOL_NAME_RE.match(spec["name"])
    assert len(spec["description"]) > 40
    schema = spec["input_schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert isinstance(schema["properties"], dict)
    assert set(schema["required"]) <= set(schema["properties"])
    jsonschema.Draft202012Validator.check_schema(schema)


# ------------------------------------------------------------------------ unit-converter


@pytest.mark.parametrize(
    ("args", "expected", "formatted"),
    [
        ({"value": 1, "from_unit": "km", "to_unit": "m"}, 1000, "1000 m"),
        ({"value": 100, "from_unit": "C", "to_unit": "F"}, 212, "212 F"),
        ({"value": 1, "from_unit": "KiB", "to_unit": "B"}, 1024, "1024 B"),
        ({"value": 0, "from_unit": "K", "to_unit": "C"}, -273.15, "-273.15 C"),
        ({"value": 1, "from_unit": "mi", "to_unit": "km"}, 1.609344, "1.609344 km"),
        ({"value": 1.5, "from_unit": "h", "to_unit": "min"}, 90, "90 min"),
        ({"value": 1, "from_unit": "lb", "to_unit": "g"}, 453.59237, "453.59237 g"),
        ({"value": 8, "from_unit": "bit", "to_unit": "B"}, 1, "1 B"),
    ],
)
def test_convert_units(tmp_path: Path, args: dict, expected: float, formatted: str) -> None:
    done = run(CONVERTER, "--run-json", json.dumps(args), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["value"] == pytest.approx(expected)
    assert result["unit"] == args["to_unit"]
    assert result["formatted"] == formatted


def test_convert_arguments_validate_against_the_schema(tmp_path: Path) -> None:
    spec = json.loads(run(CONVERTER, "--help-json", cwd=tmp_path).stdout)
    args = {"value": 2, "from_unit": "GiB", "to_unit": "MB"}
    jsonschema.validate(args, spec["input_schema"])
    result = json.loads(run(CONVERTER, "--run-json", json.dumps(args), cwd=tmp_path).stdout)
    assert result["value"] == pytest.approx(2147.483648)
    assert result["formatted"] == "2147.483648 MB"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"value": 1, "from_unit": "km", "to_unit": "kg"}, "cannot convert length"),
        ({"value": 5, "from_unit": "s", "to_unit": "B"}, "cannot convert time"),
        ({"value": 1, "from_unit": "km", "to_unit": "parsec"}, "unknown unit"),
        ({"value": "ten", "from_unit": "km", "to_unit": "m"}, "must be a number"),
        ({"from_unit": "km", "to_unit": "m"}, "missing required"),
        ({"value": -500, "from_unit": "C", "to_unit": "K"}, "below absolute zero"),
    ],
)
def test_convert_refuses_bad_arguments(tmp_path: Path, args: dict, message: str) -> None:
    done = run(CONVERTER, "--run-json", json.dumps(args), cwd=tmp_path)
    assert done.returncode == 2
    result = json.loads(done.stdout)
    assert set(result) == {"error"}
    assert message in result["error"]


# ------------------------------------------------------------------------ commit-message

GOOD_MESSAGE = """\
Add retry with backoff to the upload client

Uploads failed permanently on a single 503 from the storage proxy.
Retry up to three times with exponential backoff and honour the
Retry-After header when the proxy sends one.

Refs: #42
"""

BAD_MESSAGE = """\
Fixed the crash in the CSV parser that happened when a file had trailing spaces.
The parser now strips whitespace from every cell before it converts the value to a number.
"""


def test_commit_lint_accepts_a_good_message(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {"COMMIT_MSG": GOOD_MESSAGE})
    done = run(COMMIT_LINT, cwd=workspace)
    assert done.returncode == 0, done.stdout
    result = read_json(workspace / "outputs" / "commit-lint.json")
    assert result["ok"] is True
    assert result["errors"] == 0
    assert result["subject"] == "Add retry with backoff to the upload client"


def test_commit_lint_reports_every_problem(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {})
    (workspace / "msg.txt").write_text(BAD_MESSAGE, encoding="utf-8")
    done = run(COMMIT_LINT, "msg.txt", cwd=workspace)
    assert done.returncode == 1
    result = read_json(workspace / "outputs" / "commit-lint.json")
    assert result["ok"] is False
    rules = {(f["line"], f["rule"]) for f in result["findings"]}
    assert rules >= {
        (1, "subject-length"),
        (1, "subject-imperative"),
        (1, "subject-period"),
        (2, "blank-second-line"),
        (2, "body-line-length"),
    }
    assert "'Fix' instead of 'Fixed'" in done.stdout


def test_commit_lint_missing_message_is_bad_input(tmp_path: Path) -> None:
    done = run(COMMIT_LINT, cwd=make_workspace(tmp_path, "ws", {}))
    assert done.returncode == 2
    assert "not found" in done.stderr


# ------------------------------------------------------------------------ log-triage

APP_LOG = """\
2024-05-01T10:00:00Z INFO server started on port 8080
2024-05-01T10:00:05Z ERROR Timeout after 3000 ms calling billing
2024-05-01T10:02:00Z WARN pool 7 exhausted
2024-05-01T10:03:00Z ERROR Timeout after 4500 ms calling billing
2024-05-01T10:04:00Z ERROR user 123e4567-e89b-12d3-a456-426614174000 not found
Traceback (most recent call last):
  File "app.py", line 3, in handler
KeyError: 'user'
"""


def test_triage_groups_errors_that_differ_only_in_numbers(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, "ws", {"app.log": APP_LOG})
    done = run(TRIAGE, cwd=workspace)
    assert done.returncode == 0, done.stderr

    result = read_json(workspace / "outputs" / "triage.json")
    assert result["levels"] == {"INFO": 1, "WARNING": 1, "ERROR": 3}
    assert result["continuation_lines"] == 3
    assert result["unparsed_lines"] == 0
    assert result["distinct_signatures"] == 2
    top = result["signatures"][0]
    assert top["signature"] == "Timeout after <n> ms calling billing"
    assert top["count"] == 2
    assert top["first_seen"] == "2024-05-01T10:00:05Z"
    assert top["last_seen"] == "2024-05-01T10:03:00Z"
    assert top["first_location"] == "inputs/app.log:2"
    assert result["signatures"][1]["signature"] == "user <uuid> not found"

    markdown = (workspace / "outputs" / "triage.md").read_text(encoding="utf-8")
    assert "`Timeout after <n> ms calling billing`" in markdown
    assert "| ERROR | 3 |" in markdown


def test_triage_merges_files_and_json_lines(tmp_path: Path) -> None:
    json_line = {
        "ts": "2024-05-01T09:59:00Z",
        "level": "error",
        "msg": "Timeout after 10 ms calling billing",
    }
    other = json.dumps(json_line) + "\n2024-05-01 10:10:00,250 [main] FATAL disk 0x1f full\n"
    workspace = make_workspace(tmp_path, "ws", {"app.log": APP_LOG, "worker.log": other})
    done = run(TRIAGE, "--run-json", json.dumps({"top": 1}), cwd=workspace)
    assert done.returncode == 0, done.stdout
    result = json.loads(done.stdout)
    assert result["files"] == ["inputs/app.log", "inputs/worker.log"]
    assert result["levels"]["CRITICAL"] == 1
    assert len(result["signatures"]) == 1
    top = result["signatures"][0]
    assert (top["count"], top["first_seen"]) == (3, "2024-05-01T09:59:00Z")
    assert result["first_timestamp"] == "2024-05-01T09:59:00Z"

    full = read_json(workspace / "outputs" / "triage.json")
    assert full["distinct_signatures"] == 3
    assert full["signatures"][0]["files"] == ["inputs/app.log", "inputs/worker.log"]


def test_triage_without_logs_is_bad_input(tmp_path: Path) -> None:
    done = run(TRIAGE, cwd=make_workspace(tmp_path, "ws", {}))
    assert done.returncode != 0
    assert "no *.log" in done.stderr
