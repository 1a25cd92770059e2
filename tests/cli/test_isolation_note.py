"""What `run` and `demo` say of the isolation of their run's manager: what its /healthz says
(the mode in force, under its setting)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from skillweave.cli.run_command import manager_isolation
from skillweave.sandbox.models import describe_isolation


def _serving(body: bytes) -> type[BaseHTTPRequestHandler]:
    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    return Health


@pytest.fixture
def manager_saying() -> Iterator[Callable[[bytes], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(body: bytes) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _serving(body))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


async def test_a_manager_is_described_by_its_healthz_mode_in_force(
    manager_saying: Callable[[bytes], str],
) -> None:
    """The mode in force, under its setting: what `run` and `demo` print of it."""
    url = manager_saying(
        json.dumps({"isolation": "namespaces", "isolation_setting": "auto"}).encode()
    )
    assert await manager_isolation(url) == ("namespaces", "auto")
    assert describe_isolation("namespaces", setting="auto") == (
        "scripts contained by namespaces (the fallback where bubblewrap does not run) with a"
        " syscall filter (SANDBOX__ISOLATION=auto)"
    )


async def test_an_older_manager_that_says_its_setting_only(
    manager_saying: Callable[[bytes], str],
) -> None:
    """A manager from before the mode in force was said: `isolation` is its setting."""
    off = manager_saying(json.dumps({"status": "ok", "isolation": "none"}).encode())
    assert await manager_isolation(off) == ("none", "none")
    auto = manager_saying(json.dumps({"status": "ok", "isolation": "auto"}).encode())
    assert await manager_isolation(auto) == (None, "auto")
    assert describe_isolation(None, setting="auto") == (
        "scripts will be contained by bubblewrap or namespaces with a syscall filter"
        " (SANDBOX__ISOLATION=auto; the first sandbox decides)"
    )


async def test_a_remote_manager_that_does_not_say_is_unknown(
    manager_saying: Callable[[bytes], str],
) -> None:
    url = manager_saying(b'{"status": "ok", "isolation": "\\u001b[2Jrlimits"}')
    assert await manager_isolation(url) is None
    odd = manager_saying(b'{"isolation": "bubblewrap", "isolation_setting": "sure"}')
    assert await manager_isolation(odd) is None
    assert await manager_isolation("http://127.0.0.1:9") is None
