"""What one execution's egress is granted: :class:`EgressContext` (the skill version, what it
declares, the operator's approval, its credential bindings and secrets, its caps), the skill's
declaration read from its package (:func:`declared_network`), and the credential headers bound
to a destination (:func:`bound_headers`).

Called by the service (``_service``), which makes a context per grant; by the proxy
(``_proxy``), which adds the bound headers; and by the manager's executions
(``mcp_manager.executions``, through the front), which read a package's declaration.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from skillweave.config import CredentialBinding, EgressApproval, EgressLimits
from skillweave.errors import SkillFormatError
from skillweave.skills import (
    SKILL_FILE,
    Destination,
    declared_destinations,
    parse_destination,
    parse_frontmatter,
)

__all__ = ["EgressContext", "bound_headers", "declared_network", "secret_names"]

_SECRET_REFERENCE: Final = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class EgressContext:
    """Whose egress a proxy serves: one execution of one skill version, and its rules."""

    run_id: str
    execution_id: str
    skill: str
    version: str
    declared: tuple[Destination, ...]
    approval: EgressApproval | None
    credentials: tuple[CredentialBinding, ...] = ()
    secrets: Mapping[str, str] = field(default_factory=dict)
    limits: EgressLimits = field(default_factory=EgressLimits)


def secret_names(binding: CredentialBinding) -> list[str]:
    """The secrets a binding's header value refers to (``${NAME}``)."""
    return _SECRET_REFERENCE.findall(binding.value)


def _rendered(binding: CredentialBinding, secrets: Mapping[str, str]) -> str | None:
    """The header's value with the skill's secrets filled in; None when one is missing."""
    missing = [name for name in secret_names(binding) if name not in secrets]
    if missing:
        return None
    return _SECRET_REFERENCE.sub(lambda m: secrets[m.group(1)], binding.value)


def bound_headers(context: EgressContext, host: str, port: int) -> dict[str, tuple[str, str]]:
    """The headers bound to `host`:`port` for the execution, by lower-case name: (name,
    value)."""
    found: dict[str, tuple[str, str]] = {}
    for binding in context.credentials:
        if parse_destination(binding.destination).matches(host, port):
            value = _rendered(binding, context.secrets)
            if value is not None:
                found[binding.header.lower()] = (binding.header, value)
    return found


def declared_network(package: bytes) -> tuple[Destination, ...]:
    """What the skill in `package` (its ZIP) declares under ``metadata.network``.

    Raises:
        EgressPolicyError: the declaration cannot be read (the entry is named).
    """
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == SKILL_FILE]
        top = min(names, key=lambda n: n.count("/"), default=None)
        if top is None:
            return ()
        text = archive.read(top).decode("utf-8", "replace")
    try:
        data = parse_frontmatter(text, path=SKILL_FILE).data
    except SkillFormatError:
        return ()
    metadata = data.get("metadata")
    return declared_destinations(metadata.get("network") if isinstance(metadata, Mapping) else None)
