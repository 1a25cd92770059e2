"""What `run` and `demo` say of the isolation of a manager they do not start: its /healthz."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from skillweave.cli.jobs import manager_isolation
from skillweave.config import SandboxSettings


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


def test_a_local_manager_is_described_by_this_process_settings() -> None:
    assert manager_isolation(SandboxSettings(isolation="namespaces")) == "namespaces"


def test_a_remote_manager_is_described_by_its_healthz(
    manager_saying: Callable[[bytes], str],
) -> None:
    url = manager_saying(json.dumps({"status": "ok", "isolation": "none"}).encode())
    assert manager_isolation(SandboxSettings(manager_url=url)) == "none"


def test_a_remote_manager_that_does_not_say_is_unknown(
    manager_saying: Callable[[bytes], str],
) -> None:
    url = manager_saying(b'{"status": "ok", "isolation": "\\u001b[2Jrlimits"}')
    assert manager_isolation(SandboxSettings(manager_url=url)) is None
    assert manager_isolation(SandboxSettings(manager_url="http://127.0.0.1:9")) is None
