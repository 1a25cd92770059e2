"""The wire protocol between the manager's local backend and its executor zygote.

The zygote (``python -m sandbox_executor.zygote``) is the one process per local pool that has
imported the executor; it forks a fresh executor per sandbox. The two talk over the zygote's
stdin and stdout, one JSON object per line, each with a ``kind``:

    manager → zygote   spawn {id, workdir}        fork an executor for sandbox `id`
                       signal {id, signum}        signal its process group, unless it is gone
    zygote → manager   ready {pid, isolation}     once, when it can take orders
                       spawned {id, pid}          the executor process exists
                       refused {id, error}        no fork (the reason on one line)
                       exited {id, code}          it exited and is reaped (code as returncode)

The executor's token never crosses this channel (the manager writes it to a file in the
sandbox's folder that only the forked executor reads, then removes), so the zygote, from which
every executor is forked, never holds any executor's credential. Closing the zygote's stdin
stops it and every executor it forked.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "EXECUTOR_FOLDER_PREFIX",
    "EXIT_REFUSED",
    "TOKEN_FILE",
    "Exited",
    "Order",
    "Ready",
    "Refused",
    "Report",
    "SignalOrder",
    "Spawn",
    "Spawned",
    "decode_order",
    "decode_report",
    "encode",
]

EXIT_REFUSED: Final = 2
"""What an executor (``python -m sandbox_executor``) or the zygote exits with when it cannot run
on this host (a setting, the isolation): a permanent refusal, not a failure to retry soon."""

TOKEN_FILE: Final = "token"
"""In a sandbox's folder: its executor's token, read and removed by the executor at start."""

EXECUTOR_FOLDER_PREFIX: Final = "skillweave-executor-"
"""How an executor's own folder (its workspaces) is named, in the temp folder. Its ready file
names it, and the backend removes it once the executor is gone, however it ended (killed
before its own clean-up was done, say); a folder not named so is never removed for it."""

MAX_LINE_BYTES: Final = 64 * 1024
"""The longest message line either side accepts."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Spawn(_Message):
    kind: Literal["spawn"] = "spawn"
    id: str = Field(pattern=r"^[a-z0-9]{1,64}$")
    workdir: str = Field(min_length=1, max_length=4096)


class SignalOrder(_Message):
    kind: Literal["signal"] = "signal"
    id: str
    signum: int = Field(ge=1, le=64)


class Ready(_Message):
    kind: Literal["ready"] = "ready"
    pid: int
    isolation: str


class Spawned(_Message):
    kind: Literal["spawned"] = "spawned"
    id: str
    pid: int


class Refused(_Message):
    kind: Literal["refused"] = "refused"
    id: str
    error: str


class Exited(_Message):
    kind: Literal["exited"] = "exited"
    id: str
    code: int


Order = Annotated[Spawn | SignalOrder, Field(discriminator="kind")]
Report = Annotated[Ready | Spawned | Refused | Exited, Field(discriminator="kind")]

_ORDERS: Final[TypeAdapter[Order]] = TypeAdapter(Order)
_REPORTS: Final[TypeAdapter[Report]] = TypeAdapter(Report)


def encode(message: _Message) -> bytes:
    """One message as its line (a single write of it is atomic on a pipe)."""
    return message.model_dump_json().encode("utf-8") + b"\n"


def decode_order(line: bytes) -> Order:
    """Raises: pydantic.ValidationError for anything but one well-formed order."""
    return _ORDERS.validate_json(line)


def decode_report(line: bytes) -> Report:
    """Raises: pydantic.ValidationError for anything but one well-formed report."""
    return _REPORTS.validate_json(line)
