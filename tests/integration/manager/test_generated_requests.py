"""Generated output names and arguments through a real manager and real executors: every
name a file system accepts comes back as an output under that exact name (or is reported as
skipped, with why), every argument reaches the script unchanged, and text no program can
receive is refused before the id is claimed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillweave.errors import ExecutionRejectedError
from tests.integration.harness import StartManager
from tests.integration.manager.test_manager import pool_back_at_target

pytestmark = pytest.mark.timeout(300)

_NAME = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=40,
).filter(lambda name: name not in {".", ".."})
_ARG = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


def _cases() -> list[tuple[list[str], list[str]]]:
    """Hypothesis's examples, drawn ahead (each is a real execution: shrinking a failure
    against the manager would take too long; the failing case is in the assertion)."""
    drawn: list[tuple[list[str], list[str]]] = []

    @settings(max_examples=24, derandomize=True, database=None, deadline=None)
    @given(st.lists(_NAME, min_size=1, max_size=4, unique=True), st.lists(_ARG, max_size=4))
    def draw(names: list[str], args: list[str]) -> None:
        drawn.append((names, args))

    draw()
    return drawn


async def test_generated_names_and_args_round_trip(start_manager: StartManager) -> None:
    manager = await start_manager(pool_target=2)
    for number, (names, args) in enumerate(_cases()):
        body = manager.request(
            "scripts/names.py",
            execution_id=f"generated/{number}",
            args=[json.dumps(names), *args],
        )
        result = await manager.client.execute(body)
        case = f"case {number}: names {names!r}, args {args!r}"
        assert result.status == "succeeded", f"{case}: {result.error} {result.stderr}"
        assert json.loads(result.stdout) == args, case
        kept = {output.path: output.ref for output in result.outputs}
        skipped = {item.path: item.reason for item in result.skipped_outputs}
        shown = {_shown(name): name for name in names}
        assert set(kept) | set(skipped) == set(shown), case
        for name, ref in kept.items():
            index = names.index(name)
            assert await manager.store.get_bytes(ref) == str(index).encode(), case
        for name, reason in skipped.items():
            expected = "control character" if name != shown[name] else "255"
            assert expected in reason, f"{case}: {name!r} skipped: {reason}"
    await pool_back_at_target(manager)
    assert manager.backend.runs == len(_cases())


def _shown(name: str) -> str:
    """A name as a skipped output shows it: control characters as ``\\xNN`` (no key can
    carry them, so such a name is always skipped)."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)


@pytest.mark.parametrize("arg", ["\ud800", "a\udfffb", "x\x00y"])
async def test_text_no_program_can_receive_is_refused_before_the_claim(
    start_manager: StartManager, arg: str
) -> None:
    manager = await start_manager(pool_target=0)
    body = manager.request("scripts/names.py", execution_id="refused/arg", args=["[]", arg])
    with pytest.raises(ExecutionRejectedError) as refused:
        await manager.client.execute(body)
    assert refused.value.status_code == 400
    assert manager.backend.runs == 0
    ok = manager.request("scripts/names.py", execution_id="refused/arg", args=["[]"])
    assert (await manager.client.execute(ok)).status == "succeeded"
