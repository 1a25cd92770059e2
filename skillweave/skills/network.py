"""The network a skill declares: the destinations its ``metadata.network`` names, and why.

A skill **declares** the hosts it needs under ``metadata.network``: a list of destinations
(``["api.example.com:443", "*.example.org"]``), a mapping of destination to the reason shown to
operators (``{"api.example.com:443": "reads the sales figures"}``), or a space-separated string.
A destination is a host name, a ``*.`` wildcard over its subdomains, or an IP address, with an
optional port (none: 80 and 443). Declaring is part of the skill format; what may actually be
reached, once an operator approved it, is the egress policy's
(``skillweave.sandbox.egress_policy``).

Pure. Read by the egress policy and proxy, the scanner (undeclared network use), network
approvals, ``skills show`` and the API.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from skillweave.errors import EgressPolicyError

__all__ = [
    "DEFAULT_PORTS",
    "MAX_DESTINATIONS",
    "PORT_DIGITS",
    "Destination",
    "declared_destinations",
    "parse_destination",
    "valid_host",
]

PORT_DIGITS: Final = re.compile(r"[0-9]{1,5}")
"""What a port is written as, before its range is checked."""

DEFAULT_PORTS: Final = (80, 443)
"""The ports a destination written without one may be reached on."""
MAX_DESTINATIONS: Final = 64
_MAX_HOST_CHARS: Final = 253
_HOST_LABEL_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


@dataclass(frozen=True, slots=True)
class Destination:
    """Where a skill may connect.

    Attributes:
        host: a lower-case host name, ``*.example.org`` (its subdomains, not itself), or an IP
            address.
        ports: the ports allowed.
        reason: why the skill needs it, as its author wrote (shown to operators).
    """

    host: str
    ports: tuple[int, ...] = DEFAULT_PORTS
    reason: str = ""

    def __str__(self) -> str:
        if self.ports == DEFAULT_PORTS:
            return self.host
        return ",".join(f"{self.host}:{port}" for port in self.ports)

    def matches(self, host: str, port: int) -> bool:
        """Whether a connection to `host` (lower case) on `port` is this destination."""
        if port not in self.ports:
            return False
        if self.host.startswith("*."):
            return fnmatch.fnmatchcase(host, self.host) and host.count(".") >= self.host.count(".")
        return host == self.host


def parse_destination(text: str, *, reason: str = "") -> Destination:
    """A destination as written (``api.example.com:443``, ``*.example.org``, ``10.0.0.7:8080``).

    Raises:
        EgressPolicyError: not a host name, wildcard or address, or a port out of range.
    """
    entry = text.strip().lower()
    host, port = entry, None
    if entry.startswith("["):  # [IPv6]:port
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":") or None
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    ports = DEFAULT_PORTS
    if port is not None:
        if not PORT_DIGITS.fullmatch(port) or not 1 <= int(port) <= 65_535:
            raise EgressPolicyError(f"{text!r}: the port must be a number from 1 to 65535")
        ports = (int(port),)
    if not valid_host(host):
        raise EgressPolicyError(
            f"{text!r}: not a host name (api.example.com), a wildcard (*.example.org) or an "
            "IP address"
        )
    return Destination(host=host, ports=ports, reason=reason.strip())


def valid_host(host: str) -> bool:
    """Whether `host` is a host name, a ``*.`` wildcard over a domain, or an IP address."""
    if not host or len(host) > _MAX_HOST_CHARS:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    name = host.removeprefix("*.")
    labels = name.split(".")
    # A wildcard needs a domain under a suffix (*.example.org, never *.com); a plain name may
    # be one label (an intranet host, localhost).
    least = 2 if host.startswith("*.") else 1
    return len(labels) >= least and all(
        label and len(label) <= 63 and set(label) <= _HOST_LABEL_CHARS and label[0] != "-"
        for label in labels
    )


def declared_destinations(value: Any) -> tuple[Destination, ...]:
    """What a skill's ``metadata.network`` declares (a list, a mapping to reasons, or a
    space-separated string); () when absent.

    Raises:
        EgressPolicyError: an entry that is no destination, or more than
            :data:`MAX_DESTINATIONS` of them.
    """
    if value is None:
        return ()
    entries: list[tuple[str, str]]
    if isinstance(value, Mapping):
        entries = [
            (str(key), "" if reason is None else str(reason)) for key, reason in value.items()
        ]
    elif isinstance(value, list | tuple):
        entries = [(str(item), "") for item in value]
    else:
        entries = [(item, "") for item in str(value).split()]
    if len(entries) > MAX_DESTINATIONS:
        raise EgressPolicyError(
            f"{len(entries)} network destinations declared; at most {MAX_DESTINATIONS}"
        )
    return tuple(parse_destination(text, reason=reason) for text, reason in entries)
