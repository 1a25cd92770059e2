"""Skill libraries written for other agent clients run unchanged, on both engines (issue 25).

The libraries are in ``tests/data/compat``: ``lazy`` (the Lazy-Skills style: underscore names,
``type`` and ``auto_load`` at the top level or under ``metadata``, a root ``execute.py``
answering ``--help-json`` / ``--run-json``) and ``namespaces`` (folders without a ``SKILL.md``,
two skills called ``parser``), served with the session's real manager and sandboxes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalDecision
from skillweave.agent.idempotency import execution_key
from skillweave.agent.spec import ApprovalOptions
from skillweave.skills import SkillRegistry, SkillScanner
from tests.integration.temporal.harness import EngineKind, Stack, kind_is, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

COMPAT = Path(__file__).parents[2] / "data" / "compat"
LAZY = COMPAT / "lazy"
NAMESPACES = COMPAT / "namespaces"
ALLOWED = COMPAT / "allowed"
PAGE = "<title>Home</title><a href='/about'>About</a><a href='https://b.example/'>B</a>"

LAZY_RUN = f"""
turns:
  # web_scraper was activated at the start (auto_load): its tool, named by its schema, is here.
  - tool_calls: [{{name: web_scraper, arguments: {{html: 5}}}}]
    expect: {{tools_include: [web_scraper]}}
  - tool_calls: [{{name: web_scraper, arguments: {{html: "{PAGE}", max_links: 1}}}}]
    expect: {{tool_results: [{{is_error: true, contains: "do not match its schema"}}]}}
  - tool_calls: [{{name: activate_skill, arguments: {{name: docs_search}}}}]
    expect: {{tool_results: [{{not_error: true, contains: '"title": "Home"'}}]}}
  - tool_calls: [{{name: activate_skill, arguments: {{name: notes_search}}}}]
    expect:
      tool_results: [{{contains: "Tools registered by this skill: search."}}]
      tools_include: [search]
  - tool_calls:
      - {{name: search, arguments: {{query: deploy}}}}
      - {{name: notes_search__search, arguments: {{query: deploy}}}}
    expect:
      tool_results: [{{contains: "Tools registered by this skill: notes_search__search."}}]
      tools_include: [search, notes_search__search, web_scraper]
  - say: "Deploy: {{{{last_result}}}}"
    expect:
      tool_results:
        - {{not_error: true, contains: "make release"}}
        - {{not_error: true, contains: "Tuesdays"}}
"""


@pytest.fixture(scope="module")
def lazy_stack(stack: Stack, skill_dirs: list[Path]) -> Stack:
    """The session's stack with the compatibility libraries beside its own."""
    scanned = SkillScanner([*skill_dirs, LAZY, NAMESPACES, ALLOWED]).scan()
    return replace(stack, registry=SkillRegistry.from_scan(scanned))


async def test_a_lazy_skills_library_runs_unchanged(
    lazy_stack: Stack, engine_kind: EngineKind
) -> None:
    agent = AgentSpec(skills=("web_scraper", "docs_search", "notes_search"))
    async with open_engine(engine_kind, lazy_stack, LAZY_RUN) as harness:
        run_id = await harness.start(
            "Which links has this page, and how do we deploy?", agent=agent
        )
        events = await harness.all_events(run_id)
        result = await harness.engine.result(run_id)
        ran = [s for s in range(40) if await lazy_stack.manager.execution(execution_key(run_id, s))]

    assert result.status == "completed", result.reason
    # auto_load: activated before the first model call, its root execute.py a tool.
    first_call = next(i for i, e in enumerate(events) if e.kind == "model_called")
    before = [(e.kind, e.skill) for e in events[:first_call] if e.skill]
    assert before == [("skill_activated", "web_scraper"), ("preloaded", "web_scraper")]
    activated = {e.skill: e.tools_registered for e in events if e.kind == "skill_activated"}
    # Named by their schemas; the second `search` is prefixed because the first took the name.
    assert activated == {
        "web_scraper": ("web_scraper",),
        "docs_search": ("search",),
        "notes_search": ("notes_search__search",),
    }
    assert list(result.active_skills) == ["web_scraper", "docs_search", "notes_search"]
    # Arguments are checked against the schema before a sandbox is spent: the bad call was
    # refused, and only the three good calls ran scripts.
    refused = [e for e in events if e.kind == "tool_refused"]
    assert [e.tool for e in refused] == ["web_scraper"]
    assert "'html': 5 is not of type 'string'" in refused[0].detail
    assert result.script_runs == 3
    assert len(ran) == 3
    (links,) = result.outputs
    assert json.loads(await lazy_stack.store.get_bytes(links)) == {
        "title": "Home",
        "links": ["/about"],
    }
    assert "Tuesdays" in (result.answer or "")


ONLY_SEARCH = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: web_scraper}}]
  - say: done
    expect: {tool_results: [{is_error: true, contains: "cannot be activated now"}]}
"""


async def test_auto_load_activates_only_skills_the_agent_allows(
    lazy_stack: Stack, engine_kind: EngineKind
) -> None:
    async with open_engine(engine_kind, lazy_stack, ONLY_SEARCH) as harness:
        result, events = await harness.run(
            "Search the docs.", agent=AgentSpec(skills=("docs_search",))
        )

    assert result.status == "completed", result.reason
    assert result.active_skills == {}
    assert not [e for e in events if e.kind in ("preloaded", "skill_activated")]


NAMESPACED_RUN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: web.scraper}}]
  - tool_calls: [{name: activate_skill, arguments: {name: formats.csv.parser}}]
    expect: {tool_results: [{not_error: true, contains: '<skill_content name="scraper">'}]}
  - tool_calls: [{name: activate_skill, arguments: {name: formats.pdf.parser}}]
    expect: {tool_results: [{is_error: true, contains: "cannot be activated now"}]}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: formats.pdf.parser, script: scripts/parse.py, args: [report.pdf]}
    expect: {tool_results: [{not_error: true, contains: "# PDF parser"}]}
  - say: "Parsed: {{last_result}}"
    expect: {tool_results: [{not_error: true, contains: '"parser": "pdf"'}]}
"""


async def test_namespaced_skills_are_scoped_qualified_and_run(
    lazy_stack: Stack, engine_kind: EngineKind
) -> None:
    # A namespace and one of two same-named skills; the other `parser` stays out of reach.
    agent = AgentSpec(skills=("web.*", "formats.pdf.parser"))
    async with open_engine(engine_kind, lazy_stack, NAMESPACED_RUN) as harness:
        result, events = await harness.run("Parse report.pdf.", agent=agent)

    assert result.status == "completed", result.reason
    # Asked for by its qualified name, web.scraper is the skill the catalog calls scraper.
    assert list(result.active_skills) == ["scraper", "formats.pdf.parser"]
    assert (
        result.active_skills["formats.pdf.parser"]
        == lazy_stack.registry.get("formats.pdf.parser").version
    )
    (refused,) = [e for e in events if e.kind == "tool_refused"]
    assert "Skill 'formats.csv.parser' cannot be activated now" in refused.detail
    assert "fetcher" in refused.detail  # the rest of the namespace is offered
    assert '"parser": "pdf"' in (result.answer or "")


ALLOWED_RUN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: shouter}}]
  - tool_calls: [{name: activate_skill, arguments: {name: deer-report}}]
    expect: {tools_include: [shout, run_skill_script]}
  # deer-report (DeerFlow style: [read_file, render_report]) limits the tools to its own.
  - tool_calls: [{name: shout, arguments: {word: hi}}]
    expect:
      tools_include: [render_report, read_skill_resource, activate_skill]
      tools_exclude: [shout, run_skill_script]
      tool_results: [{contains: "limits the tools while it is active"}]
  - tool_calls: [{name: render_report, arguments: {title: Q3}}]
    expect:
      tool_results: [{is_error: true, contains: "not allowed while skills that limit"}]
  # pdf-forms (Claude Code style: Bash(python:*) Read) adds every python script: the union.
  - tool_calls: [{name: activate_skill, arguments: {name: pdf-forms}}]
    expect: {tool_results: [{not_error: true, contains: "# Q3"}]}
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: pdf-forms, script: scripts/flatten.sh}}
    expect: {tools_include: [shout, run_skill_script, render_report]}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: pdf-forms, script: scripts/fill.py, args: [name=Ada]}
    expect:
      tool_results: [{is_error: true, contains: "not allowed while skills that limit"}]
  - tool_calls: [{name: shout, arguments: {word: yo}}]
    expect: {tool_results: [{not_error: true, contains: "filled name=Ada"}]}
  - say: done
    expect: {tool_results: [{not_error: true, contains: "YO"}]}
"""


async def test_allowed_tools_limit_what_is_offered_and_pre_approve_a_skills_own_runs(
    lazy_stack: Stack, engine_kind: EngineKind
) -> None:
    agent = AgentSpec(
        skills=("shouter", "deer-report", "pdf-forms"),
        approvals=ApprovalOptions(skills=("pdf-forms", "shouter"), timeout_seconds=60),
    )
    async with open_engine(engine_kind, lazy_stack, ALLOWED_RUN) as harness:
        run_id = await harness.start("Fill the form and shout.", agent=agent)
        asked = await harness.wait_event(run_id, kind_is("approval_requested"))
        await harness.engine.approve(run_id, ApprovalDecision(approved=True))
        result = await harness.engine.result(run_id)
        events = await harness.all_events(run_id)
        executed = [
            s for s in range(40) if await lazy_stack.manager.execution(execution_key(run_id, s))
        ]

    assert result.status == "completed", result.reason
    # Refused before any sandbox: a tool deer-report does not allow, a script nobody allows.
    refused = [(e.tool, e.detail) for e in events if e.kind == "tool_refused"]
    assert [tool for tool, _ in refused] == ["shout", "run_skill_script"]
    assert "deer-report: the tool render_report" in refused[0][1]
    assert "pdf-forms: scripts *.py" in refused[1][1]
    ran = [(e.skill, e.detail) for e in events if e.kind == "script_ran"]
    assert ran == [
        ("deer-report", "scripts/render.py"),
        ("pdf-forms", "scripts/fill.py"),
        ("shouter", "scripts/shout.py"),
    ]
    # pdf-forms lists its own python scripts: fill.py needed nobody's approval although the
    # agent asks for pdf-forms' runs to be approved. It cannot approve shouter's: that asked.
    assert [e.detail for e in events if e.kind == "approval_requested"] == [asked.detail]
    assert asked.detail == "shouter/scripts/shout.py"
    assert result.script_runs == 3
    assert len(executed) == 3  # the refused calls reached no sandbox
