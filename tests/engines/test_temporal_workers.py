"""What a base task queue's roll call says to one store (``engines.temporal.Roll``):
who would run its runs, and when a client refuses or a worker warns."""

from __future__ import annotations

from skillweave.engines.contract import store_task_queue
from skillweave.engines.temporal import Roll, stores_of

A, B, C = "a" * 16, "b" * 16, "c" * 16


def _worker(pid: int, store: str) -> str:
    return f"{pid}@host store={store} model=scripted:x"


def test_a_routed_queue_names_the_store() -> None:
    assert store_task_queue("skillweave", A) == f"skillweave@{A}"
    assert Roll("q", A, (), ()).routed == f"q@{A}"


def test_the_stores_of_identities_skip_workers_that_name_none() -> None:
    assert stores_of([_worker(1, A), "2@host", _worker(3, B), _worker(4, A)]) == {A, B}


def test_a_store_only_other_stores_poll_for_is_stranded() -> None:
    stranded = Roll("q", C, serving=(), answered=(_worker(1, B), _worker(2, A)))
    assert stranded.stranded()
    assert stranded.other_stores() == [A, B]
    assert stranded.refusal() == (
        f"no worker on task queue 'q' works on this process's store {C} (the workers there "
        f"work on {A}, {B}): give this process their STORAGE__ settings, or start a worker "
        f"on {C}"
    )
    # No worker at all: the run waits for one. One of its own: it runs.
    assert not Roll("q", C, (), ()).stranded()
    assert not Roll("q", C, (_worker(3, C),), (_worker(1, A), _worker(3, C))).stranded()
    # Its own worker answers the roll call but is not polling its queue (yet): not stranded.
    assert not Roll("q", C, (), (_worker(1, A), _worker(3, C))).stranded()


def test_a_worker_alone_on_its_store_warns_once_others_work_on_another() -> None:
    me = _worker(9, C)
    alone = Roll("q", C, serving=(me,), answered=(me, _worker(1, A), _worker(2, A)))
    assert alone.lonely_line(me) == (
        f"other workers on task queue 'q' work on store {A}; this worker works on {C}: runs "
        f"started against {A} never run here, nor {C}'s there"
    )
    # Another worker of its store: the odd ones out are the others (they warn).
    assert Roll("q", C, (me,), (me, _worker(3, C), _worker(1, A))).lonely_line(me) is None
    # Only itself, or only its store: nothing to say.
    assert Roll("q", C, (me,), (me,)).lonely_line(me) is None
    assert Roll("q", C, (), ()).lonely_line(me) is None
