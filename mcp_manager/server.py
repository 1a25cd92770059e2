"""Serving the manager: ``run_manager`` (used by ``skillweave manager``)."""

from __future__ import annotations

import uvicorn

from mcp_manager.app import create_app
from skillweave.config import Settings

__all__ = ["run_manager"]


def run_manager(settings: Settings) -> None:
    """Serve the MCP manager on ``settings.sandbox.host:port`` until interrupted."""
    app = create_app(settings)
    uvicorn.run(app, host=settings.sandbox.host, port=settings.sandbox.port, log_level="info")
