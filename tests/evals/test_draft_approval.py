"""A draft's evals in the approval of its publication (``publish_skill``): a real direct engine
and store, the scripted model and the fake sandbox; the services' ``authoring.evals`` wired as
the composition wires it (``evals.summary.draft_line``). Every channel renders the request
through ``ApprovalRequest.describe`` (the Temporal UI's details escaped as Markdown) or the
``approval_requested`` event's detail (the terminal's question, ``runs show``, the API)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalRequest
from skillweave.agent.spec import ApprovalOptions, AuthoringOptions
from skillweave.agent.state import AgentState
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.evals.summary import draft_line
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from workflows._details import current_details

EVALS = json.dumps(
    {
        "evals": [
            {"id": 1, "prompt": "Echo the words hello there", "expectations": ["It echoes"]},
            {
                "id": 2,
                "prompt": "Echo one word",
                "checks": [{"type": "answer_contains", "text": "one"}],
            },
        ]
    }
)
SCRIPT = f"""
turns:
  - tool_calls:
      - name: create_skill
        arguments:
          name: echo-words
          description: Echoes words. Use when words must be echoed.
          instructions: Run scripts/echo.py with the words.
          files:
            - {{path: scripts/echo.py, content: "import sys\\nprint(*sys.argv[1:])\\n"}}
            - {{path: evals/evals.json, content: {json.dumps(EVALS)}}}
  - tool_calls: [{{name: publish_skill, arguments: {{name: echo-words}}}}]
  - say: "Kept as a draft."
"""


async def _run(tmp_path: Path, *, wired: bool) -> list:
    settings = Settings(_env_file=None, skills={"uploaded_dir": str(tmp_path / "uploaded")})
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=settings,
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml(textwrap.dedent(SCRIPT)),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    if wired:
        services.authoring.evals = draft_line(
            lambda: services.registry, store, settings=settings.skills
        )
    engine = DirectEngine(services)
    spec = AgentSpec(
        authoring=AuthoringOptions(enabled=True),
        approvals=ApprovalOptions(timeout_seconds=0.2),  # nobody answers: denied
    )
    await engine.start(RunRequest(run_id="run-draft-evals", task="Echo.", agent=spec))
    events = [event async for event in engine.events("run-draft-evals")]
    result = await engine.result("run-draft-evals")
    assert result.status == "completed", result.reason
    return events


async def test_the_publication_of_a_draft_with_evals_is_asked_with_its_eval_line(
    tmp_path: Path,
) -> None:
    events = await _run(tmp_path, wired=True)

    [asked] = [e for e in events if e.kind == "approval_requested"]
    assert asked.detail.startswith("publish echo-words version ")
    assert (
        "(evals: 2 (2 checks and expectations), never run "
        "(skillweave skills eval echo-words, once approved);"
        " triggers: recall" in asked.detail
    )


async def test_without_the_wiring_the_approval_is_asked_as_before(tmp_path: Path) -> None:
    events = await _run(tmp_path, wired=False)
    [asked] = [e for e in events if e.kind == "approval_requested"]
    assert "evals" not in asked.detail


def test_every_renderer_of_the_request_shows_the_line_escaped() -> None:
    request = ApprovalRequest(
        seq=3,
        skill="echo-words",
        script="",
        action="publish",
        version="ab" * 32,
        report="0 findings",
        evals="evals: 2 (2 checks and expectations), never run "
        "(skillweave skills eval `x`*, once approved)",
        timeout_seconds=60,
    )
    assert request.describe() == (
        "publish the skill echo-words version abababababab (scan: 0 findings); "
        "evals: 2 (2 checks and expectations), never run "
        "(skillweave skills eval `x`*, once approved)"
    )
    details = current_details(
        AgentState(run_id="r", task="t"),
        phase="awaiting_approval",
        run=1,
        last_step="",
        awaiting=request,
        last_error=None,
    )
    assert "evals: 2 (2 checks and expectations)" in details
    assert "`x`*" not in details  # escaped as Markdown, like the rest of the request
    plain = request.model_copy(update={"evals": ""})
    assert "evals" not in plain.describe()
