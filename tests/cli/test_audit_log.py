"""``skillweave audit verify`` and ``audit show`` on a local store: one line for an intact chain,
one line per problem and exit 1 for a damaged one, records as a table or JSON lines, filters,
``--since`` ages and dates, and usage errors as one line.

The CLI runs in-process through typer's runner, its settings read from the environment it is
given (``STORAGE__LOCAL_DIR``, ``AUDIT__KEY``); the log is written through the library."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr
from rich.console import Console
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.cli import audit as audit_cli
from skillweave.cli.audit import _parse_since
from skillweave.config import get_settings
from skillweave.errors import ConfigError
from skillweave.storage import LocalArtifactStore, keys
from skillweave.storage.audit import AuditLog
from tests.conftest import REPO

runner = CliRunner()
KEY = "cli-audit-key"
START = datetime(2030, 1, 1, tzinfo=UTC)


def cli(root: Path, *args: str, key: str | None = KEY) -> tuple[int, str, str]:
    env = {"STORAGE__BACKEND": "local", "STORAGE__LOCAL_DIR": str(root), "AUDIT__KEY": key}
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, ["audit", *args], env=env)
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stdout, result.stderr


def write_log(root: Path) -> None:
    """Five records an hour apart from 2030-01-01 00:00 UTC."""

    async def write() -> None:
        ticks = iter(range(100))
        log = AuditLog(
            LocalArtifactStore(root, fsync=False),
            key=SecretStr(KEY),
            actor="api@host",
            clock=lambda: START + timedelta(hours=next(ticks)),
        )
        await log.record("upload", skill="alpha", version="a" * 64, source="api")
        await log.record("enable", skill="alpha", actor="alice")
        await log.record("install", skill="beta", source="git", commit="abc123")
        await log.record("activation", skill="alpha", job="job-1")
        await log.record("execution", skill="alpha", job="job-1", script="go.py", args=["-p", "x"])

    asyncio.run(write())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    write_log(folder)
    return folder


def test_verify_an_intact_log(root: Path) -> None:
    code, stdout, _ = cli(root, "verify")
    assert (code, stdout) == (0, "audit log: 5 records, chain intact (HMAC)\n")
    code, stdout, _ = cli(root, "verify", "--json")
    report = json.loads(stdout)
    assert code == 0
    assert report["intact"] is True
    assert report["records"] == 5
    assert report["head"]["seq"] == 5
    assert len(report["head"]["hash"]) == 64


def test_verify_without_the_key_says_what_to_check(root: Path) -> None:
    code, stdout, stderr = cli(root, "verify", key=None)
    assert code == 1
    assert stdout.splitlines()[0] == "record 1 was edited: its hash does not match its content"
    assert "is AUDIT__KEY the key the log was written with?" in stderr


def test_verify_names_each_problem_on_one_line(root: Path) -> None:
    record = root / keys.audit_record_key(2)
    record.write_bytes(record.read_bytes().replace(b'"alice"', b'"mallory"'))
    (root / keys.audit_record_key(4)).unlink()
    code, stdout, _ = cli(root, "verify")
    assert code == 1
    assert stdout.splitlines() == [
        "record 2 was edited: its hash does not match its content",
        "record 4 was removed: record 5 follows record 3",
    ]
    code, stdout, _ = cli(root, "verify", "--json")
    problems = json.loads(stdout)["problems"]
    assert code == 1
    assert [(p["kind"], p["seq"]) for p in problems] == [("edited", 2), ("removed", 4)]


def test_verify_an_empty_store(tmp_path: Path) -> None:
    code, stdout, _ = cli(tmp_path / "none", "verify", key=None)
    assert (code, stdout) == (0, "audit log: 0 records, chain intact (SHA-256, no AUDIT__KEY)\n")


def test_show_wide_prints_every_record_in_order(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_cli, "out", Console(highlight=False, width=200))  # one row a line
    code, stdout, _ = cli(root, "show", "--wide")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split() == [
        "time", "(UTC)", "seq", "event", "skill", "version", "job", "actor", "details"
    ]  # fmt: skip
    assert lines[1].split()[:5] == ["2030-01-01", "00:00:00", "1", "upload", "alpha"]
    assert "aaaaaaaaaaaa " in lines[1]  # a digest is shortened
    assert [line.split()[3] for line in lines[1:]] == [
        "upload", "enable", "install", "activation", "execution"
    ]  # fmt: skip


def at_80_columns(root: Path, *args: str) -> str:
    """`skillweave audit ARGS` as a user's 80-column terminal runs it: its output, every line
    checked to fit, trailing spaces dropped."""
    env = {
        **os.environ,
        "COLUMNS": "80",
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(root),
        "AUDIT__KEY": KEY,
    }
    done = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "audit", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert max(len(line) for line in lines) <= 80
    return "\n".join(lines) + "\n"


def test_show_reads_at_80_columns(root: Path) -> None:
    """As a user's terminal runs it: each record a line of its fields, its job and actor and
    its details whole below it, no line over 80 columns, nothing folded mid-word."""
    text = at_80_columns(root, "show")
    lines = text.splitlines()
    assert lines[0].split() == ["seq", "time", "(UTC)", "event", "version", "skill"]
    firsts = [line.split() for line in lines if line[:4].strip().isdigit()]
    assert [fields[:4] for fields in firsts] == [
        [str(seq), "2030-01-01", f"{hour:02d}:00:00", event]
        for seq, hour, event in zip(
            range(1, 6),
            range(5),
            ("upload", "enable", "install", "activation", "execution"),
            strict=True,
        )
    ]
    assert firsts[0][4:] == ["aaaaaaaaaaaa", "alpha"]  # the digest shortened, then the skill
    assert firsts[2][4:] == ["beta"]  # no version
    for whole in ("by api@host", "by alice", "job job-1 · by api@host", "commit=abc123"):
        assert whole in text, whole
    assert re.search(r"args_digest=[0-9a-f]{12}…, script=go\.py\n", text)  # details whole
    assert "-p" not in text  # arguments only as their digest


def test_network_reads_at_80_columns(tmp_path: Path) -> None:
    folder = tmp_path / "store" / "runs" / "run-1" / "executions" / "abc"
    folder.mkdir(parents=True)
    path = "/v1/reports/quarterly?region=emea&year=2030&fields=revenue,margin,units"
    records = [
        {
            "at": 1_900_000_000 + n,
            "skill": "sales-report",
            "kind": "request",
            "destination": "api.example.com:443",
            "method": "GET",
            "path": path,
            "bytes_out": 1,
            "bytes_in": 48_213,
            "allowed": allowed,
            "reason": "approved" if allowed else "not among the destinations approved for it",
        }
        for n, allowed in enumerate((True, False))
    ]
    (folder / "egress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    text = at_80_columns(tmp_path / "store", "network", "--job", "run-1")

    lines = text.splitlines()
    assert lines[0].split() == ["time", "verdict", "kind", "skill", "destination"]
    assert lines[1].split()[1:] == ["allowed", "request", "sales-report", "api.example.com:443"]
    # The request whole (folded where it is longer than a line), on lines of its own.
    moved = next(n for n, line in enumerate(lines) if line.strip().startswith("1 byte out"))
    assert "".join(line.strip() for line in lines[2:moved]) == f"GET{path}"
    assert "1 byte out, 48,213 bytes in · approved\n" in text
    assert "not among the destinations approved for it" in " ".join(text.split())


def test_show_filters_and_prints_json(root: Path) -> None:
    code, stdout, _ = cli(root, "show", "--skill", "alpha", "--event", "execution", "--json")
    assert code == 0
    [record] = [json.loads(line) for line in stdout.splitlines()]
    assert record["seq"] == 5
    assert record["details"]["script"] == "go.py"
    assert "-p" not in json.dumps(record)  # arguments only as a digest
    code, stdout, _ = cli(root, "show", "--since", "2030-01-01T02:00Z", "--json")
    assert [json.loads(line)["seq"] for line in stdout.splitlines()] == [3, 4, 5]
    code, stdout, stderr = cli(root, "show", "--since", "2031-01-01")
    assert (code, stdout.strip()) == (0, "")
    assert stderr.strip() == "no audit records match"


def test_show_leaves_out_damaged_records_and_says_so(root: Path) -> None:
    (root / keys.audit_record_key(3)).write_bytes(b"garbage")
    code, stdout, stderr = cli(root, "show", "--json")
    assert code == 0
    assert [json.loads(line)["seq"] for line in stdout.splitlines()] == [1, 2, 4, 5]
    assert "1 record could not be shown" in stderr
    assert "skillweave audit verify" in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "--since 'yesterday' is neither an age"),
        (["--since", "99999999999w"], "is neither an age"),
        (["--event", "deleted"], "unknown event 'deleted'"),
    ],
)
def test_usage_errors_are_one_line(root: Path, args: list[str], message: str) -> None:
    code, stdout, stderr = cli(root, "show", *args)
    assert code == 2
    assert stdout == ""
    assert stderr.startswith("error: ")
    assert message in stderr.splitlines()[0]


def test_since_takes_ages_and_dates() -> None:
    now = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
    assert _parse_since("30m", now=now) == now - timedelta(minutes=30)
    assert _parse_since(" 2H ", now=now) == now - timedelta(hours=2)
    assert _parse_since("3d", now=now) == now - timedelta(days=3)
    assert _parse_since("1w", now=now) == now - timedelta(weeks=1)
    assert _parse_since("2030-05-01") == datetime(2030, 5, 1, tzinfo=UTC)
    assert _parse_since("2030-05-01T10:00+02:00") == datetime(2030, 5, 1, 8, tzinfo=UTC)
    with pytest.raises(ConfigError):
        _parse_since("2h ago", now=now)
