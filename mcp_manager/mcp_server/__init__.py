"""The MCP front door: a skill library and its sandboxes over the Model Context Protocol.

:class:`SkillMcp` is a server of the official ``mcp`` SDK (its low-level ``Server``) that any
MCP client can use without our agent loop. The manager mounts it at ``/mcp`` (streamable HTTP,
behind the manager's bearer token); ``skillweave mcp`` serves it over stdio.

Tools: an agent run's, from the same rules (``skillweave.agent.disclosure``: names, schemas,
activation rules and refusal texts), per session: ``list_skills`` (the tier-1 catalog in the
configured catalog mode: tree roots, then the children of what the session activated),
``activate_skill`` (the ``<skill_content>`` payload; the enum names what the session may
activate now, so a sub-skill appears once its parent is active; a repeat gets "already
active"), ``read_skill_resource`` and ``run_skill_script`` (for skills active in the session
only, at the version the session activated), ``search_skills`` (matches become activatable),
and each activated executable skill's tools, ``<skill>__<tool>`` from its scripts'
``--help-json``, run with ``--run-json`` (``skillweave.sandbox.tool_schemas``). Activation
sends ``notifications/tools/list_changed``. Runs go through the warm pool, waiting while it
is full for up to ``SANDBOX__QUEUE_SECONDS`` (``skillweave.sandbox.queue``, as runs do); output
files come back as embedded resources, or as links to ``artifact://`` resources when large.
Resources: every skill file as ``skill://NAME/PATH`` (listed: each skill's SKILL.md; the rest
through the template; the library as it is now), and a session's artifacts as
``artifact://KEY``. Prompt: ``skill_catalog``.

Pinned versions: activation pins the skill's version for the session (and publishes its
package); reads and runs use that version even after the library changed
(``skillweave.sandbox.pinned``), and a version no longer available is a clear tool error.

Activation state is per MCP session: the ``Mcp-Session-Id`` of a streamable-HTTP session, or
the one connection of a stdio server (in either protocol era). Over HTTP the 2026-07-28
protocol has no sessions, so the server does not offer it there (``server/discover`` answers
"method not found"): clients fall back to the session handshake. A request that still arrives
without a session may list, search and read the catalog, but cannot activate a skill. Each
session's script runs belong to a run of its own (``mcp-<session>``), so one session cannot
pass another's artifacts to a script.

Audit: each activation is an ``activation`` record of the audit log, written before the
session counts the skill as active. When the log cannot be written, or a run cannot be
started because the manager cannot record it (``mcp_manager.executions``: refused before
anything runs, and waited for up to ``SANDBOX__QUEUE_SECONDS`` like a full pool), the call is
refused with a JSON-RPC error, code :data:`UNAVAILABLE`, whose ``data`` is the problem
(``skillweave.sandbox.problems``: type ``urn:skillweave:problem:audit_unavailable``,
``retry_after``, the store's error in ``detail``): nothing was done, the client asks again
later. Never a tool result that claims it was done, never an internal error.
:meth:`SkillMcp.aclose` anchors the log's last records; whoever serves the door calls it.

Configured skill secrets are masked (``skillweave.sandbox.masking``) in every script result
this front door renders and in every stdout/stderr log artifact it hands out, on top of the
manager's masking at the source: what was stored before masking existed leaves masked too.
Output files are handed out as the script wrote them.

One module per part, composed by :class:`SkillMcp` (``_front``): the sessions
(``_sessions``), the library as a session sees it (``_library``), one handler per surface:
tools (``_tools``), resources (``_resources``), prompts (``_prompts``); and what the tools
need: activation (``_activation``), script runs (``_runs``), a session's artifacts
(``_artifacts``), a client's own files (``_input_files``), and the results and refusals
(``_results``). ``skillweave mcp`` (``skillweave.cli.mcp``) serves the same door over stdio.
"""

from mcp_manager.mcp_server._front import SkillMcp
from mcp_manager.mcp_server._prompts import CATALOG_PROMPT
from mcp_manager.mcp_server._results import UNAVAILABLE
from mcp_manager.mcp_server._runs import RunScript
from mcp_manager.mcp_server._sessions import SCOPE_PARAMETER

__all__ = ["CATALOG_PROMPT", "SCOPE_PARAMETER", "UNAVAILABLE", "RunScript", "SkillMcp"]
