"""The loop reads what came back (issue 24): a reply that is no answer (empty, or cut off at the
output limit) is asked again a bounded number of times and then fails the run, never completes
it; tool arguments that were unreadable JSON or do not match the tool's schema are refused with
what was wrong before anything runs; a script the manager refuses is no run of the budget.

Whole runs on the direct engine with real services and store, the fake sandbox of ``harness``
(which counts what reached it) and a model that answers with canned replies, including the
``stop_reason`` and unreadable arguments a scripted model cannot produce.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillweave.agent import AgentSpec, Budgets
from skillweave.agent.effect_models import ScriptOutcome
from skillweave.agent.replies import REPLY_RETRIES
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest, RunResult
from skillweave.llm.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    StopReason,
    ToolCall,
    Usage,
)
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library


def text(words: str, *, stop: StopReason = "end_turn") -> ModelResponse:
    return ModelResponse(
        message=Message(role="assistant", text=words),
        stop_reason=stop,
        usage=Usage(input_tokens=10, output_tokens=5),
    )


def empty() -> ModelResponse:
    return text("")


def cut_off(words: str = "The answer is") -> ModelResponse:
    return text(words, stop="max_tokens")


def calls(*pairs: tuple[str, dict[str, Any]], stop: StopReason = "tool_use") -> ModelResponse:
    return ModelResponse(
        message=Message(
            role="assistant",
            tool_calls=tuple(
                ToolCall(id=f"call_{index}", name=name, arguments=arguments)
                for index, (name, arguments) in enumerate(pairs)
            ),
        ),
        stop_reason=stop,
        usage=Usage(input_tokens=10, output_tokens=5),
    )


def unreadable(raw: str) -> dict[str, Any]:
    """Arguments as the providers hand over a string that is not a JSON object."""
    return {"_raw": raw}


class CannedModel:
    """Answers with `replies` in order (the last one again once they are spent) and keeps
    every request."""

    def __init__(self, replies: Sequence[ModelResponse]) -> None:
        self.replies = list(replies)
        self.name = "canned"
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.replies[min(len(self.requests), len(self.replies)) - 1]

    async def aclose(self) -> None:
        return None

    def last_messages(self, call: int) -> list[Message]:
        """The messages model call `call` (1-based) carried after the last assistant one."""
        messages = list(self.requests[call - 1].messages)
        last = max(i for i, m in enumerate(messages) if m.role == "assistant")
        return messages[last + 1 :]


def _services(tmp_path: Path, model: CannedModel) -> tuple[AgentServices, FakeSandbox]:
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = FakeSandbox(store)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=model,
        model="canned",
        sandbox=sandbox,  # type: ignore[arg-type]
    )
    return services, sandbox


async def run(
    tmp_path: Path, *replies: ModelResponse, spec: AgentSpec | None = None
) -> tuple[RunResult, CannedModel, FakeSandbox, list[str]]:
    """One run to its end; its result, the model, the sandbox and the ``model_called``
    details."""
    model = CannedModel(replies)
    services, sandbox = _services(tmp_path, model)
    engine = DirectEngine(services)
    run_id = await engine.start(RunRequest(run_id="run-1", task="Go.", agent=spec or AgentSpec()))
    events = [event async for event in engine.events(run_id)]
    details = [e.detail for e in events if e.kind == "model_called"]
    return await engine.result(run_id), model, sandbox, details


def _refusals(model: CannedModel, call: int) -> list[str]:
    return [m.text for m in model.last_messages(call) if m.role == "tool" and m.is_error]


# --- replies that are no answer ---------------------------------------------------------------


async def test_an_empty_reply_is_asked_again_and_the_next_answer_ends_the_run(
    tmp_path: Path,
) -> None:
    result, model, _, details = await run(tmp_path, empty(), text("Done."))

    assert (result.status, result.answer) == ("completed", "Done.")
    assert result.turns == 2
    (note,) = model.last_messages(2)
    assert note.role == "user"
    assert note.text.startswith("Your last reply was empty: no text and no tool call.")
    assert details == ["an empty reply", "answer"]


async def test_empty_replies_in_a_row_fail_the_run_after_a_bounded_count(tmp_path: Path) -> None:
    result, model, _, _ = await run(tmp_path, empty())

    assert result.status == "failed"
    assert result.reason == (
        "empty reply: the model answered with no text and no tool call, 3 times in a row"
    )
    assert result.answer is None
    assert len(model.requests) == result.turns == REPLY_RETRIES + 1


async def test_an_answer_cut_off_at_the_output_limit_is_not_the_answer(tmp_path: Path) -> None:
    result, model, _, details = await run(tmp_path, cut_off(), text("42."))

    assert (result.status, result.answer) == ("completed", "42.")
    (note,) = model.last_messages(2)
    assert "cut off at the output limit (4096 tokens)" in note.text
    assert details == ["an answer cut off at the output limit", "answer"]


async def test_answers_cut_off_in_a_row_fail_the_run_as_truncated(tmp_path: Path) -> None:
    spec = AgentSpec(limits=Budgets(max_output_tokens=64))
    result, model, _, _ = await run(tmp_path, cut_off(), spec=spec)

    assert result.status == "failed"
    assert result.reason == (
        "truncated: the model's reply was cut off at the output limit (64 tokens), 3 times in a row"
    )
    assert result.answer is None
    assert len(model.requests) == REPLY_RETRIES + 1


async def test_the_count_is_of_replies_in_a_row(tmp_path: Path) -> None:
    result, _, _, details = await run(
        tmp_path,
        empty(),
        empty(),
        calls(("activate_skill", {"name": "notes"})),
        empty(),
        cut_off(),
        text("Noted."),
    )

    assert (result.status, result.answer) == ("completed", "Noted."), result.reason
    assert result.turns == 6
    assert details[2] == "1 tool call"


# --- arguments ---------------------------------------------------------------------------------


async def test_unreadable_arguments_are_refused_with_what_was_wrong_with_the_json(
    tmp_path: Path,
) -> None:
    raw = '{"skill": "notes", "path": "refer'
    result, model, _, details = await run(
        tmp_path,
        calls(("activate_skill", {"name": "notes"})),
        calls(("read_skill_resource", unreadable(raw)), stop="max_tokens"),
        calls(("activate_skill", unreadable("[1, 2]"))),
        text("ok"),
    )

    assert result.status == "completed", result.reason
    (truncated,) = _refusals(model, 3)
    assert truncated.startswith(
        "Your arguments were not valid JSON: Unterminated string starting at: line 1 column 28"
        " (char 27). read_skill_resource was not run;"
    )
    assert "cut off at the output token limit" in truncated
    assert repr(raw) in truncated
    assert "needs 'skill'" not in truncated  # what it was told before, though skill was sent
    (not_object,) = _refusals(model, 4)
    assert "not valid JSON: they are a JSON array, not an object" in not_object
    assert "cut off" not in not_object
    assert details[1] == "1 tool call (cut off at the output limit)"


async def test_an_executable_tools_bad_arguments_never_reach_its_script(tmp_path: Path) -> None:
    result, model, sandbox, _ = await run(
        tmp_path,
        calls(("activate_skill", {"name": "shouter"})),
        calls(
            ("shout", unreadable('{"word": "hel')),
            ("shout", {"wrd": "hello"}),
            ("shout", {"word": 5}),
        ),
        calls(("shout", {"word": "hello"})),
        text("ok"),
    )

    assert result.status == "completed", result.reason
    json_error, misnamed, mistyped = _refusals(model, 3)
    assert json_error.startswith("Your arguments were not valid JSON: Unterminated string")
    assert misnamed == (
        "Your arguments to shout do not match its schema: 'word' is a required"
        " property. It was not run; call it again with arguments that match the schema."
    )
    assert "'word': 5 is not of type 'string'" in mistyped
    # Only --help-json (at activation) and the good call reached a sandbox; one script run.
    help_run, tool_run = sandbox.requests
    assert help_run.args == ["--help-json"]
    assert tool_run.args == ["--run-json", '{"word": "hello"}']
    assert result.script_runs == 1


async def test_an_argument_a_builtin_tool_does_not_take_is_refused(tmp_path: Path) -> None:
    result, model, sandbox, _ = await run(
        tmp_path,
        calls(("activate_skill", {"name": "toolkit"})),
        calls(("activate_skill", {"name": "profiler"})),
        calls(
            (
                "run_skill_script",
                {"skill": "profiler", "script": "scripts/count.py", "timeout": 5},
            ),
            ("activate_skill", {"name": "nosuch"}),  # enum: still the rule's own words
        ),
        text("ok"),
    )

    assert result.status == "completed", result.reason
    extra, unknown = _refusals(model, 4)
    assert "Additional properties are not allowed ('timeout' was unexpected)" in extra
    assert unknown.startswith("Skill 'nosuch' cannot be activated now.")
    assert sandbox.requests == []
    assert result.script_runs == 0


async def test_a_script_the_manager_refuses_is_no_run_of_the_budget(tmp_path: Path) -> None:
    missing = ("run_skill_script", {"skill": "profiler", "script": "scripts/nope.py"})
    result, model, _, _ = await run(
        tmp_path,
        calls(("activate_skill", {"name": "toolkit"})),
        calls(("activate_skill", {"name": "profiler"})),
        calls(missing, ("no_such_tool", {})),
        calls(missing),
        text("ok"),
        spec=AgentSpec(limits=Budgets(max_script_runs=1)),
    )

    assert (result.status, result.script_runs) == ("completed", 0), result.reason
    refused, unknown = _refusals(model, 4)
    assert "script 'scripts/nope.py' is not in skill 'profiler'" in refused
    assert unknown.startswith("There is no tool named 'no_such_tool'.")
    assert ScriptOutcome(seq=1, chars=0, summary="", status="error").ran  # old results: runs
