"""Network approvals made over the API: :class:`NetworkApprovals`, one record a skill.

An operator approves a skill's network in the manager's settings (``sandbox.egress.approvals``)
or over the API (``PUT /v1/skills/{name}/network``), which stores the approval here
(``keys.network_approval_key``), pinned to the skill version it was made for. The manager's
egress service reads both, the settings first (:meth:`NetworkApprovals.of`). A record that
cannot be read approves nothing (and is logged): fail closed. An approval binds to one
canonical skill name, exactly (``sandbox.bindings``): a configured key that is not canonical
stops start-up, and a skill whose name is not canonical is approved nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Final

from pydantic import ValidationError

from skillweave.config import EgressApproval, EgressSettings
from skillweave.errors import InvalidKeyError
from skillweave.sandbox.bindings import check_bound_names, configured_for
from skillweave.skills import Destination, bound_name, parse_destination
from skillweave.storage import ArtifactStore, keys

__all__ = ["NetworkApprovals", "describe_network"]

logger = logging.getLogger("skillweave.egress")

_FRESH_SECONDS: Final = 2.0
"""How long a record read from the store is taken as current: a new approval reaches runs
within this, without a store read per run."""


class NetworkApprovals:
    """The operator's network approvals: the settings', then those made over the API.

    Raises:
        ConfigError: a key of ``sandbox.egress.approvals`` is not a canonical skill name.
    """

    def __init__(self, store: ArtifactStore, settings: EgressSettings | None = None) -> None:
        self._store = store
        self._settings = dict(settings.approvals) if settings else {}
        check_bound_names("SANDBOX__EGRESS__APPROVALS", self._settings)
        self._read: dict[str, tuple[float, EgressApproval | None]] = {}

    def configured(self, skill: str) -> EgressApproval | None:
        """The approval in the settings for exactly `skill`'s canonical name, if any."""
        return configured_for(self._settings, skill)

    async def of(self, skill: str) -> tuple[EgressApproval | None, str | None]:
        """The approval of `skill`'s network and where it is from (``settings`` or ``api``);
        (None, None) when there is none, or `skill`'s name is not canonical."""
        if bound_name(skill) is None:
            return None, None
        configured = self.configured(skill)
        if configured is not None:
            return configured, "settings"
        now = time.monotonic()
        cached = self._read.get(skill)
        if cached is not None and now - cached[0] < _FRESH_SECONDS:
            return cached[1], "api" if cached[1] is not None else None
        approval = await self.stored(skill)
        self._read[skill] = (now, approval)
        return approval, "api" if approval is not None else None

    async def stored(self, skill: str) -> EgressApproval | None:
        """The approval made over the API, read now."""
        try:
            key = keys.network_approval_key(skill)
        except InvalidKeyError:
            return None
        ref = await self._store.stat(key)
        if ref is None:
            return None
        try:
            return EgressApproval.model_validate_json(await self._store.get_bytes(ref))
        except ValidationError:
            logger.warning("the network approval of %r cannot be read; it approves nothing", skill)
            return None

    async def put(self, skill: str, approval: EgressApproval) -> None:
        await self._store.put_bytes(
            keys.network_approval_key(skill),
            approval.model_dump_json().encode(),
            content_type="application/json",
        )
        self._read.pop(skill, None)

    async def delete(self, skill: str) -> None:
        await self._store.delete(keys.network_approval_key(skill))
        self._read.pop(skill, None)


def describe_network(
    declared: Sequence[Destination], approval: EgressApproval | None, source: str | None
) -> list[str]:
    """One line per destination a skill declares: its reason, and whether it is approved
    (where, for which version). What ``skills show`` prints."""
    lines = []
    for destination in declared:
        approved = approval is not None and any(
            parse_destination(entry).host == destination.host
            and set(destination.ports) & set(parse_destination(entry).ports)
            for entry in approval.destinations
        )
        why = f" ({destination.reason})" if destination.reason else ""
        if not approved or approval is None:
            state = "not approved"
        else:
            where = "the settings" if source == "settings" else "the API"
            pinned = f"version {approval.version[:12]}" if approval.version else "any version"
            state = f"approved in {where}, {pinned}"
        lines.append(f"{destination}{why}: {state}")
    return lines
