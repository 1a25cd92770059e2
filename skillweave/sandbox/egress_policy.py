"""Network egress policy (DESIGN §6): which destinations a skill's scripts may reach, and why.

A skill **declares** the hosts it needs under ``metadata.network``: a list of destinations
(``["api.example.com:443", "*.example.org"]``), a mapping of destination to the reason shown to
operators (``{"api.example.com:443": "reads the sales figures"}``), or a space-separated string.
A destination is a host name, a ``*.`` wildcard over its subdomains, or an IP address, with an
optional port (none: 80 and 443). Nothing is reachable until an operator **approves** the
skill's destinations (``skillweave.config.EgressApproval``, in ``sandbox.egress``: which ones,
pinned to a skill version when given, and which may resolve to a private address).

The egress proxy judges each connection in two steps, in this order, so that no name is looked
up before it is judged (a DNS query for an undeclared name would carry data out):

1. :func:`parse_authority` reads the host and port the script asked for (a request line's
   authority, a ``Host`` header, a ``CONNECT`` target) strictly: ASCII host names, IPv4
   addresses and bracketed IPv6 addresses, a port of digits; anything else is refused.
   :func:`decide_destination` then judges the name alone, with no address: the skill's
   approval and its version, the destination declared *and* approved.
2. Only an approved name is resolved; :func:`decide_addresses` then requires every address it
   resolved to be public (not private, loopback, link-local, multicast, reserved or
   unspecified) unless the destination is approved as private. The proxy connects to the very
   address it checked, so a DNS answer cannot change between the check and the connection (no
   DNS rebinding).

Pure: the manager's proxy (``mcp_manager.egress``) and the places that show a skill's network
(``skills show``, the API) import it. Parsing refuses what it cannot read with a
:class:`~skillweave.errors.EgressPolicyError` naming the entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from skillweave.config import EgressApproval
from skillweave.errors import EgressPolicyError
from skillweave.skills import PORT_DIGITS, Destination, parse_destination, valid_host

__all__ = [
    "EGRESS_SOCKET",
    "IDEMPOTENCY_HEADER",
    "NO_PROXY_VARIABLES",
    "PROXY_VARIABLES",
    "SANDBOX_PROXY_PORT",
    "STAGE_EGRESS_VARIABLE",
    "Verdict",
    "decide_addresses",
    "decide_destination",
    "idempotency_key",
    "is_public",
    "parse_authority",
    "proxy_environment",
]

SANDBOX_PROXY_PORT: Final = 3128
"""Where a contained sandbox's scripts find the proxy: 127.0.0.1 on this port, in the
sandbox's own network namespace (a forwarder there relays to :data:`EGRESS_SOCKET`). An
executor without a sandbox of its own (a Kubernetes pod, whose network namespace is the pod's)
serves the proxy on a free loopback port itself."""
EGRESS_SOCKET: Final = ".skillweave/egress.sock"
"""The Unix socket, in a run's workspace, that the executor serves for the sandbox's
forwarder and bridges to the manager's egress proxy."""
STAGE_EGRESS_VARIABLE: Final = "SKILLWEAVE_EGRESS_SOCKET"
"""How the executor tells a sandbox's stage to start the forwarder (the stage removes it from
the script's environment)."""
PROXY_VARIABLES: Final = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
NO_PROXY_VARIABLES: Final = ("NO_PROXY", "no_proxy")


def proxy_environment(port: int = SANDBOX_PROXY_PORT) -> dict[str, str]:
    """What a script with egress finds in its environment: the standard proxy variables,
    which urllib, requests, curl and most HTTP clients honour, naming 127.0.0.1:`port`."""
    url = f"http://127.0.0.1:{port}"
    # Nothing bypasses the proxy: inside the sandbox nothing else listens, and a loopback
    # address asked for is the operator's host, which only an approval may open.
    return {
        **dict.fromkeys(PROXY_VARIABLES, url),
        **dict.fromkeys(NO_PROXY_VARIABLES, ""),
        # Node's fetch reads the proxy variables when asked (Node 22.21 and 24.5 on).
        "NODE_USE_ENV_PROXY": "1",
    }


IDEMPOTENCY_HEADER: Final = "Idempotency-Key"


def idempotency_key(execution_id: str, nth: int) -> str:
    """The ``Idempotency-Key`` the egress proxy gives the `nth` (1-based) plain-HTTP request
    of a run that carries none: derived from the run's execution id, so the same on every
    attempt of the run, as long as the script makes its requests in the same order."""
    digest = hashlib.sha256(execution_id.encode("utf-8")).hexdigest()[:32]
    return f"skillweave-{digest}-{nth}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a connection may go out, and why in one line (the audit record's reason)."""

    allowed: bool
    reason: str
    destination: Destination | None = None


def is_public(address: str) -> bool:
    """Whether `address` is on the public internet: not private, loopback, link-local,
    multicast, reserved, unspecified or shared (an IPv4 address mapped into IPv6 counts as
    itself)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def decide_destination(
    *,
    skill: str,
    version: str,
    host: str,
    port: int,
    declared: Iterable[Destination],
    approval: EgressApproval | None,
) -> Verdict:
    """Judge a connection of `skill` at `version` to `host`:`port` by its name alone, before
    the name is resolved (only an allowed verdict may lead to a DNS query).

    Refused, each with its reason: no approval for the skill, an approval of another version,
    a destination the skill does not declare, or one the operator did not approve.
    """
    host = host.strip().lower().rstrip(".")
    if approval is None:
        return Verdict(False, f"no network is approved for skill {skill!r}")
    if approval.version is not None and approval.version != version:
        return Verdict(
            False,
            f"the network approval of {skill!r} is for version {approval.version[:12]}, not "
            f"{version[:12]}; approve this version",
        )
    wanted = f"{host}:{port}"
    found = next((d for d in declared if d.matches(host, port)), None)
    if found is None:
        return Verdict(False, f"{wanted} is not among the destinations {skill!r} declares")
    approved = [parse_destination(text) for text in approval.destinations]
    if not any(d.matches(host, port) for d in approved):
        return Verdict(False, f"{wanted} is declared by {skill!r} but not approved", found)
    return Verdict(True, f"{wanted} is declared and approved", found)


def decide_addresses(
    verdict: Verdict,
    *,
    host: str,
    port: int,
    addresses: Sequence[str],
    approval: EgressApproval | None,
) -> Verdict:
    """Judge the addresses an approved name (`verdict`, from :func:`decide_destination`)
    resolved to; the proxy connects to the first of them, checked here. A refused `verdict`
    stays refused.

    Refused: no address, or one that is not public while `host`:`port` is not approved as
    private.
    """
    if not verdict.allowed or approval is None:
        return verdict
    host = host.strip().lower().rstrip(".")
    if not addresses:
        return Verdict(False, f"{host} does not resolve", verdict.destination)
    private = [parse_destination(text) for text in approval.private]
    if not any(d.matches(host, port) for d in private):
        for address in addresses:
            if not is_public(address):
                return Verdict(
                    False,
                    f"{host} resolves to {address}, a private address, and {host}:{port} is "
                    "not approved as private",
                    verdict.destination,
                )
    return verdict


_IPV6_CHARS: Final = frozenset("0123456789abcdef:.")


def parse_authority(text: str, *, default_port: int | None) -> tuple[str, int]:
    """The host (lower case, an IPv6 address without its brackets) and port of an authority
    a script asked for: ``host``, ``host:port``, ``1.2.3.4:port`` or ``[v6]:port``; without a
    port, `default_port` (None: the port is required, as in a ``CONNECT`` target).

    Strict, because the name is judged as written and then resolved: ASCII only, no user
    info, no wildcard, one port of 1 to 65535 in ASCII digits, a host name of letters, digits
    and hyphens in labels of at most 63 (one trailing dot dropped).

    Raises:
        EgressPolicyError: anything else (the text is named).
    """
    shown = repr(text[:80])
    if not text.isascii() or not text.isprintable() or " " in text:
        raise EgressPolicyError(f"{shown}: not an ASCII host[:port]")
    host, port_text = text, None
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise EgressPolicyError(f"{shown}: not a [IPv6 address]:port")
        port_text = rest[1:] if rest else None
        if not host or not set(host.lower()) <= _IPV6_CHARS:
            raise EgressPolicyError(f"{shown}: not an IPv6 address in brackets")
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            raise EgressPolicyError(f"{shown}: not an IPv6 address in brackets") from None
        host = str(address)
    else:
        if text.count(":") > 1:
            raise EgressPolicyError(f"{shown}: one port at most (an IPv6 address goes in [])")
        if ":" in text:
            host, _, port_text = text.partition(":")
        host = host.lower()
        if host.endswith(".") and not host.endswith(".."):
            host = host[:-1]
        if host.startswith("*") or not valid_host(host):
            raise EgressPolicyError(f"{shown}: not a host name or an IP address")
        with contextlib.suppress(ValueError):
            host = str(ipaddress.IPv4Address(host))
    if port_text is None:
        if default_port is None:
            raise EgressPolicyError(f"{shown}: a port is required (host:port)")
        return host, default_port
    if not PORT_DIGITS.fullmatch(port_text) or not 1 <= int(port_text) <= 65_535:
        raise EgressPolicyError(f"{shown}: the port must be a number from 1 to 65535")
    return host, int(port_text)
