"""A skill's secret never leaves a run in clear: not inline, not in the stored full logs, not
through the MCP front door, and it never reaches another skill's script.

A real manager (local pool of real executor processes, local store) serves both
``/sandbox/execute`` and ``/mcp``. The skill ``vault-user`` holds ``VAULT_KEY``; its script
prints the digest of the value (proof it had it), then about 2.5 MiB on stdout and on stderr
with the value planted where masking is hardest: whole in the inline part, straddling the
inline cap (so the inline text ends in half of it), straddling the 1 MiB chunk boundary of
the masker that rewrites the stored log, and starting on the last byte of the second chunk.
The expected masked bytes are built in the test the same way, with ``***`` in each place, and
compared exactly: the inline text, the stored artifact (whose ref must describe those masked
bytes) and, for a shorter output, the artifact the MCP front door hands out. Then every file
of the store is searched for the value, and a script of another skill lists its environment
as digests.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import logging
import re
import secrets
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionLimits, ExecutionResult
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.base import ArtifactRef
from skillweave.storage.local import LocalArtifactStore
from skillweave.telemetry.masker import CHUNK_BYTES, MASK
from tests.conftest import write_skill
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(180)

TOKEN = "secret-masking-token"
OWNER = "vault-user"
OTHER = "env-lister"
VARIABLE = "VAULT_KEY"
SECRET = secrets.token_urlsafe(24)  # 32 characters
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
SHORT = ("tiny-secret", "TINY_PIN")  # a value too short to mask: warned about at start-up
INLINE_CAP = 256 * 1024  # ExecutionLimits' default max_output_bytes, which MCP runs use


def _filler(n: int) -> str:
    return (("." * 99 + "\n") * (n // 100 + 1))[:n]


# The script and the test build the same text: a digest line, then filler and the secret.
LEAK = inspect.getsource(_filler) + textwrap.dedent(
    f"""
    import hashlib, os, sys
    secret = os.environ["{VARIABLE}"]
    text = "sha256 " + hashlib.sha256(secret.encode()).hexdigest() + "\\n"
    text += secret.join(_filler(int(n)) for n in sys.argv[1:])
    sys.stdout.buffer.write(text.encode())
    sys.stderr.buffer.write(text.encode())
    """
)

LIST_ENV = textwrap.dedent(
    """
    import hashlib, os
    for name, value in sorted(os.environ.items()):
        print(name, hashlib.sha256(value.encode()).hexdigest())
    """
)

PREFIX = f"sha256 {DIGEST}\n"


@dataclass(frozen=True)
class Layout:
    """Where each copy of the secret starts, in bytes from the start of the stream, and how
    much filler follows the last one."""

    starts: tuple[int, ...]
    tail: int

    @property
    def args(self) -> list[str]:
        ends = [len(PREFIX), *(start + len(SECRET) for start in self.starts)]
        lengths = [start - end for start, end in zip(self.starts, ends, strict=False)]
        return [str(n) for n in [*lengths, self.tail]]

    def text(self, insert: str) -> str:
        return PREFIX + insert.join(_filler(int(n)) for n in self.args)

    @property
    def masked(self) -> str:
        return self.text(MASK)

    @property
    def inline(self) -> str:
        """The first INLINE_CAP bytes, masked: the copy the cap cuts is masked too."""
        masked = self.masked
        return masked[: masked.index(MASK, masked.index(MASK) + 1) + len(MASK)]


LONG = Layout(
    starts=(
        200,  # whole, inline
        INLINE_CAP - 10,  # across the inline cap: the inline text ends in 10 characters of it
        CHUNK_BYTES - len(SECRET) // 2,  # across the masker's first chunk boundary
        2 * CHUNK_BYTES - 1,  # from the last byte of the second chunk
    ),
    tail=300_000,
)
# What the MCP front door hands out must fit one server-sent event of the official client
# (1 MiB): the same places but the chunk boundaries, which the stored bytes already showed.
MCP = Layout(starts=(200, INLINE_CAP - 10, 600_000), tail=100_000)


def assert_no_fragment(text: str, where: str, *, size: int = 8) -> None:
    """No stretch of `size` characters of the secret is in `text`."""
    for at in range(len(SECRET) - size + 1):
        assert SECRET[at : at + size] not in text, f"part of the secret is in {where}"


@dataclass
class Served:
    store: LocalArtifactStore
    store_dir: Path
    api: SandboxClient
    registry: SkillRegistry
    connect: Callable[[], contextlib.AbstractAsyncContextManager[Client]]

    def request(self, skill: str, script: str, execution_id: str, **fields: Any) -> ExecuteRequest:
        return ExecuteRequest(
            execution_id=execution_id,
            run_id="run-secret",
            skill=skill,
            version=self.registry.get(skill).version,
            script=script,
            **fields,
        )


@pytest.fixture
async def served(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> AsyncIterator[Served]:
    library = tmp_path / "library"
    write_skill(
        library / OWNER,
        description="Uses a vault key. Use when a test needs a skill secret.",
        files={"scripts/leak.py": LEAK},
    )
    write_skill(
        library / OTHER,
        description="Lists its environment. Use when a test looks at a script's environment.",
        files={"scripts/env.py": LIST_ENV},
    )
    settings = Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(TOKEN),
            "pool_target": 1,
            "pool_max": 2,
            "skill_secrets": {
                OWNER: {VARIABLE: SecretStr(SECRET)},
                SHORT[0]: {SHORT[1]: SecretStr("123")},
            },
        },
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store_dir = tmp_path / "store"
    store = LocalArtifactStore(store_dir)
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    caplog.set_level(logging.WARNING, logger="skillweave.manager")
    async with Manager.serving(settings, store=store, registry=registry, publish=True) as manager:

        @contextlib.asynccontextmanager
        async def connect() -> AsyncIterator[Client]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=120) as http,
                Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
            ):
                yield client

        yield Served(store, store_dir, manager.client, registry, connect)


async def _log(store: LocalArtifactStore, ref: ArtifactRef | None) -> str:
    assert ref is not None, "the full log was not stored"
    data = await store.get_bytes(ref)  # verified against the ref: size and sha256
    assert ref.size == len(data)
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
    return data.decode()


def _assert_masked_result(result: ExecutionResult, layout: Layout) -> None:
    assert result.status == "succeeded", result.error or result.stderr[-500:]
    assert result.stdout_truncated
    assert result.stderr_truncated
    for stream, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert text.startswith(PREFIX), f"the script did not have its secret ({stream})"
        assert text == layout.inline, f"inline {stream} is not masked as expected"
        assert_no_fragment(text, f"the inline {stream}")


async def test_stored_logs_and_inline_output_hold_no_secret_and_other_skills_never_get_it(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    # Start-up said which configured value is too short to be masked, never the value.
    started = caplog.get_records("setup")
    [warning] = [r.getMessage() for r in started if "NOT masked" in r.getMessage()]
    assert f"skill {SHORT[0]}: secret {SHORT[1]} " in warning
    assert "123" not in warning

    request = served.request(
        OWNER,
        "scripts/leak.py",
        "masking/leak",
        args=LONG.args,
        limits=ExecutionLimits(max_output_bytes=INLINE_CAP),
    )
    result = await served.api.execute(request)
    _assert_masked_result(result, LONG)
    for stream, ref in (("stdout", result.stdout_ref), ("stderr", result.stderr_ref)):
        stored = await _log(served.store, ref)
        assert SECRET not in stored, f"the stored {stream} holds the secret in clear"
        assert stored == LONG.masked, f"the stored {stream} is not masked as expected"
        assert ref is not None
        assert ref.size == len(LONG.masked.encode())  # the masked bytes, not the script's

    # Read back (a repeat of the id, and its state): the same masked result.
    again = await served.api.execute(request)
    assert again == result

    # Another skill's script never receives the secret: not its name, not its value.
    listed = await served.api.execute(served.request(OTHER, "scripts/env.py", "masking/env"))
    assert listed.status == "succeeded", listed.error
    assert VARIABLE not in listed.stdout
    assert DIGEST not in listed.stdout

    # Nothing the store keeps holds the value: results, logs, claims, packages.
    for path in served.store_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"{path} holds the secret"


async def test_the_mcp_front_door_shows_and_hands_out_only_masked_output(
    served: Served,
) -> None:
    async with served.connect() as client:
        await client.call_tool("activate_skill", {"name": OWNER})
        ran = await client.call_tool(
            "run_skill_script",
            {"skill": OWNER, "script": "scripts/leak.py", "args": MCP.args},
        )
        text = "\n".join(c.text for c in ran.content if isinstance(c, types.TextContent))
        assert not ran.is_error, text[:2000]
        assert f"sha256 {DIGEST}" in text  # the script had it
        assert f"{_filler(MCP.starts[0] - len(PREFIX))}{MASK}" in text
        assert_no_fragment(text, "the MCP result")
        logs = dict(re.findall(r"full (stdout|stderr): (\S+), \d+ bytes", text))
        assert set(logs) == {"stdout", "stderr"}, text[-1000:]
        for stream, key in logs.items():
            read = await client.read_resource(f"artifact://{key}")
            [contents] = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert SECRET not in contents.text, f"MCP handed out the secret in the {stream}"
            assert contents.text == MCP.masked

        # A log stored in clear (before masking existed) is handed out masked all the same.
        await served.store.put_bytes(logs["stdout"], f"old {SECRET} log".encode())
        [old] = (await client.read_resource(f"artifact://{logs['stdout']}")).contents
        assert isinstance(old, types.TextResourceContents)
        assert old.text == f"old {MASK} log"
