"""The agent spec's docstring example is a spec: it parses, and shows what a spec may say,
``name@VERSION`` pins in ``skills`` and ``acquisition`` among it."""

from __future__ import annotations

import textwrap

from skillweave.agent import spec
from skillweave.agent.spec import parse_agent_spec
from skillweave.skills import parse_pin


def _example() -> str:
    doc = spec.__doc__ or ""
    block = doc.split("::\n", 1)[1].split("\n\n", 1)[0]
    return textwrap.dedent(block)


def test_the_docstring_example_parses_and_pins_a_version() -> None:
    parsed = parse_agent_spec(_example(), source="agent.spec docstring")
    assert parsed.skills is not None
    pins = [parse_pin(entry) for entry in parsed.skills]
    assert any(pin.version is not None for pin in pins)


def test_the_docstring_example_turns_acquisition_on() -> None:
    parsed = parse_agent_spec(_example(), source="agent.spec docstring")
    assert parsed.acquisition.enabled
    assert parsed.acquisition.registries
    assert "acquisition" in _example()
