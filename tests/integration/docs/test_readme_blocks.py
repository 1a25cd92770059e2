"""The README is a tested contract: every code block of README.md, examples/demo/README.md and
deploy/README.md runs (or is checked) the way its marker says, with the real ``skillweave`` of
this venv, in a fresh HOME and folder, in document order, against an ephemeral stack (a real
``skillweave dev`` and ``skillweave api`` on free ports) where a block needs one. The harness
and its conventions: tests/docs/readme_blocks.py."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.readme_blocks import (
    Block,
    Session,
    all_blocks,
    check_parses,
    expected_in,
    synopsis_commands,
)

pytestmark = pytest.mark.timeout(1800)

BLOCKS = all_blocks()
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    with Session.open(venv_bin=VENV_BIN) as opened:
        yield opened


def _run(session: Session, block: Block) -> None:
    """Run one block its marker's way; AssertionError says what failed, with the output."""
    session.ran.add(block.id)
    if block.mode == "parses":
        check_parses(block)
        return
    if block.mode == "synopsis":
        _check_synopsis(session, block)
        return
    assert block.mode in ("offline", "stack"), block
    if block.mode == "stack":
        session.ensure_stack()
    done = session.execute(block)
    assert done.returncode == 0, (
        f"{block.id} exited {done.returncode} after {done.seconds:.1f} s:\n{done.output}"
    )
    missing = expected_in(done.output, block.expected())
    assert missing is None, f"{block.id} did not print {missing!r}:\n{done.output}"


def _check_synopsis(session: Session, block: Block) -> None:
    lines = synopsis_commands(block)
    assert lines, f"{block.id}: a synopsis block with no `skillweave` line"
    for path, options in lines:
        done = subprocess.run(
            [str(VENV_BIN / "skillweave"), *path, "--help"],
            cwd=session.cwd,
            env=session.environment(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"{block.id}: skillweave {' '.join(path)}: {done.stderr}"
        unknown = [option for option in options if option not in done.stdout]
        assert unknown == [], f"{block.id}: skillweave {' '.join(path)} has no {unknown}"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_the_block_does_what_the_docs_say(session: Session, block: Block) -> None:
    assert block.problem == "", f"{block.id}: {block.problem}"
    if block.mode == "skip":
        pytest.skip(f"{block.id}: {block.reason}")
    # Blocks build on the ones above them, as for a reader going down the page: run the
    # earlier ones first when this one was picked alone.
    for earlier in BLOCKS[: BLOCKS.index(block)]:
        if earlier.id not in session.ran and earlier.mode not in ("skip", None):
            with contextlib.suppress(AssertionError):  # reported by its own test
                _run(session, earlier)
    _run(session, block)
