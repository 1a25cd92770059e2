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
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skillweave.closable import Closable
from skillweave.errors import ConfigError, ScriptedModelError
from skillweave.llm.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage

__all__ = [
    "ResultExpectation",
    "ScriptedExpectation",
    "ScriptedProvider",
    "ScriptedToolCall",
    "ScriptedTurn",
    "ScriptedUsage",
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


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScriptedToolCall(_Strict):
    """A tool call the scripted model makes; ``id`` defaults to ``call_<turn>_<n>``."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1)


class ResultExpectation(_Strict):
    """What one received tool result must look like; every key given must hold."""

    contains: str | None = None
    matches: str | None = None
    is_error: bool | None = None
    not_error: bool | None = None

    @field_validator("matches")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return pattern

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


class _Script(_Strict):
    model: str = Field(default=DEFAULT_SCRIPTED_MODEL, min_length=1)
    turns: tuple[ScriptedTurn, ...] = Field(min_length=1)


class ScriptedProvider(Closable):
    """A :class:`~skillweave.llm.ModelProvider` that replays scripted turns.

    Args:
        turns: the assistant turns, in order.
        model: reported as the model name.
    """

    def __init__(
        self, turns: Sequence[ScriptedTurn], *, model: str = DEFAULT_SCRIPTED_MODEL
    ) -> None:
        self.turns = tuple(turns)
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
                f"turns), not {type(data).__name__}"
            )
        try:
            script = _Script.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{source}: {_validation_problem(exc)}") from None
        named = "model" in data or model is None
        return cls(script.turns, model=script.model if named else model)

    @property
    def name(self) -> str:
        """``scripted:<model>``."""
        return f"scripted:{self.model}"

    def __repr__(self) -> str:
        return f"ScriptedProvider(model={self.model!r}, turns={len(self.turns)})"

    async def aclose(self) -> None:
        """Nothing to release."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Play the turn numbered after the assistant messages in `request`.

        Raises:
            ScriptedModelError: no such turn, a failed expectation, or a placeholder with
                nothing to fill it.
        """
        number = 1 + sum(1 for message in request.messages if message.role == "assistant")
        if number > len(self.turns):
            count = len(self.turns)
            raise ScriptedModelError(
                f"scripted model has no turn {number}; the script has {count} "
                f"turn{'' if count == 1 else 's'}"
            )
        turn = self.turns[number - 1]
        if turn.delay_seconds > 0:
            await asyncio.sleep(turn.delay_seconds)
        if turn.expect is not None:
            _check(turn.expect, request, number)
        fill = _Filler(request.messages, number)
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


class _Filler:
    """Replaces the placeholders of one turn from the messages that turn received."""

    def __init__(self, messages: Sequence[Message], turn: int) -> None:
        self._messages = messages
        self._turn = turn

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
            f"scripted model, turn {self._turn}: {{{{last_result}}}} but no tool result "
            "was received"
        )

    def _artifact(self, name: str) -> str:
        pattern = _artifact_key_pattern(name)
        for message in reversed(self._messages):
            keys = pattern.findall(message.text)
            if keys:
                return str(keys[-1])
        raise ScriptedModelError(
            f"scripted model, turn {self._turn}: {{{{artifact:{name}}}}} matches no artifact "
            f"key ending in '/{name}' in the messages received"
        )


def _artifact_key_pattern(name: str) -> re.Pattern[str]:
    segment = f"[^{_KEY_BOUNDARY}/]+"
    return re.compile(
        f"(?:^|(?<=[{_KEY_BOUNDARY},=:]))"
        f"(runs/[A-Za-z0-9._-]+(?:/{segment})*?/{re.escape(name)})"
        f"(?=[.,;:!?]*(?:[{_KEY_BOUNDARY}]|$))"
    )


def _check(expect: ScriptedExpectation, request: ModelRequest, turn: int) -> None:
    offered = [tool.name for tool in request.tools]
    missing = [name for name in expect.tools_include if name not in offered]
    if missing:
        raise ScriptedModelError(
            f"scripted model, turn {turn}: expected the tools {missing} to be offered; "
            f"offered: {offered or 'none'}"
        )
    unwanted = [name for name in expect.tools_exclude if name in offered]
    if unwanted:
        raise ScriptedModelError(
            f"scripted model, turn {turn}: expected the tools {unwanted} not to be offered; "
            f"offered: {offered}"
        )
    results = _latest_results(request.messages)
    for index, expected in enumerate(expect.tool_results, start=1):
        if index > len(results):
            shown = [_shown(result.text) for result in results]
            raise ScriptedModelError(
                f"scripted model, turn {turn}: expected {len(expect.tool_results)} tool "
                f"result(s), got {len(results)}: {shown}"
            )
        result = results[index - 1]
        problem = _mismatch(expected, result)
        if problem:
            raise ScriptedModelError(
                f"scripted model, turn {turn}: expected tool result {index} "
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
    if len(loc) >= 2 and loc[0] == "turns" and isinstance(loc[1], int):
        parts.append(f"turn {loc[1] + 1}")
        loc = loc[2:]
    if loc:
        parts.append(".".join(str(part) for part in loc))
    message = first["msg"].removeprefix("Value error, ")
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return ": ".join([*parts, message]) + tail
