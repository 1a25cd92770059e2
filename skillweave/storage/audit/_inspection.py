"""One stored record or checkpoint as read, and the checks each must pass: fetching its bytes
(once more when a write may have raced the listing), parsing them without raising, its hash
(or HMAC) and its place in its chain. Shared by the checkpoint-chain walk
(``_checkpoint_walk``) and the writer-chain walk (``_chain_walk``)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Final

from pydantic import ValidationError

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError
from skillweave.storage.audit._findings import CHECKPOINTS, AuditProblem, unreadable, what
from skillweave.storage.audit._records import (
    MAX_RECORD_BYTES,
    AuditRecord,
    Checkpoint,
    Sealer,
    Unreadable,
    first_error,
    link_of,
    parse,
)
from skillweave.storage.base import ArtifactRef, ArtifactStore

__all__ = ["GAP_RECHECKS", "READ_AHEAD", "Inspector", "Item", "item_of"]

READ_AHEAD: Final = 16
"""Blocks or checkpoints fetched at once."""

GAP_RECHECKS: Final = 256
"""Missing places looked at again, in case a listing raced with appends."""


@dataclass(frozen=True, slots=True)
class Item:
    """One stored record or checkpoint as read: parsed when it could be."""

    seq: int
    model: AuditRecord | Checkpoint | None
    body: dict[str, object] | None
    link: str | None
    """The ``prev`` the next one must carry; None when it cannot be known."""
    problem: AuditProblem | None
    whole_block: bool = False
    """It stands for a block that could not be read: how many records it held is unknown."""


def item_of(chain: str, seq: int, data: bytes, kind: type[AuditRecord] | type[Checkpoint]) -> Item:
    """Stored bytes as a record or checkpoint; never raises for bad content."""
    if len(data) > MAX_RECORD_BYTES:
        problem = unreadable(chain, seq, f"it is {len(data)} bytes, over {MAX_RECORD_BYTES}")
        return Item(seq, None, None, link_of(data, None), problem)
    try:
        body = parse(data)
    except Unreadable as exc:
        return Item(seq, None, None, link_of(data, None), unreadable(chain, seq, str(exc)))
    try:
        model = kind.model_validate(body)
    except ValidationError as exc:
        name = "an audit record" if kind is AuditRecord else "a checkpoint"
        problem = unreadable(chain, seq, f"it is not {name}: {first_error(exc)}")
        return Item(seq, None, body, link_of(data, body), problem)
    return Item(seq, model, body, model.hash, None)


class Inspector:
    """Fetches stored items from `store` and checks them under `sealer`'s key (or none)."""

    def __init__(self, store: ArtifactStore, sealer: Sealer) -> None:
        self.store = store
        self._sealer = sealer

    async def fetch(
        self, chain: str, seq: int, ref: ArtifactRef, limit: int
    ) -> bytes | AuditProblem:
        """The bytes of `ref` (at most `limit`), or why they cannot be had."""
        name = what(chain, seq) if chain == CHECKPOINTS else f"block {seq} of writer {chain}"
        if ref.size > limit:
            return unreadable(chain, seq, f"it is {ref.size} bytes, over {limit}", name=name)
        for _ in range(2):  # a store-level mismatch may be a write racing the listing: once more
            try:
                return await self.store.get_bytes(ref)
            except ArtifactNotFoundError:
                return AuditProblem("removed", chain, seq, f"{name} was removed")
            except ArtifactIntegrityError:
                fresh = await self.store.stat(ref.key)
                if fresh is None:
                    return AuditProblem("removed", chain, seq, f"{name} was removed")
                ref = fresh
        return AuditProblem(
            "edited", chain, seq, f"{name} was edited: its bytes changed behind the store"
        )

    def checkpoint_problem(self, item: Item, link: str | None) -> AuditProblem | None:
        """What is wrong with a readable checkpoint: its hash, place or link."""
        return self.hash_problem(item, CHECKPOINTS) or self.place_problem(item, link, CHECKPOINTS)

    def place_problem(self, item: Item, link: str | None, chain: str) -> AuditProblem | None:
        """What is wrong with where a readable record or checkpoint is: its place, its chain,
        or the hash before it (`link`; None: unknown)."""
        model = item.model
        assert model is not None
        name = what(chain, item.seq)
        if isinstance(model, AuditRecord) and model.writer != chain:
            return AuditProblem(
                "reordered",
                chain,
                item.seq,
                f"{name} is record {model.seq} of writer {model.writer}: moved between chains",
            )
        if model.seq != item.seq:
            return AuditProblem(
                "reordered", chain, item.seq, f"{name} holds {what(chain, model.seq)}: moved"
            )
        if link is not None and model.prev != link:
            before = what(chain, item.seq - 1) if item.seq > 1 else "the start"
            return AuditProblem(
                "reordered",
                chain,
                item.seq,
                f"{name} does not follow {before}: its prev is not the hash before it "
                "(reordered, replaced, or the chain forked)",
            )
        return None

    def hash_problem(self, item: Item, chain: str) -> AuditProblem | None:
        """What is wrong with a readable item's hash: edited, or forged without the key."""
        model, body = item.model, item.body
        assert model is not None
        assert body is not None
        checkpoint = isinstance(model, Checkpoint)
        if hmac.compare_digest(self._sealer.link(body, checkpoint=checkpoint), model.hash):
            return None
        name = what(chain, item.seq)
        if self._sealer.forged(body, model.hash, checkpoint=checkpoint):
            return AuditProblem(
                "edited",
                chain,
                item.seq,
                f"{name} was forged: its hash is a plain SHA-256, not an HMAC under "
                "AUDIT__KEY (rewritten without the key, or written before the key was set)",
            )
        return AuditProblem(
            "edited", chain, item.seq, f"{name} was edited: its hash does not match its content"
        )
