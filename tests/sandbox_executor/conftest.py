"""In-process executor apps (httpx over ASGI) running real scripts in real sandboxes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from sandbox_executor import ExecutorSettings, create_app
from tests.sandbox_executor.support import TOKEN

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def make_client() -> AsyncIterator[MakeClient]:
    """Build a fresh executor app (one-shot!) and an httpx client on it; all closed after."""
    stack: list[tuple[FastAPI, Any, httpx.AsyncClient]] = []

    async def make(settings: ExecutorSettings | None = None) -> httpx.AsyncClient:
        app = create_app(token=TOKEN, settings=settings or ExecutorSettings())
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://executor", timeout=60
        )
        stack.append((app, lifespan, client))
        return client

    yield make
    for _, lifespan, client in reversed(stack):
        await client.aclose()
        await lifespan.__aexit__(None, None, None)
