"""A worker's Temporal identity names its store (issue 28, part 2), for clients to compare."""

from __future__ import annotations

import os

from skillweave.engines.temporal import default_model_of_worker, store_of_worker, worker_identity


def test_a_worker_identity_names_its_store() -> None:
    identity = worker_identity("5c0f3a9e1b2d4c6f")
    assert identity.startswith(f"{os.getpid()}@")  # the SDK's own form first
    assert store_of_worker(identity) == "5c0f3a9e1b2d4c6f"
    assert store_of_worker(f"{os.getpid()}@host") is None
    assert store_of_worker(f"{os.getpid()}@host store=") is None


def test_a_worker_identity_names_its_default_model_when_it_has_one() -> None:
    """A client learns which model a run that names none gets on these workers."""
    identity = worker_identity("5c0f3a9e", default_model="scripted:/srv/models/demo.yaml")
    assert store_of_worker(identity) == "5c0f3a9e"  # the store is read as before
    assert default_model_of_worker(identity) == "scripted:/srv/models/demo.yaml"
    assert default_model_of_worker(worker_identity("5c0f3a9e")) is None
    assert default_model_of_worker(f"{os.getpid()}@host store=abc") is None
