"""The MCP manager: runs skill scripts in one-shot sandboxes from a warm pool (DESIGN §6).

``create_app`` builds the HTTP service (with the MCP front door of ``mcp_server`` at ``/mcp``);
``run_manager`` serves it with uvicorn.
"""

from mcp_manager.app import create_app
from mcp_manager.backends import LocalBackend, Sandbox, SandboxBackend, StaticBackend
from mcp_manager.deps import ManagerState
from mcp_manager.executions import ExecutionService, ExecutionState
from mcp_manager.pool import WarmPool

__all__ = [
    "ExecutionService",
    "ExecutionState",
    "LocalBackend",
    "ManagerState",
    "Sandbox",
    "SandboxBackend",
    "StaticBackend",
    "WarmPool",
    "create_app",
]
