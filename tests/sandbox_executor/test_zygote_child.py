"""A child the zygote forks dies with that zygote: the first thing it does is ask the kernel
for it, naming the zygote's pid taken before the fork. (Asked later with ``getppid()``, a
zygote killed in between made the child ask to die with init: an executor that lived on.)"""

from __future__ import annotations

import pytest

from sandbox_executor import zygote as zygote_module
from skillweave.sandbox.zygote_protocol import Spawn


def test_a_child_asks_to_die_with_its_zygote_before_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []

    def die_with(parent: int) -> None:
        asked.append(parent)
        raise SystemExit(f"error: the parent process {parent} is gone")

    def no_side_effect(*_: object) -> None:
        raise AssertionError("the child did something before it asked to die with its zygote")

    monkeypatch.setattr(zygote_module.executor_main, "die_with", die_with)
    monkeypatch.setattr(zygote_module.signal, "set_wakeup_fd", no_side_effect)
    monkeypatch.setattr(zygote_module.os, "setsid", no_side_effect)
    child = object.__new__(zygote_module._Zygote)
    with pytest.raises(SystemExit, match="12345 is gone"):
        child._become_executor(Spawn(id="a1", workdir="/nowhere"), set(), zygote=12345)
    assert asked == [12345]
