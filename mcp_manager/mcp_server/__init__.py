"""The MCP front door (``mcp_manager.mcp_server``): see ``_front``."""

from mcp_manager.mcp_server._front import UNAVAILABLE, RunScript, SkillMcp

__all__ = ["UNAVAILABLE", "RunScript", "SkillMcp"]
