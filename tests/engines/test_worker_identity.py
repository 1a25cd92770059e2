"""A worker's Temporal identity names its store (issue 28, part 2), for clients to compare."""

from __future__ import annotations

import os

from skillweave.engines.temporal import store_of_worker, worker_identity


def test_a_worker_identity_names_its_store() -> None:
    identity = worker_identity("5c0f3a9e1b2d4c6f")
    assert identity.startswith(f"{os.getpid()}@")  # the SDK's own form first
    assert store_of_worker(identity) == "5c0f3a9e1b2d4c6f"
    assert store_of_worker(f"{os.getpid()}@host") is None
    assert store_of_worker(f"{os.getpid()}@host store=") is None
