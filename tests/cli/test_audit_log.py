"""``skillweave audit verify`` and ``audit show`` on a local store: what an intact log's lines
say (records, writers, checkpoints, the head to keep, records no checkpoint covers yet), one
line per problem and exit 1 for a damaged one, several writers, ``--expect`` finding a rollback
of the whole log that plain ``verify`` cannot see, records of every writer in time order as a
listing, a table or JSON lines, filters, ``--since`` ages and dates, and usage errors as one
line.

The CLI runs in-process through typer's runner, its settings read from the environment it is
given (``STORAGE__LOCAL_DIR``, ``AUDIT__KEY``); the log is written through the library and
tampered with on disk, as someone with write access to the store would."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
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
EVENTS = ("upload", "enable", "install", "activation", "execution")
HINT = (
    "keep this head outside the store: `audit verify --expect` with it later finds the whole "
    "log rolled back to before it"
)


def cli(root: Path, *args: str, key: str | None = KEY) -> tuple[int, str, str]:
    env = {
        "STORAGE__BACKEND": "local",
        "STORAGE__LOCAL_DIR": str(root),
        "AUDIT__KEY": key,
        "COLUMNS": "200",  # a hint or a problem is one line here; 80 columns are tested below
    }
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, ["audit", *args], env=env)
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stdout, result.stderr


class Clock:
    """The time a test sets: records (and checkpoints) written now carry it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def opened(root: Path, clock: Clock, *, actor: str = "api@host") -> AuditLog:
    """A writer on `root` on the test's `clock`; it anchors its chain only on its first block
    and when closed (never by the wall clock, so counts are exact)."""
    return AuditLog(
        LocalArtifactStore(root, fsync=False),
        key=SecretStr(KEY),
        actor=actor,
        clock=clock,
        checkpoint_seconds=3600,
    )


def write_log(root: Path, *, close: bool = True) -> str:
    """Five records an hour apart from 2030-01-01 00:00 UTC, one block each, by one writer
    (its id returned); closed, it has two checkpoints: its first record and its last."""

    async def write() -> str:
        clock = Clock()
        log = opened(root, clock)
        hour = timedelta(hours=1)
        await log.record("upload", skill="alpha", version="a" * 64, source="api")
        clock.now += hour
        await log.record("enable", skill="alpha", actor="alice")
        clock.now += hour
        await log.record("install", skill="beta", source="git", commit="abc123")
        clock.now += hour
        await log.record("activation", skill="alpha", run="run-1")
        clock.now += hour
        await log.record("execution", skill="alpha", run="run-1", script="go.py", args=["-p", "x"])
        if close:
            await log.aclose()
        return log.writer

    return asyncio.run(write())


def write_writers(root: Path, count: int, each: int) -> list[str]:
    """`count` writers taking turns, `each` records apiece, a minute apart in turn order; each
    closes when done. Their ids, in the order they first wrote."""

    async def write() -> list[str]:
        clock = Clock()
        logs = [opened(root, clock, actor=f"manager-{n}") for n in range(count)]
        for round_ in range(each):
            for n, log in enumerate(logs):
                await log.record("execution", skill="report", run=f"run-{n}-{round_}")
                clock.now += timedelta(minutes=1)
        for log in logs:
            await log.aclose()
        return [log.writer for log in logs]

    return asyncio.run(write())


def block(root: Path, writer: str, seq: int) -> Path:
    return root / keys.audit_block_key(writer, seq)


def head_of(root: Path) -> str:
    code, stdout, _ = cli(root, "verify", "--json")
    assert code == 0, stdout
    head = json.loads(stdout)["head"]
    return f"{head['seq']}:{head['hash']}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    write_log(folder)
    return folder


# -- verify ------------------------------------------------------------------------------------


def test_verify_an_intact_log(root: Path) -> None:
    code, stdout, _ = cli(root, "verify", "--json")
    report = json.loads(stdout)
    assert code == 0
    assert report == {
        "records": 5,
        "writers": 1,
        "checkpoints": 2,
        "keyed": True,
        "intact": True,
        "unanchored": 0,
        "head": {"seq": 2, "hash": report["head"]["hash"]},
        "problems": [],
    }
    assert re.fullmatch("[0-9a-f]{64}", report["head"]["hash"])
    code, stdout, _ = cli(root, "verify")
    assert code == 0
    assert stdout.splitlines() == [
        "audit log: 5 records from 1 writer, 2 checkpoints, intact (HMAC)",
        f"head 2:{report['head']['hash']}",  # whole: what --expect takes
        HINT,
    ]


def test_verify_says_how_many_records_no_checkpoint_covers_yet(tmp_path: Path) -> None:
    """A writer still running (or stopped without closing) has records after its last
    checkpoint: the log is intact, and a dim line says how many and what that means."""
    write_log(tmp_path, close=False)  # anchored at its first record only
    code, stdout, _ = cli(tmp_path, "verify")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "audit log: 5 records from 1 writer, 1 checkpoint, intact (HMAC)"
    assert lines[1] == (
        "4 records are newer than their writer's last checkpoint (the writer runs, or stopped "
        "without closing): their removal could not be told from a crash"
    )
    assert lines[2].startswith("head 1:")
    code, stdout, _ = cli(tmp_path, "verify", "--json")
    assert (code, json.loads(stdout)["unanchored"]) == (0, 4)


def test_verify_without_the_key_says_what_to_check(root: Path) -> None:
    writer = next(root.joinpath("audit", "chains").iterdir()).name
    code, stdout, stderr = cli(root, "verify", key=None)
    assert code == 1
    lines = stdout.splitlines()
    assert len(lines) == 7  # every record and every checkpoint
    assert f"record 1 of writer {writer} was edited: its hash does not match its content" in (lines)
    assert "is AUDIT__KEY the key the log was written with?" in stderr


def test_verify_names_each_problem_on_one_line(tmp_path: Path) -> None:
    """An edited record, a copy of one put after it, and a block deleted: one line each, in
    chain order, naming the record; --json gives their kind, chain and place."""
    writer = write_log(tmp_path)
    second = block(tmp_path, writer, 2)
    second.write_bytes(second.read_bytes().replace(b'"alice"', b'"mallory"'))
    third = block(tmp_path, writer, 3)
    third.write_bytes(third.read_bytes() * 2)  # record 3, then a copy of it
    block(tmp_path, writer, 4).unlink()
    code, stdout, stderr = cli(tmp_path, "verify", "--json")
    report = json.loads(stdout)
    assert (code, report["intact"]) == (1, False)
    assert [(p["kind"], p["chain"], p["seq"]) for p in report["problems"]] == [
        ("edited", writer, 2),
        ("inserted", writer, 4),
        ("removed", writer, 4),
    ]
    code, stdout, stderr = cli(tmp_path, "verify")
    assert code == 1
    assert stdout.splitlines() == [p["message"] for p in report["problems"]]
    assert stdout.splitlines()[0] == (
        f"record 2 of writer {writer} was edited: its hash does not match its content"
    )
    assert "a copy of record 3" in stdout.splitlines()[1]
    assert stdout.splitlines()[2].startswith(f"record 4 of writer {writer} was removed")
    assert "AUDIT__KEY" not in stderr  # the other records' hashes match: the key is right


def test_verify_finds_a_chain_or_the_checkpoint_chain_cut_short(tmp_path: Path) -> None:
    """A chain's newest block gone: the checkpoint that names its record says so. Every
    checkpoint gone: the records that name one say so."""
    writer = write_log(tmp_path / "one")
    block(tmp_path / "one", writer, 5).unlink()  # checkpoint 2 names record 5
    code, stdout, _ = cli(tmp_path / "one", "verify")
    [line] = stdout.splitlines()
    assert code == 1
    assert line.startswith(f"record 5 of writer {writer} was removed: ")
    assert line.endswith("checkpoint 2 names record 5")
    writer = write_log(tmp_path / "two")
    for seq in (1, 2):
        (tmp_path / "two" / keys.audit_checkpoint_key(seq)).unlink()
    code, stdout, _ = cli(tmp_path / "two", "verify")
    [line] = stdout.splitlines()  # one line, though four records name it
    assert code == 1
    assert line.startswith("checkpoint 1 was removed: ")
    assert line.endswith(f"record 2 of writer {writer} names checkpoint 1")


def test_expect_finds_a_tail_cut_with_its_checkpoint(tmp_path: Path) -> None:
    """The newest record and the checkpoint that names it removed together look like a writer
    that crashed before anchoring it: plain `verify` passes (and counts the records no
    checkpoint covers); the head kept from before finds it."""
    writer = write_log(tmp_path)
    kept = head_of(tmp_path)
    block(tmp_path, writer, 5).unlink()
    (tmp_path / keys.audit_checkpoint_key(2)).unlink()
    code, stdout, _ = cli(tmp_path, "verify")
    assert code == 0
    assert stdout.splitlines()[:2] == [
        "audit log: 4 records from 1 writer, 1 checkpoint, intact (HMAC)",
        "3 records are newer than their writer's last checkpoint (the writer runs, or stopped "
        "without closing): their removal could not be told from a crash",
    ]
    code, stdout, _ = cli(tmp_path, "verify", "--expect", kept)
    [line] = stdout.splitlines()
    assert code == 1
    assert line.startswith("checkpoint 2 was removed: ")
    assert line.endswith("the head you kept names checkpoint 2")


def test_verify_with_several_writers(tmp_path: Path) -> None:
    """Three writers taking turns: one log, intact; a record moved from one writer's chain to
    another's, and a writer's tail cut behind its checkpoint, are each one line naming the
    chain."""
    first, second, third = write_writers(tmp_path, 3, 3)
    code, stdout, _ = cli(tmp_path, "verify")
    assert code == 0
    assert stdout.splitlines()[0] == (
        "audit log: 9 records from 3 writers, 6 checkpoints, intact (HMAC)"
    )
    # The first writer's record 2 put in place of the second's: its hash matches its content,
    # but it names another writer (inside the HMAC), and the second's record 3 no longer
    # follows what stands before it.
    shutil.copyfile(block(tmp_path, first, 2), block(tmp_path, second, 2))
    block(tmp_path, third, 3).unlink()  # the third's last record, which a checkpoint names
    code, stdout, _ = cli(tmp_path, "verify", "--json")
    problems = json.loads(stdout)["problems"]
    assert code == 1
    assert {(p["kind"], p["chain"], p["seq"]) for p in problems} == {
        ("reordered", second, 2),
        ("reordered", second, 3),
        ("removed", third, 3),
    }
    code, stdout, _ = cli(tmp_path, "verify")
    lines = stdout.splitlines()
    assert code == 1
    assert len(lines) == 3
    assert f"record 2 of writer {second} is record 2 of writer {first}: moved between chains" in (
        lines
    )
    assert f"record 3 of writer {second} does not follow record 2" in stdout
    assert f"record 3 of writer {third} was removed: " in stdout


def test_expect_finds_a_rollback_plain_verify_cannot_see(tmp_path: Path) -> None:
    """Someone who can write the store puts back a copy of the whole log from earlier: every
    chain and the checkpoint chain agree, so `verify` passes; the head kept from later does
    not."""
    store = tmp_path / "store"
    write_log(store)
    earlier = tmp_path / "earlier"
    shutil.copytree(store, earlier)
    head_before = head_of(store)
    write_writers(store, 2, 2)  # more records, more checkpoints
    kept = head_of(store)
    assert int(kept.split(":")[0]) > int(head_before.split(":")[0])
    code, stdout, _ = cli(store, "verify", "--expect", kept)
    assert code == 0
    assert stdout.splitlines()[-1] == (
        f"checkpoint {kept.split(':')[0]}, the head you kept, is in the log"
    )

    shutil.rmtree(store)
    shutil.copytree(earlier, store)  # the consistent rollback
    code, stdout, _ = cli(store, "verify")
    assert code == 0
    assert stdout.splitlines()[0] == (
        "audit log: 5 records from 1 writer, 2 checkpoints, intact (HMAC)"
    )
    code, stdout, _ = cli(store, "verify", "--expect", kept)
    assert code == 1
    [line] = stdout.splitlines()
    assert line.startswith("checkpoints 3 to ")  # those written after the copy was taken
    assert " were removed: " in line
    assert line.endswith(f"the head you kept names checkpoint {kept.split(':')[0]}")
    code, stdout, _ = cli(store, "verify", "--json", "--expect", kept)
    [problem] = json.loads(stdout)["problems"]
    assert (code, problem["kind"], problem["chain"]) == (1, "removed", "checkpoints")
    # A head from before the rollback is still there; one whose hash differs is not.
    assert cli(store, "verify", "--expect", head_before)[0] == 0
    seq, digest = head_before.split(":")
    forged = f"{seq}:{'0' if digest[0] != '0' else '1'}{digest[1:]}"
    code, stdout, _ = cli(store, "verify", "--expect", forged)
    assert code == 1
    assert f"checkpoint {seq} is not the checkpoint the head you kept names" in stdout


@pytest.mark.parametrize(
    "value",
    [
        "5",
        "five:" + "a" * 64,
        "5:" + "a" * 63,
        "5:" + "g" * 64,
        "0:" + "a" * 64,
        "-1:" + "a" * 64,
        "1234567890123:" + "a" * 64,
        "5:" + "a" * 64 + "\n\x1b[31mred",
        "x" * 5000,
    ],
    ids=["no-hash", "no-seq", "short", "not-hex", "zero", "negative", "too-big", "escape", "long"],
)
def test_a_malformed_expect_is_a_usage_error(root: Path, value: str) -> None:
    code, stdout, stderr = cli(root, "verify", "--expect", value)
    assert code == 2
    assert stdout == ""
    [line] = stderr.splitlines()
    assert line.startswith("error: --expect ")
    assert "is not a head: give SEQ:HASH" in line
    assert "\x1b" not in line
    assert len(line) < 300


def test_verify_an_empty_store(tmp_path: Path) -> None:
    code, stdout, _ = cli(tmp_path / "none", "verify", key=None)
    assert (code, stdout.splitlines()) == (
        0,
        [
            "audit log: 0 records, intact (SHA-256)",
            "no AUDIT__KEY: SHA-256 finds damage, not a writer who recomputes the hashes",
        ],
    )
    code, stdout, _ = cli(tmp_path / "none", "verify", "--json", key=None)
    report = json.loads(stdout)
    assert (report["head"], report["writers"], report["checkpoints"]) == (None, 0, 0)
    # Everything gone: a head kept from before says so.
    code, stdout, _ = cli(tmp_path / "none", "verify", "--expect", "3:" + "a" * 64, key=None)
    assert code == 1
    assert "checkpoints 1 to 3 were removed: " in stdout


# -- show --------------------------------------------------------------------------------------


def test_show_wide_prints_every_record_in_order(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_cli, "out", Console(highlight=False, width=200))  # one row a line
    writer = next(root.joinpath("audit", "chains").iterdir()).name
    code, stdout, _ = cli(root, "show", "--wide")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split() == [
        "time", "(UTC)", "writer", "seq", "event", "skill", "version", "run", "actor", "details"
    ]  # fmt: skip
    assert lines[1].split()[:6] == ["2030-01-01", "00:00:00", writer, "1", "upload", "alpha"]
    assert "aaaaaaaaaaaa " in lines[1]  # a digest is shortened
    assert [line.split()[4] for line in lines[1:]] == list(EVENTS)


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
    """As a user's terminal runs it: each record a line of its fields, named by its writer
    (shortened) and place, its run and actor and its details whole below it, no line over 80
    columns, nothing folded mid-word."""
    writer = next(root.joinpath("audit", "chains").iterdir()).name
    text = at_80_columns(root, "show")
    lines = text.splitlines()
    assert lines[0].split() == ["record", "time", "(UTC)", "event", "version", "skill"]
    firsts = [line.split() for line in lines if line.startswith(writer[:6])]
    assert [fields[:4] for fields in firsts] == [
        [f"{writer[:6]}:{seq}", "2030-01-01", f"{hour:02d}:00:00", event]
        for seq, hour, event in zip(range(1, 6), range(5), EVENTS, strict=True)
    ]
    assert firsts[0][4:] == ["aaaaaaaaaaaa", "alpha"]  # the digest shortened, then the skill
    assert firsts[2][4:] == ["beta"]  # no version
    for whole in ("by api@host", "by alice", "run run-1 · by api@host", "commit=abc123"):
        assert whole in text, whole
    assert re.search(r"args_digest=[0-9a-f]{12}…, script=go\.py\n", text)  # details whole
    assert "-p" not in text  # arguments only as their digest


def test_show_interleaves_writers_in_time_order(tmp_path: Path) -> None:
    """Records of several writers come in the order they happened, each named by its writer
    and its place in that writer's chain; the verify lines fit 80 columns too."""
    writers = write_writers(tmp_path, 3, 2)
    text = at_80_columns(tmp_path, "show")
    named = [line.split()[0] for line in text.splitlines()[1:] if ":" in line.split()[0]]
    assert named == [f"{writer[:6]}:{seq}" for seq in (1, 2) for writer in writers]
    verified = at_80_columns(tmp_path, "verify").splitlines()
    assert verified[0] == "audit log: 6 records from 3 writers, 6 checkpoints, intact (HMAC)"
    assert re.fullmatch("head 6:[0-9a-f]{64}", verified[1])


def test_show_filters_and_prints_json(root: Path) -> None:
    writer = next(root.joinpath("audit", "chains").iterdir()).name
    code, stdout, _ = cli(root, "show", "--skill", "alpha", "--event", "execution", "--json")
    assert code == 0
    [record] = [json.loads(line) for line in stdout.splitlines()]
    assert set(record) == {
        "v", "writer", "seq", "time", "event", "skill", "version", "actor", "run", "details",
        "seen", "prev", "hash",
    }  # fmt: skip
    assert (record["writer"], record["seq"], record["v"]) == (writer, 5, 2)
    assert record["seen"]["seq"] == 1  # the checkpoint of its writer's first block
    assert re.fullmatch("[0-9a-f]{64}", record["seen"]["hash"])
    assert re.fullmatch("[0-9a-f]{64}", record["prev"])
    assert record["details"]["script"] == "go.py"
    assert "-p" not in json.dumps(record)  # arguments only as a digest
    code, stdout, _ = cli(root, "show", "--since", "2030-01-01T02:00Z", "--json")
    assert [json.loads(line)["seq"] for line in stdout.splitlines()] == [3, 4, 5]
    code, stdout, stderr = cli(root, "show", "--since", "2031-01-01")
    assert (code, stdout.strip()) == (0, "")
    assert stderr.strip() == "no audit records match"


def test_show_leaves_out_damaged_records_and_says_so(tmp_path: Path) -> None:
    writer = write_log(tmp_path)
    block(tmp_path, writer, 3).write_bytes(b"garbage\n")
    second = block(tmp_path, writer, 2)
    second.write_bytes(second.read_bytes().replace(b'"alice"', b'"mallory"'))
    code, stdout, stderr = cli(tmp_path, "show", "--json")
    assert code == 0
    assert [json.loads(line)["seq"] for line in stdout.splitlines()] == [1, 4, 5]
    assert "mallory" not in stdout  # an edited record is not shown as if it were true
    assert "left out 2 damaged records or blocks (unreadable or edited)" in stderr
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


# -- network -----------------------------------------------------------------------------------


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

    text = at_80_columns(tmp_path / "store", "network", "--run", "run-1")

    lines = text.splitlines()
    assert lines[0].split() == ["time", "verdict", "kind", "skill", "destination"]
    assert lines[1].split()[1:] == ["allowed", "request", "sales-report", "api.example.com:443"]
    # The request whole (folded where it is longer than a line), on lines of its own.
    moved = next(n for n, line in enumerate(lines) if line.strip().startswith("1 byte out"))
    assert "".join(line.strip() for line in lines[2:moved]) == f"GET{path}"
    assert "1 byte out, 48,213 bytes in · approved\n" in text
    assert "not among the destinations approved for it" in " ".join(text.split())
