"""The names the front doors agree on: their own tools, the arguments only they add, and the
fixed texts every door says the same way (the MCP front door's instructions, the refusal of
``args`` that are not strings). Imported by the other disclosure modules and, through the
package front (``skillweave.agent.disclosure``), by the agent loop, the engines and the MCP front
door.
"""

from __future__ import annotations

from typing import Any, Final

from skillweave.llm.messages import RAW_ARGUMENTS_KEY

ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_RESOURCE: Final = "read_skill_resource"
RUN_SKILL_SCRIPT: Final = "run_skill_script"
SEARCH_SKILLS: Final = "search_skills"
LIST_SKILLS: Final = "list_skills"
"""The MCP front door's tier 1 (an agent run has the catalog in its system prompt)."""
INPUT_FILES: Final = "input_files"
"""The argument an MCP client gives a script its own files by (``run_skill_script`` and skill
tools, over MCP only): ``[{name, content | content_base64 | path}]``."""
INPUT_FILES_MAX: Final = 32
"""The most files one call may give."""
INPUT_ARTIFACTS: Final = "input_artifacts"
"""The argument an executable-skill tool gets on top of its own: artifacts to copy into
``inputs/``. It is taken out before the script sees ``--run-json``."""

CREATE_SKILL: Final = "create_skill"
PUBLISH_SKILL: Final = "publish_skill"
"""An agent run's own authoring tools, when its spec allows (``skillweave.agent.authoring``)."""
FIND_SKILLS: Final = "find_skills"
REQUEST_SKILL: Final = "request_skill"
"""An agent run's registry tools, when its spec allows (``skillweave.agent.acquisition``)."""

OWN_TOOLS: Final = frozenset(
    {
        LIST_SKILLS,
        ACTIVATE_SKILL,
        READ_SKILL_RESOURCE,
        RUN_SKILL_SCRIPT,
        SEARCH_SKILLS,
        CREATE_SKILL,
        PUBLISH_SKILL,
        FIND_SKILLS,
        REQUEST_SKILL,
    }
)
"""The tools of the front doors themselves (an executable skill's tools are the others)."""
RAW_ARGUMENTS: Final = RAW_ARGUMENTS_KEY
"""The key under which a provider hands over tool-call arguments that were not a JSON object,
verbatim (defined with the messages, ``skillweave.llm.messages.RAW_ARGUMENTS_KEY``)."""

SEARCH_TOP_K_MAX: Final = 50
"""The most hits an MCP client may ask ``search_skills`` for."""

ARGS_NOT_STRINGS: Final = "'args' must be a list of strings."
TOP_K_INVALID: Final = f"top_k must be a whole number from 1 to {SEARCH_TOP_K_MAX}."

FRONT_DOOR_INSTRUCTIONS: Final = (
    f"Skills give you instructions, reference files and scripts for specialised tasks. Call "
    f"{LIST_SKILLS} (or {SEARCH_SKILLS}) to see them, {ACTIVATE_SKILL} before using one, then "
    f"{READ_SKILL_RESOURCE} and {RUN_SKILL_SCRIPT} as its instructions say. Scripts run in "
    "isolated sandboxes; their output files come back to you."
)
"""What the MCP front door tells a client when it connects."""

ARTIFACT_LIST: Final[dict[str, Any]] = {
    "type": "array",
    "items": {"type": "string"},
    "description": (
        "Artifact keys (as shown in earlier results, e.g. runs/…/outputs/stats.json) to copy "
        "into the script's inputs/ folder under their file names."
    ),
}
"""The schema of a list of artifact keys to copy into a script's ``inputs/``."""
