"""Ctrl-C while a command stops (issue 39, item 7): once the run's handler is gone, a further
SIGINT is ignored while the event loop lasts (what stops goes on stopping, no KeyboardInterrupt
breaking it off with tracebacks), and an in-process manager's server takes no signal at all."""

from __future__ import annotations

import asyncio
import os
import signal

from mcp_manager.server import LoopbackServer
from skillweave.cli.signals import interrupt_cancels


async def _app(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()  # type: ignore[operator]
            kind = message["type"]
            await send({"type": f"{kind}.complete"})  # type: ignore[operator]
            if kind == "lifespan.shutdown":
                return


def test_a_signal_after_the_run_is_ignored_until_the_loop_ends() -> None:
    async def main() -> str:
        task = asyncio.current_task()
        try:
            with interrupt_cancels(task):
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(5)
        except asyncio.CancelledError:
            task.uncancel()  # type: ignore[union-attr]
        # Stopping: another Ctrl-C changes nothing.
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.2)
        return "stopped in order"

    assert asyncio.run(main()) == "stopped in order"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_in_process_server_takes_no_signal() -> None:
    async def main() -> tuple[object, object]:
        before = signal.getsignal(signal.SIGINT)
        async with LoopbackServer(_app) as server:
            assert server.url.startswith("http://127.0.0.1:")
            during = signal.getsignal(signal.SIGINT)
        return before, during

    before, during = asyncio.run(main())
    assert during is before
