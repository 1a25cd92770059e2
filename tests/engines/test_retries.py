"""One retry rule for both engines (``skillweave.engines.retries``).

The property: for every class in the error tree, with any data it carries, the Temporal
engine (the activity's ``ApplicationError`` under the workflow's retry policy) and the direct
engine (its own retry loop) decide the same: retried or not, and after how long.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
import pkgutil
import textwrap
import typing
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sandbox_executor
import skillweave
from activities.failures import application_error
from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import RecordInput, SearchInput, TranscriptWrite
from skillweave.agent.effects import RECORD_TRANSCRIPT, SEARCH_SKILLS
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.contract import ActivityTimeouts
from skillweave.engines.direct import DirectRuntime, call_retrying
from skillweave.engines.retries import Backoff, Retry, classify
from skillweave.errors import (
    ModelError,
    SandboxError,
    SandboxLostError,
    SandboxStartError,
    SkillweaveError,
    StorageError,
)
from skillweave.llm.messages import Message
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library
from workflows.runtime import retry_policy


def _import_everything() -> None:
    """Import every module that may define an error class, so the tree is complete."""
    for package in (skillweave, sandbox_executor):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)


def _tree(root: type[SkillweaveError]) -> Iterator[type[SkillweaveError]]:
    yield root
    for child in root.__subclasses__():
        yield from _tree(child)


_import_everything()
ERROR_CLASSES = sorted(set(_tree(SkillweaveError)), key=lambda c: (c.__module__, c.__name__))


def _values(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a constructor parameter's type, hostile ones included (negative, huge and
    non-finite waits)."""
    if hint is float:
        return st.floats(allow_nan=True, allow_infinity=True)
    if hint is int:
        return st.integers(min_value=-(10**9), max_value=10**9)
    args = typing.get_args(hint)
    if type(None) in args:
        others = [a for a in args if a is not type(None)]
        return st.none() | st.one_of(*(_values(a) for a in others))
    if typing.get_origin(hint) is typing.Literal:
        return st.sampled_from(args)
    return st.from_type(hint)


def _instances(cls: type[SkillweaveError]) -> st.SearchStrategy[SkillweaveError]:
    hints = typing.get_type_hints(cls.__init__)
    parameters = inspect.signature(cls.__init__).parameters
    positional, keywords = [], {}
    for name, parameter in list(parameters.items())[1:]:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        values = _values(hints.get(name, str))
        if parameter.kind is parameter.KEYWORD_ONLY:
            keywords[name] = values
        else:
            positional.append(values)
    return st.builds(cls, *positional, **keywords)


class _Decision(typing.NamedTuple):
    again: bool
    wait: float | None


def _temporal_decision(exc: SkillweaveError) -> _Decision:
    """What Temporal does after the activity raised `exc`'s ``ApplicationError`` once."""
    error = application_error(exc)
    if error.non_retryable:
        return _Decision(again=False, wait=None)
    policy = retry_policy(ActivityTimeouts())
    assert policy.maximum_attempts >= 2
    delay = error.next_retry_delay
    if delay is None:
        assert policy.initial_interval is not None
        delay = policy.initial_interval
    assert isinstance(delay, timedelta)
    return _Decision(again=True, wait=delay.total_seconds())


async def _direct_decision(exc: SkillweaveError) -> _Decision:
    """What the direct engine does after its call raised `exc` once."""
    waits: list[float] = []
    calls = 0

    async def call() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise exc
        return "ok"

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("skillweave.engines.direct.asyncio.sleep", sleep)
        try:
            await call_retrying(call, backoff=Backoff())
        except SkillweaveError as raised:
            failed = raised
        else:
            failed = None
    if failed is not None:
        assert failed is exc
        assert calls == 1
        return _Decision(again=False, wait=None)
    assert calls == 2
    return _Decision(again=True, wait=waits[0])


def test_the_tree_is_all_there() -> None:
    names = {cls.__name__ for cls in ERROR_CLASSES}
    # Defined outside skillweave.errors: found only if every module was imported.
    assert {"RemoteApiError", "NoWorkerError", "IsolationUnavailableError"} <= names
    assert len(ERROR_CLASSES) >= 40


def test_every_class_is_drawn_in_the_tree_of_the_errors_module() -> None:
    import skillweave.errors

    missing = [c.__name__ for c in ERROR_CLASSES if c.__name__ not in skillweave.errors.__doc__]
    assert missing == []


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_both_engines_make_the_same_retry_decision(
    cls: type[SkillweaveError], data: st.DataObject
) -> None:
    exc = data.draw(_instances(cls))
    temporal = _temporal_decision(exc)
    direct = asyncio.run(_direct_decision(exc))
    assert temporal.again == direct.again, exc
    if temporal.again:
        assert temporal.wait is not None
        assert direct.wait is not None
        assert math.isclose(temporal.wait, direct.wait, abs_tol=1e-6), (exc, temporal, direct)
        assert 0 <= direct.wait <= Backoff().maximum


@pytest.mark.parametrize(
    ("exc", "decision"),
    [
        (ModelError("rate limited", retryable=True, retry_after=3.0), Retry(True, 3.0)),
        (ModelError("bad key", status=401), Retry(False)),
        (SandboxLostError("k", "pod deleted"), Retry(True, 0.0)),
        (SandboxError("manager restarting"), Retry(True)),
        (SandboxStartError("slow node"), Retry(True)),
        (SandboxStartError("no bubblewrap", permanent=True), Retry(False)),
        (StorageError("S3 blinked"), Retry(True)),
        (OSError("connection reset"), Retry(True)),
        (SkillweaveError("a bug of ours"), Retry(False)),
    ],
    ids=repr,
)
def test_the_rule(exc: BaseException, decision: Retry) -> None:
    assert classify(exc) == decision


def test_the_back_off_grows_and_is_capped_and_survives_odd_hints() -> None:
    backoff = Backoff()
    assert [backoff.delay(Retry(True), n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert backoff.delay(Retry(True), 20) == 60.0
    assert backoff.delay(Retry(True, 999.0), 1) == 60.0
    assert backoff.delay(Retry(True, -5.0), 1) == 0.0
    assert backoff.delay(Retry(True, math.nan), 2) == 2.0
    assert backoff.delay(Retry(True, math.inf), 1) == 60.0


class _FailingOnce:
    """Wraps a services method: its first call fails with `error`, later ones go through."""

    def __init__(self, method: Any, error: Exception) -> None:
        self.method, self.error, self.calls = method, error, 0

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return await self.method(*args, **kwargs)


async def test_the_direct_engine_retries_every_side_effect_call(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=RecordingProvider(
            ScriptedProvider.from_yaml(
                textwrap.dedent(
                    """
                    turns:
                      - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
                      - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
                      - tool_calls:
                          - {name: read_skill_resource,
                             arguments: {skill: profiler, path: references/guide.md}}
                      - tool_calls:
                          - {name: run_skill_script,
                             arguments: {skill: profiler, script: scripts/count.py,
                                         args: [scripts/count.py]}}
                      - say: done
                    """
                )
            )
        ),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    failing = {
        name: _FailingOnce(getattr(services, name), StorageError(f"{name}: the store blinked"))
        for name in (
            "prepare_catalog",
            "invoke_model",
            "load_skill",
            "run_skill_script",
        )
    }
    for name, wrapper in failing.items():
        setattr(services, name, wrapper)
    # The read rides with the next model call (which does it first): its failure is that
    # call's, and tried again with it.
    read = _FailingOnce(services.resources.answer, StorageError("read: the store blinked"))
    services.resources.answer = read  # type: ignore[method-assign]
    engine = DirectEngine(services, backoff=Backoff(initial=0.001, maximum=0.01))
    await engine.start(RunRequest(run_id="retries", task="count", agent=AgentSpec()))
    result = await engine.result("retries")
    assert result.status == "completed", result.reason
    # Each call's first attempt failed and was tried again: none of them failed the run.
    assert {name: wrapper.calls >= 2 for name, wrapper in failing.items()} == dict.fromkeys(
        failing, True
    )
    assert read.calls == 2


async def test_the_direct_runtime_retries_searches_and_records_too(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml("turns: [{say: unused}]"),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    search = _FailingOnce(services.search_skills, SandboxError("manager restarting"))
    record = _FailingOnce(services.record_transcript, StorageError("the store blinked"))
    services.search_skills = search  # type: ignore[method-assign]
    services.record_transcript = record  # type: ignore[method-assign]
    runtime = DirectRuntime(services, backoff=Backoff(initial=0.001))
    found = await runtime.call(
        SEARCH_SKILLS, SearchInput(run_id="r1", query="count words", seq=1, tool_call_id="call-1")
    )
    write = TranscriptWrite(seq=2, message=Message(role="user", text="hi"))
    await runtime.call(RECORD_TRANSCRIPT, RecordInput(run_id="r1", writes=(write,)))
    assert (search.calls, record.calls) == (2, 2)
    assert found.seq == 1
