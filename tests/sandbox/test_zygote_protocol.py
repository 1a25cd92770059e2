"""The zygote's line protocol: exactly the messages it defines, nothing else."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillweave.sandbox import zygote_protocol as protocol


def test_messages_round_trip_as_one_line_each() -> None:
    spawn = protocol.Spawn(id="abc123", workdir="/tmp/pool/abc123")
    line = protocol.encode(spawn)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert protocol.decode_order(line) == spawn
    exited = protocol.Exited(id="abc123", code=-9)
    assert protocol.decode_report(protocol.encode(exited)) == exited


@pytest.mark.parametrize(
    "line",
    [
        b'{"kind": "spawn", "id": "../x", "workdir": "/tmp"}',  # ids are plain names
        b'{"kind": "spawn", "id": "ABC", "workdir": "/tmp"}',
        b'{"kind": "spawn", "id": "abc", "workdir": ""}',
        b'{"kind": "spawn", "id": "abc", "workdir": "/tmp", "token": "x"}',  # nothing extra
        b'{"kind": "signal", "id": "abc", "signum": 0}',
        b'{"kind": "exec", "argv": ["sh"]}',
        b"not json",
    ],
)
def test_anything_else_is_refused(line: bytes) -> None:
    with pytest.raises(ValidationError):
        protocol.decode_order(line)


def test_a_report_is_not_an_order() -> None:
    with pytest.raises(ValidationError):
        protocol.decode_order(protocol.encode(protocol.Ready(pid=1, isolation="bubblewrap")))
