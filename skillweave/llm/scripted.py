"""The scripted model: replays a YAML script of assistant turns (tests and the offline demo).

It needs no network and no API key, and says so in its name (``scripted:<model>``). Each call
answers with the turn numbered after the assistant messages already in the request: the first
call (no assistant message yet) plays turn 1, a request holding two assistant messages plays
turn 3. Replay is therefore stateless and deterministic, the same request always gets the same
answer, which matters because Temporal may run a model call more than once.

Script format::

    model: scripted-demo            # optional (default "scripted"), reported as the model
    turns:
      - say: "optional assistant text"
        tool_calls:                 # optional
          - name: activate_skill
            arguments: {name: data-toolkit}
            id: call_x              # optional; default "call_<turn>_<n>", both from 1
        expect:                     # optional assertions on what this call RECEIVED
          tool_results:             # the tool messages since the last assistant message
            - contains: "skill_content"     # the 1st result contains this substring
            - not_error: true               # the 2nd is not an error (or is_error: true)
            - matches: "rows: \\d+"         # the 3rd matches this regex (re.search)
          tools_include: [render_stats_report]   # tools that must be offered
          tools_exclude: [run_skill_script]      # tools that must not be
        usage: {input_tokens: 100, output_tokens: 20}   # optional; default: an estimate
        delay_seconds: 2.5          # optional: think this long before answering (a slow model)
      - say: "Done: {{last_result}}"

One expectation item may combine keys (all must hold); ``{}`` only asks that the result exists.
Without ``usage`` the turn reports a deterministic estimate: a token per four characters of the
request (system prompt, messages, tool specs) and of the reply. ``delay_seconds`` makes the
call take that long (a cancellable sleep before the answer), so tests can stop a worker while a
model call is in flight.

Placeholders, replaced in ``say`` and in every string inside ``arguments`` (nested in mappings
and lists too). Quote strings that hold them: unquoted ``{{`` opens a YAML mapping.

- ``{{artifact:NAME}}``: the most recent artifact key in the received messages (any role) that
  ends in ``/NAME``, such as ``runs/<run>/inputs/sales.csv`` for ``{{artifact:sales.csv}}`` or
  ``runs/<run>/executions/<hex>/outputs/stats.json`` for ``{{artifact:stats.json}}``. A key is a
  ``runs/...`` token standing between whitespace, quotes, backticks or brackets (trailing
  sentence punctuation is allowed). No such key is a :class:`ScriptedModelError`.
- ``{{last_result}}``: the whole text of the most recent tool result.

Other ``{{...}}`` text is left alone. A request past the last turn, a failed expectation or a
placeholder with nothing to fill it raises :class:`ScriptedModelError` naming the turn; a
script that cannot be read or has the wrong shape is a :class:`ConfigError` naming the file
and the field.

Per-task scripts (a playbook: one script answering several tasks, such as an eval suite's
prompts with and without the skill) give ``cases:`` instead of ``turns:``::

    cases:
      - when:
          task: 'Convert [0-9]+ km'     # re.search'ed in the request's first user message
          offered: [unit-converter]     # each of these skills is offered ...
          not_offered: [log-triage]     # ... and none of these
        turns:                          # the case's turns, numbered as above
          - tool_calls: [{name: activate_skill, arguments: {name: unit-converter}}]
          - say: "5 km is 3.107 miles"
      - when: {}                        # an empty `when` holds for every request
        turns: [{say: "I cannot tell."}]

A request plays the FIRST case whose ``when`` holds (every key given must). A skill is offered
when the system prompt's catalog lists it (``<skill name="NAME"``) or the ``activate_skill``
tool's ``name`` enum holds it. A request that no case matches is a
:class:`ScriptedModelError` naming the start of its task; ``turns:`` and ``cases:`` together
are a :class:`ConfigError`. Each case is chosen from the request alone, so replay stays
stateless.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skillweave.closable import Closable
from skillweave.errors import ConfigError, ScriptedModelError
from skillweave.llm.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage

__all__ = [
    "ResultExpectation",
    "ScriptedCase",
    "ScriptedExpectation",
    "ScriptedProvider",
    "ScriptedToolCall",
    "ScriptedTurn",
    "ScriptedUsage",
    "ScriptedWhen",
]

DEFAULT_SCRIPTED_MODEL: Final = "scripted"
CHARS_PER_TOKEN: Final = 4
"""The usage estimate's rate when a turn gives no ``usage``."""

_SHOWN_CHARS: Final = 200
_PLACEHOLDER: Final = re.compile(
    r"\{\{\s*(?:artifact:\s*(?P<artifact>[^{}\s]+)|(?P<last_result>last_result))\s*\}\}"
)
# What may stand on either side of an artifact key in a message text.
_KEY_BOUNDARY: Final = r"""\s"'`()\[\]{}<>"""
_CATALOG_ENTRY: Final = re.compile(r"""<skill name=(["'])(?P<name>[^"'<>]+)\1""")
_ACTIVATE_SKILL: Final = "activate_skill"
_TASK_SHOWN_CHARS: Final = 80


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScriptedToolCall(_Strict):
    """A tool call the scripted model makes; ``id`` defaults to ``call_<turn>_<n>``."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1)


def _regex(pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


class ResultExpectation(_Strict):
    """What one received tool result must look like; every key given must hold."""

    contains: str | None = None
    matches: str | None = None
    is_error: bool | None = None
    not_error: bool | None = None

    @field_validator("matches")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        return _regex(pattern)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.is_error is not None and self.is_error == self.not_error:
            raise ValueError("is_error and not_error contradict each other")
        return self

    @property
    def expected_error(self) -> bool | None:
        """Whether the result must be an error (True), must not be (False), or either (None)."""
        if self.is_error is not None:
            return self.is_error
        return None if self.not_error is None else not self.not_error


class ScriptedExpectation(_Strict):
    """Assertions on what a scripted turn received."""

    tool_results: tuple[ResultExpectation, ...] = ()
    tools_include: tuple[str, ...] = ()
    tools_exclude: tuple[str, ...] = ()


class ScriptedUsage(_Strict):
    """The usage a scripted turn reports."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class ScriptedTurn(_Strict):
    """One assistant turn of a script."""

    say: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    expect: ScriptedExpectation | None = None
    usage: ScriptedUsage | None = None
    delay_seconds: float = Field(default=0.0, ge=0, le=3_600)


_Turns = Annotated[tuple[ScriptedTurn, ...], Field(min_length=1)]


class ScriptedWhen(_Strict):
    """When a case plays: every key given must hold for the request."""

    task: str | None = Field(default=None, description="A regex searched in the task.")
    offered: tuple[str, ...] = Field(default=(), description="Skills that must be offered.")
    not_offered: tuple[str, ...] = Field(default=(), description="Skills that must not be.")

    @field_validator("task")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        return _regex(pattern)

    def holds(self, task: str, offered: frozenset[str]) -> bool:
        """Whether a request with this `task` offering these skills plays the case."""
        return (
            (self.task is None or re.search(self.task, task) is not None)
            and all(name in offered for name in self.offered)
            and not any(name in offered for name in self.not_offered)
        )


class ScriptedCase(_Strict):
    """The turns a script plays for the requests its ``when`` holds for."""

    when: ScriptedWhen
    turns: _Turns


class _Script(_Strict):
    model: str = Field(default=DEFAULT_SCRIPTED_MODEL, min_length=1)
    turns: _Turns | None = None
    cases: Annotated[tuple[ScriptedCase, ...], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if self.turns is not None and self.cases is not None:
            raise ValueError("'turns' and 'cases' together: give one of them")
        if self.turns is None and self.cases is None:
            raise ValueError(
                "'turns' (a list of assistant turns) or 'cases' (turns per task) is required"
            )
        return self


class ScriptedProvider(Closable):
    """A :class:`~skillweave.llm.ModelProvider` that replays scripted turns.

    Args:
        turns: the assistant turns, in order.
        model: reported as the model name.
        cases: instead of `turns`, the turns per task (the first case that holds plays).

    Raises:
        ConfigError: both `turns` and `cases`.
    """

    def __init__(
        self,
        turns: Sequence[ScriptedTurn] = (),
        *,
        model: str = DEFAULT_SCRIPTED_MODEL,
        cases: Sequence[ScriptedCase] = (),
    ) -> None:
        if turns and cases:
            raise ConfigError("a scripted model plays 'turns' or 'cases', not both")
        self.turns = tuple(turns)
        self.cases = tuple(cases)
        self.model = model

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """The provider replaying the script at `path` (UTF-8 YAML).

        Raises:
            ConfigError: the file cannot be read, is not YAML or is not a script.
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such model script") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read the model script: {exc}") from None
        # A script that names no model is known by its file: `scripted:counter`, not
        # `scripted:scripted`, in start-up lines, results and the run's record.
        return cls.from_yaml(text, source=str(path), model=Path(path).stem or None)

    @classmethod
    def from_yaml(
        cls, text: str, *, source: str = "<script>", model: str | None = None
    ) -> ScriptedProvider:
        """The provider replaying the script `text`; `source` names it in errors, and `model`
        is its model's name when the script names none (default ``scripted``).

        Raises:
            ConfigError: `text` is not YAML or not a script.
        """
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: not valid YAML: {_yaml_problem(exc)}") from None
        if not isinstance(data, dict):
            raise ConfigError(
                f"{source}: a model script is a mapping with 'turns' (a list of assistant "
                f"turns) or 'cases', not {type(data).__name__}"
            )
        try:
            script = _Script.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{source}: {_validation_problem(exc)}") from None
        named = "model" in data or model is None
        return cls(
            script.turns or (), model=script.model if named else model, cases=script.cases or ()
        )

    @property
    def name(self) -> str:
        """``scripted:<model>``."""
        return f"scripted:{self.model}"

    def __repr__(self) -> str:
        played = f"cases={len(self.cases)}" if self.cases else f"turns={len(self.turns)}"
        return f"ScriptedProvider(model={self.model!r}, {played})"

    async def aclose(self) -> None:
        """Nothing to release."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Play the turn numbered after the assistant messages in `request` (of the first
        case that holds for `request`, when the script has cases).

        Raises:
            ScriptedModelError: no case holds, no such turn, a failed expectation, or a
                placeholder with nothing to fill it.
        """
        number = 1 + sum(1 for message in request.messages if message.role == "assistant")
        where, turns, owner = f"turn {number}", self.turns, "the script"
        if self.cases:
            index, turns = self._case_for(request)
            where, owner = f"case {index}, turn {number}", f"case {index}"
        if number > len(turns):
            count = len(turns)
            raise ScriptedModelError(
                f"scripted model has no turn {number}; {owner} has {count} "
                f"turn{'' if count == 1 else 's'}"
            )
        turn = turns[number - 1]
        if turn.delay_seconds > 0:
            await asyncio.sleep(turn.delay_seconds)
        if turn.expect is not None:
            _check(turn.expect, request, where)
        fill = _Filler(request.messages, where)
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{number}_{index}",
                name=call.name,
                arguments=fill.value(call.arguments),
            )
            for index, call in enumerate(turn.tool_calls, start=1)
        )
        message = Message(role="assistant", text=fill.text(turn.say or ""), tool_calls=calls)
        usage = (
            Usage(input_tokens=turn.usage.input_tokens, output_tokens=turn.usage.output_tokens)
            if turn.usage is not None
            else _estimate(request, message)
        )
        return ModelResponse(
            message=message,
            stop_reason="tool_use" if calls else "end_turn",
            usage=usage,
            model=self.model,
        )

    def _case_for(self, request: ModelRequest) -> tuple[int, tuple[ScriptedTurn, ...]]:
        """The first case holding for `request` (numbered from 1) and its turns."""
        task = _task(request.messages)
        offered = _offered(request)
        for index, case in enumerate(self.cases, start=1):
            if case.when.holds(task, offered):
                return index, case.turns
        shown = task[:_TASK_SHOWN_CHARS] + ("…" if len(task) > _TASK_SHOWN_CHARS else "")
        raise ScriptedModelError(
            f"scripted model: no case holds for the task {shown!r} "
            f"(skills offered: {sorted(offered) or 'none'})"
        )


def _task(messages: Sequence[Message]) -> str:
    """The request's task: its first user message ("" without one)."""
    return next((message.text for message in messages if message.role == "user"), "")


def _offered(request: ModelRequest) -> frozenset[str]:
    """The skills `request` offers: listed in its system prompt's catalog, or in the
    ``activate_skill`` tool's ``name`` enum."""
    names = {match.group("name") for match in _CATALOG_ENTRY.finditer(request.system)}
    for tool in request.tools:
        if tool.name != _ACTIVATE_SKILL:
            continue
        properties = tool.input_schema.get("properties")
        name = properties.get("name") if isinstance(properties, dict) else None
        enum = name.get("enum") if isinstance(name, dict) else None
        if isinstance(enum, list):
            names.update(item for item in enum if isinstance(item, str))
    return frozenset(names)


class _Filler:
    """Replaces the placeholders of one turn from the messages that turn received."""

    def __init__(self, messages: Sequence[Message], where: str) -> None:
        self._messages = messages
        self._where = where

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value

    def text(self, text: str) -> str:
        return _PLACEHOLDER.sub(self._replacement, text)

    def _replacement(self, match: re.Match[str]) -> str:
        if name := match.group("artifact"):
            return self._artifact(name)
        for message in reversed(self._messages):
            if message.role == "tool":
                return message.text
        raise ScriptedModelError(
            f"scripted model, {self._where}: {{{{last_result}}}} but no tool result was received"
        )

    def _artifact(self, name: str) -> str:
        pattern = _artifact_key_pattern(name)
        for message in reversed(self._messages):
            keys = pattern.findall(message.text)
            if keys:
                return str(keys[-1])
        raise ScriptedModelError(
            f"scripted model, {self._where}: {{{{artifact:{name}}}}} matches no artifact "
            f"key ending in '/{name}' in the messages received"
        )


def _artifact_key_pattern(name: str) -> re.Pattern[str]:
    segment = f"[^{_KEY_BOUNDARY}/]+"
    return re.compile(
        f"(?:^|(?<=[{_KEY_BOUNDARY},=:]))"
        f"(runs/[A-Za-z0-9._-]+(?:/{segment})*?/{re.escape(name)})"
        f"(?=[.,;:!?]*(?:[{_KEY_BOUNDARY}]|$))"
    )


def _check(expect: ScriptedExpectation, request: ModelRequest, where: str) -> None:
    offered = [tool.name for tool in request.tools]
    missing = [name for name in expect.tools_include if name not in offered]
    if missing:
        raise ScriptedModelError(
            f"scripted model, {where}: expected the tools {missing} to be offered; "
            f"offered: {offered or 'none'}"
        )
    unwanted = [name for name in expect.tools_exclude if name in offered]
    if unwanted:
        raise ScriptedModelError(
            f"scripted model, {where}: expected the tools {unwanted} not to be offered; "
            f"offered: {offered}"
        )
    results = _latest_results(request.messages)
    for index, expected in enumerate(expect.tool_results, start=1):
        if index > len(results):
            shown = [_shown(result.text) for result in results]
            raise ScriptedModelError(
                f"scripted model, {where}: expected {len(expect.tool_results)} tool "
                f"result(s), got {len(results)}: {shown}"
            )
        result = results[index - 1]
        problem = _mismatch(expected, result)
        if problem:
            raise ScriptedModelError(
                f"scripted model, {where}: expected tool result {index} "
                f"({result.tool_name or 'unnamed'}) {problem}; got: {_shown(result.text)!r}"
            )


def _latest_results(messages: Sequence[Message]) -> list[Message]:
    """The tool messages after the last assistant message, in order."""
    results: list[Message] = []
    for message in reversed(messages):
        if message.role == "assistant":
            break
        if message.role == "tool":
            results.append(message)
    return results[::-1]


def _mismatch(expected: ResultExpectation, result: Message) -> str | None:
    if expected.contains is not None and expected.contains not in result.text:
        return f"to contain {expected.contains!r}"
    if expected.matches is not None and not re.search(expected.matches, result.text):
        return f"to match /{expected.matches}/"
    match expected.expected_error, result.is_error:
        case True, False:
            return "to be an error"
        case False, True:
            return "not to be an error"
        case _:
            return None


def _estimate(request: ModelRequest, reply: Message) -> Usage:
    prompt = len(request.system) + sum(_chars(message) for message in request.messages)
    prompt += sum(
        len(tool.name) + len(tool.description) + len(_json(tool.input_schema))
        for tool in request.tools
    )
    return Usage(input_tokens=_tokens(prompt), output_tokens=_tokens(_chars(reply)))


def _chars(message: Message) -> int:
    return len(message.text) + sum(
        len(call.name) + len(_json(call.arguments)) for call in message.tool_calls
    )


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    hint = " (quote values that hold {{...}} placeholders)" if "unhashable" in problem else ""
    return f"{problem}{where}{hint}"


def _validation_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = list(first["loc"])
    parts: list[str] = []
    # "cases.1.turns.0.say" reads "case 2: turn 1: say".
    while len(loc) >= 2 and loc[0] in ("cases", "turns") and isinstance(loc[1], int):
        parts.append(f"{str(loc[0])[:-1]} {loc[1] + 1}")
        loc = loc[2:]
    if loc:
        parts.append(".".join(str(part) for part in loc))
    message = first["msg"].removeprefix("Value error, ")
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return ": ".join([*parts, message]) + tail
