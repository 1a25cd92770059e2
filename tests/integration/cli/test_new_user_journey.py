"""The journey of a new user, through every door, as they would type it (issue 39's must-show).

One shell session (the README harness's :class:`~tests.docs.readme_blocks.Session`: a fresh
HOME, a clean environment, free ports, services started in the background as in another
terminal) walks it step by step, each step a script of the commands a user types:

1. install a skill from a folder; ``skills list`` shows it with its source; ``skills show``;
2. ``skillweave dev`` (the worker's model is the user's own scripted one), then ``skillweave
   run`` with no ``--engine``: the default engine is Temporal, and the run uses the installed
   skill;
3. ``skillweave api`` with no default model; an agent that names its own model and the
   installed skill is created and run through the API (``SKILLWEAVE_API_URL``);
4. ``skillweave runs show`` and ``runs artifacts`` on the Temporal server, without the API,
   find that API run and its files.

Every store in the journey is the default one under HOME: what one door writes, the others
must read.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.readme_blocks import Block, Session

pytestmark = [pytest.mark.timeout(900)]

VENV_BIN = Path(sys.executable).parent

SKILL = """\
---
name: word-count
description: Counts the words of a text and writes the count to a file.
---
# Word count

Run `scripts/count.py WORDS…`: it prints the number of words and writes it to
`outputs/count.txt`.
"""
SCRIPT = """\
import pathlib
import sys

words = sys.argv[1:]
pathlib.Path("outputs").mkdir(exist_ok=True)
pathlib.Path("outputs/count.txt").write_text(f"{len(words)} words\\n")
print(f"counted {len(words)} words")
"""
MODEL = """\
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: word-count}}]
  - tool_calls:
      - {name: run_skill_script,
         arguments: {skill: word-count, script: scripts/count.py, args: [one, two, three]}}
  - say: "The text has three words."
"""
AGENT = """\
name: counter
description: Counts words.
instruction: Count the words of the user's text with the word-count skill.
model: scripted:counter.yaml
skills: [word-count]
"""


def step(name: str, text: str) -> Block:
    """A step of the journey: the commands of one sitting, run in the session's shell."""
    return Block(name, 0, "sh", textwrap.dedent(text), "offline")


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    with Session.open(venv_bin=VENV_BIN) as opened:
        folder = opened.cwd / "my-skills" / "word-count"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
        (folder / "scripts" / "count.py").write_text(SCRIPT, encoding="utf-8")
        models = opened.cwd / "models"
        models.mkdir()
        (models / "counter.yaml").write_text(MODEL, encoding="utf-8")
        (opened.cwd / "counter-agent.yaml").write_text(AGENT, encoding="utf-8")
        yield opened


def run(session: Session, block: Block) -> str:
    done = session.execute(block)
    assert done.returncode == 0, (
        f"step {block.document!r} exited {done.returncode}:\n{done.output}\n"
        f"--- dev ---\n{session.service_log('dev')}\n--- api ---\n{session.service_log('api')}"
    )
    return done.output


def test_a_new_user_installs_a_skill_and_every_door_sees_it_and_its_runs(
    session: Session,
) -> None:
    # 1. One library: the installed skill is listed with its source, and shown.
    installed = run(
        session,
        step(
            "install",
            """\
            skillweave skills install ./my-skills/word-count
            skillweave skills list --json > listed.json
            skillweave skills list
            skillweave skills show word-count
            """,
        ),
    )
    listed = {row["name"]: row for row in json.loads((session.cwd / "listed.json").read_text())}
    assert listed["word-count"]["source"] == "installed"
    assert listed["word-count"]["state"] == "enabled"
    assert "# Word count" in installed

    # 2. The default engine is Temporal: `run` with no --engine runs on dev's worker, which
    #    serves the installed skill.
    ran = run(
        session,
        step(
            "dev and run",
            """\
            export MODEL__SCRIPTS_DIR=$PWD/models  # the scripted models requests may name
            MODEL__PROVIDER=scripted MODEL__NAME=$PWD/models/counter.yaml skillweave dev
            skillweave run "How many words are in 'one two three'?" --json > run.jsonl
            """,
        ),
    )
    events = [json.loads(line) for line in (session.cwd / "run.jsonl").read_text().splitlines()]
    kinds = [event.get("kind") for event in events]
    assert "skill_activated" in kinds, ran
    scripts = [event for event in events if event.get("kind") == "script_ran"]
    assert scripts, events
    result = events[-1]
    assert result.get("status") == "completed", result
    assert result["run_id"].startswith("run-")

    # 3. The API starts with no default model; an agent names its own model and the skill.
    run(
        session,
        step(
            "api",
            """\
            MODEL__SCRIPTS_DIR=$PWD/models skillweave api  # no MODEL__PROVIDER/NAME: no default
            export SKILLWEAVE_API_URL=http://127.0.0.1:$API__PORT
            AGENT=$(skillweave agents create counter-agent.yaml)
            skillweave run "Count 'one two three'." --agent "$AGENT" --json > api-run.jsonl
            """,
        ),
    )
    api_events = [
        json.loads(line) for line in (session.cwd / "api-run.jsonl").read_text().splitlines()
    ]
    api_result = api_events[-1]
    assert api_result.get("status") == "completed", api_events
    run_id = api_result["run_id"]
    assert run_id.startswith("run-")

    # 4. One run identity: the CLI on the Temporal server (no API) finds the API's run.
    found = run(
        session,
        step(
            "runs",
            f"""\
            unset SKILLWEAVE_API_URL
            skillweave runs show {run_id} --json > shown.json
            skillweave runs artifacts {run_id}
            skillweave runs artifacts {run_id} --out fetched
            """,
        ),
    )
    shown = json.loads((session.cwd / "shown.json").read_text())
    assert shown["status"] == "completed"
    assert shown["script_runs"] == 1
    assert "count.txt" in found
    [fetched] = (session.cwd / "fetched").rglob("count.txt")
    assert fetched.read_text() == "3 words\n"
