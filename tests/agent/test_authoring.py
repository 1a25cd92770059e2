"""The loop's side of skills an agent writes (issue 27, part 5) and of refused activations,
with real services and store, a scripted model and the fake sandbox: what is refused before
anything runs (a taken name, one draft too many, publishing what the run did not write), a
publication nobody approves staying a draft, a rewritten draft replacing the active one, and
an activation the signature policy refuses reaching the model as an error."""

from __future__ import annotations

from pathlib import Path

from skillweave.agent import AgentSpec
from skillweave.agent.spec import ApprovalOptions, AuthoringOptions
from skillweave.config import Settings
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.skills.signing import generate_keypair, load_private_key, sign_folder
from tests.agent.harness import run_agent, sample_library
from tests.conftest import write_skill

AUTHOR = AgentSpec(
    authoring=AuthoringOptions(enabled=True, max_drafts=1),
    approvals=ApprovalOptions(timeout_seconds=0.2),
)

WRITE = """
  - tool_calls:
      - name: create_skill
        arguments:
          name: echo-words
          description: Echoes words. Use when words must be echoed.
          instructions: Run scripts/echo.py with the words.
          files:
            - {path: scripts/echo.py, content: "import sys\\nprint('VERSION', *sys.argv[1:])\\n"}
          examples: [{script: scripts/echo.py, args: [hi], expect: "VERSION hi"}]
"""


def write(version: str) -> str:
    return WRITE.replace("VERSION", version)


async def test_drafts_are_the_runs_own_and_nobody_approving_keeps_them_drafts(
    tmp_path: Path,
) -> None:
    script = (
        "turns:"
        + write("v1")
        + """
  - tool_calls: [{name: activate_skill, arguments: {name: echo-words}}]
    expect: {tool_results: [{not_error: true, contains: "Kept your skill 'echo-words'"}]}
"""
        + write("v2")  # a new text of the same draft: replaces it (and its activation)
        + """
    expect: {tool_results: [{not_error: true, contains: '<skill_content name="echo-words">'}]}
  - tool_calls:
      - name: create_skill
        arguments: {name: second-one, description: Another. Use never., instructions: Nothing.}
      - name: create_skill
        arguments: {name: notes, description: Mine. Use for notes., instructions: Mine.}
    expect: {tool_results: [{not_error: true, contains: "version"}]}
  - tool_calls: [{name: activate_skill, arguments: {name: echo-words}}]
    expect:
      tool_results:
        - {is_error: true, contains: "as many as its agent allows"}
        - {is_error: true, contains: "exists already"}
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: echo-words, script: scripts/echo.py,
                                             args: [there]}}
  - tool_calls: [{name: publish_skill, arguments: {name: echo-words}}]
    expect: {tool_results: [{not_error: true, contains: "v2 there"}]}
  - say: "Kept as a draft."
    expect: {tool_results: [{is_error: true, contains: "It stays a draft of this run"}]}
"""
    )
    run = await run_agent(tmp_path, script, spec=AUTHOR)

    assert run.result.status == "completed", run.result.reason
    drafted = [(e.skill, e.status) for e in run.events if e.kind == "skill_drafted"]
    assert drafted == [("echo-words", "kept"), ("echo-words", "kept")]
    versions = [e.version for e in run.events if e.kind == "skill_drafted"]
    assert versions[0] != versions[1]
    activated = [e.version for e in run.events if e.kind == "skill_activated"]
    assert activated == versions  # the second activation is of the second text
    decided = [e.status for e in run.events if e.kind == "approval_decided"]
    assert decided == ["denied"]
    assert not [e for e in run.events if e.kind == "skill_published"]
    # Two examples and one script run went to a sandbox; the refused calls ran nothing.
    assert len(run.sandbox.requests) == 3
    assert run.result.script_runs == 3


async def test_an_activation_the_signature_policy_refuses_is_an_error_the_model_reads(
    tmp_path: Path,
) -> None:
    pem, public = generate_keypair()
    (tmp_path / "ops.pem").write_bytes(pem)
    library = tmp_path / "skills"
    sample_library(library)
    changed = write_skill(library / "changed", description="Changed. Use for changes.")
    sign_folder(changed, load_private_key(tmp_path / "ops.pem"), key_id="ops")
    (changed / "SKILL.md").write_text((changed / "SKILL.md").read_text() + "\nMore.\n")
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    script = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: changed}}]
  - say: "Could not."
    expect: {tool_results: [{is_error: true, contains: "cannot be used"}]}
"""
    settings = Settings(_env_file=None, skills={"trust": {"keys": {"ops": public}}})
    run = await run_agent(tmp_path, script, registry=registry, settings=settings)

    assert run.result.status == "completed", run.result.reason
    assert not [e for e in run.events if e.kind == "skill_activated"]
    [refused] = [e for e in run.events if e.kind == "tool_refused"]
    assert refused.skill == "changed"
    assert "does not match" in refused.detail or "mismatch" in refused.detail
