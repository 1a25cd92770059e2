"""What going through the egress proxy costs per request, against a direct loopback request.

A small HTTP API on loopback answers every request with a short body. The same client
(``http.client``, one connection per request, as the proxy serves one request per connection)
asks it N times directly, then N times through an ``EgressProxy`` (the policy judged on every
connection, the name resolved, a credential added, the request recorded), and prints the
latency of each, p50 and p95, and the ratio of the medians measured in the same run. The full
path from a sandbox adds the sandbox's forwarder and the executor's bridge: two more loopback
relays, not measured here.

    python bench/egress_bench.py [--quick]

Prints tables only and always exits 0: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Final

from rich.console import Console
from rich.table import Table

from bench.measures import percentile
from mcp_manager.egress import EgressContext, EgressProxy, EgressRecord
from skillweave.config import CredentialBinding, EgressApproval, EgressLimits
from skillweave.skills.network import declared_destinations

REQUESTS: Final = 400
REQUESTS_QUICK: Final = 40
_BODY: Final = b"x" * 512


async def _api() -> tuple[asyncio.AbstractServer, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(_BODY)
            + _BODY
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


def _timed_requests(count: int, ask: Callable[[], None]) -> list[float]:
    ask()  # warm-up: imports, the first connection
    times = []
    for _ in range(count):
        start = time.perf_counter()
        ask()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _direct(port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/figures")
    assert connection.getresponse().read() == _BODY
    connection.close()


def _proxied(proxy: int, port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
    connection.request("GET", f"http://127.0.0.1:{port}/figures")
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status != 200 or body != _BODY:
        raise RuntimeError(f"the proxy answered {response.status}: {body[:200]!r}")


async def _measure(count: int) -> tuple[list[float], list[float], int]:
    server, port = await _api()
    destination = f"127.0.0.1:{port}"
    records: list[EgressRecord] = []
    proxy = EgressProxy(
        EgressContext(
            run_id="bench",
            execution_id="bench/egress",
            skill="bench",
            version="a" * 64,
            declared=declared_destinations([destination]),
            approval=EgressApproval(destinations=(destination,), private=(destination,)),
            credentials=(
                CredentialBinding(
                    destination=destination, header="Authorization", value="Bearer ${T}"
                ),
            ),
            secrets={"T": "token"},
            # The caps would stop a benchmark; what is measured is the work per request.
            limits=EgressLimits(max_connections=10**9, max_requests_per_second=10**9),
        ),
        audit=records.append,
    )
    proxy_port = await proxy.serve_tcp()
    try:
        direct = await asyncio.to_thread(_timed_requests, count, lambda: _direct(port))
        through = await asyncio.to_thread(
            _timed_requests, count, lambda: _proxied(proxy_port, port)
        )
    finally:
        await proxy.aclose()
        server.close()
        await server.wait_closed()
    return direct, through, len(records)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table; always returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{REQUESTS_QUICK} requests each")
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    count = REQUESTS_QUICK if args.quick else REQUESTS
    direct, through, recorded = asyncio.run(_measure(count))

    table = Table(title=f"Egress proxy: {count} sequential GETs each (ms)")
    for column in ("path", "p50", "p95", "mean"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, times in (("direct (loopback)", direct), ("through the proxy", through)):
        table.add_row(
            label,
            f"{statistics.median(times):.3f}",
            f"{percentile(times, 0.95):.3f}",
            f"{statistics.fmean(times):.3f}",
        )
    ratio = statistics.median(through) / statistics.median(direct)
    added = statistics.median(through) - statistics.median(direct)
    table.caption = (
        f"through/direct medians: {ratio:.2f}x (+{added:.3f} ms a request); "
        f"{recorded} requests recorded; run: bench/egress_bench.py {' '.join(sys.argv[1:])}"
    )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
