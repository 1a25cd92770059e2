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
from skillweave.agent.identity import execution_key
from skillweave.skills import SkillRegistry, SkillScanner
from tests.integration.temporal.harness import EngineKind, Stack, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

COMPAT = Path(__file__).parents[2] / "data" / "compat"
LAZY = COMPAT / "lazy"
NAMESPACES = COMPAT / "namespaces"
PAGE = "<title>Home</title><a href='/about'>About</a><a href='https://b.example/'>B</a>"

LAZY_JOB = f"""
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
    scanned = SkillScanner([*skill_dirs, LAZY, NAMESPACES]).scan()
    return replace(stack, registry=SkillRegistry.from_scan(scanned))


async def test_a_lazy_skills_library_runs_unchanged(
    lazy_stack: Stack, engine_kind: EngineKind
) -> None:
    agent = AgentSpec(skills=("web_scraper", "docs_search", "notes_search"))
    async with open_engine(engine_kind, lazy_stack, LAZY_JOB) as harness:
        job_id = await harness.start(
            "Which links has this page, and how do we deploy?", agent=agent
        )
        events = await harness.all_events(job_id)
        result = await harness.engine.result(job_id)
        ran = [s for s in range(40) if await lazy_stack.manager.execution(execution_key(job_id, s))]

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


NAMESPACED_JOB = """
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
    async with open_engine(engine_kind, lazy_stack, NAMESPACED_JOB) as harness:
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
