"""The Python module's network use, as facts: :class:`NetworkRules`.

Imports of network libraries (``_flow.NETWORK_MODULES``), calls that open connections or
fetch, URLs in string constants and the URL a client call connects to (whatever its host's
name) become the file's network facts; ``_manifest`` weighs
them against what the skill declares (``network.undeclared``). A name resolved
(``socket.getaddrinfo(f"{data}.zone.example")``) is a destination too: its fixed suffix,
whose name servers receive the lookup. A secret a call carries to the host it names (an
environment variable named like a token or key, a file under the home folder, in the URL,
a header or the body) becomes a ``sent`` fact, which ``_escalation`` turns into
``secrets.exfiltration`` when the host is one the skill does not declare; the whole
environment carried to any host, declared or not, is ``secrets.exfiltration`` (high) here.
Called by
``PythonScan`` for every import, call and string constant of the module.
"""

from __future__ import annotations

import ast
import re
from typing import Final
from urllib.parse import urlsplit

from skillweave.skills.scan._escalation import SENDS, UNKNOWN_HOST
from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import NETWORK_CALLS, NETWORK_MODULES
from skillweave.skills.scan._python._taint import WHOLE_ENVIRONMENT, Taint
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import URL, Url, collect_urls, url_target

__all__ = ["NetworkRules"]

_CLIENTS: Final = ("requests.", "httpx.", "aiohttp.", "urllib3.", "urllib.request.")
_LOOPBACK: Final = re.compile(r"localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?", re.I)
_HOST: Final = re.compile(r"[a-z0-9.-]{1,253}")
_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_RESOLVERS: Final = frozenset({"getaddrinfo", "gethostbyname", "gethostbyname_ex"})
_SECRET_NAME: Final = re.compile(
    r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION|COOKIE", re.I
)
_MAX_SENT: Final = 16

_ADDRESSED: Final = {"connect": 0, "connect_ex": 0, "sendto": 1}
"""A socket's methods that name the address they reach, and its argument's position."""


class NetworkRules:
    """Notes network use in the file's facts.

    Args:
        findings: the file's facts.
    """

    def __init__(
        self, findings: Findings, values: Values | None = None, taint: Taint | None = None
    ) -> None:
        self.facts = findings.facts
        self.findings = findings
        self.values = values
        self.taint = taint
        self.sent: list[tuple[int, str, str, str]] = []
        """(line, "sends", "<secret> to <host>", excerpt) for each secret a network call
        carries to a host it names: the escalation judges the host against the
        declaration."""

    def imported(self, name: str, line: int) -> None:
        """An import of `name` (``requests``, ``urllib.request.urlopen``) at `line`."""
        for module in NETWORK_MODULES:
            if name == module or name.startswith(module + "."):
                self.facts.network.append((line, f"imports {module}"))
                return
        if name.startswith("urllib") and name.rsplit(".", 1)[-1] in NETWORK_CALLS:
            self.facts.network.append((line, f"imports {name}"))

    def called(self, name: str, last: str, line: int) -> None:
        """A call of `name` (last part `last`) at `line`."""
        if last in NETWORK_CALLS or name.startswith(("requests.", "httpx.", "aiohttp.")):
            self.facts.network.append((line, f"calls {name}"))

    def connects(self, call: ast.Call, name: str, line: int) -> None:
        """The URL a client call (``urlopen``, ``Request``, ``requests.post``...) connects to
        is a destination even when its host is a reserved name that a URL merely *named*
        is not taken for (``.example``, ``.test``): the call shows the connection. Loopback
        stays out: it is not egress."""
        if self.values is None:
            return
        if isinstance(call.func, ast.Attribute) and not name.startswith(_CLIENTS):
            receiver = call.func.value  # httpx.Client().get(...), s = requests.Session()
            if isinstance(receiver, ast.Name):
                assigned = self.values.index.assigned.get(receiver.id) or []
                receiver = assigned[0] if len(assigned) == 1 else receiver
            owner = self.values.qualname(receiver.func) if isinstance(receiver, ast.Call) else None
            if owner and owner.startswith(_CLIENTS):
                name = f"{owner}.{call.func.attr}"
            elif owner == "socket.socket" and call.func.attr in _ADDRESSED:
                position = _ADDRESSED[call.func.attr]
                if len(call.args) > position:
                    self._resolves(call, call.args[position], line)
                return
        last = name.rsplit(".", 1)[-1]
        if not (name.startswith(_CLIENTS) or last in NETWORK_CALLS or last in _RESOLVERS):
            return
        target = call.args[0] if call.args else None
        target = next((k.value for k in call.keywords if k.arg in ("url", "host")), target)
        if target is None:
            return
        if last in _RESOLVERS or last == "create_connection":
            self._resolves(call, target, line)
            return
        text = self.values.approx(target)
        texts = [text] if text and URL.match(text) else self.values.alternatives(target)
        hosts = [self._connects(text, line) for text in texts[:8]]
        for host in hosts or [None]:
            self._sends(call, host or UNKNOWN_HOST, line)

    def _resolves(self, call: ast.Call, target: ast.expr, line: int) -> None:
        """A name looked up (``getaddrinfo``, ``gethostbyname``) or connected to by host:
        its fixed suffix is the destination (``f"{data}.zone.example"`` asks zone.example's
        name servers, carrying the data in the label)."""
        assert self.values is not None
        if isinstance(target, ast.Tuple) and target.elts:  # create_connection((host, port))
            target = target.elts[0]
        text = self.values.approx(target) or ""
        host = text.rsplit("*", 1)[-1].lstrip("-._").rstrip(".").lower()
        if "." not in host or not _HOST.fullmatch(host) or _LOOPBACK.fullmatch(host):
            return
        self.facts.urls.append(Url(line=line, url=f"dns://{host}", host=host, port=53))
        self._sends(call, host, line)

    def _sends(self, call: ast.Call, host: str, line: int) -> None:
        """A secret (an environment variable named like one, a file under the home folder)
        that `call` carries to `host`."""
        if self.taint is None:
            return
        values = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            session = call.func.value  # a session whose headers or auth carry the secret
            values.extend(
                [session, *(ast.Attribute(session, a, ast.Load()) for a in ("headers", "auth"))]
            )
        for value in values[:_MAX_SENT]:
            labels = self.taint.labels(value)
            secret = labels.get("home") or labels.get("environ")
            if secret and secret.endswith(WHOLE_ENVIRONMENT):
                where = "a host named at run time" if host == UNKNOWN_HOST else host
                self.findings.add("secrets.exfiltration", line,
                                  f"sends the whole environment to {where}, declared or not",
                                  severity="high")  # fmt: skip
            if secret and ("home" in labels or _SECRET_NAME.search(secret)):
                self.sent.append((line, SENDS, f"{secret} to {host}",
                                  self.findings.excerpt(line)))  # fmt: skip
                return

    def _connects(self, text: str, line: int) -> str | None:
        match = URL.match(text)
        if match is None:
            return None
        if url_target(match.group()) is not None:  # one the string rules already record
            try:
                found = urlsplit(match.group()).hostname
            except ValueError:
                return None
            return found.lower() if found else None
        url = match.group().rstrip(".,;:!?'\"")
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
            port = parts.port or _PORTS.get(parts.scheme.lower(), 443)
        except ValueError:
            return None
        if host and "*" not in host and _HOST.fullmatch(host) and not _LOOPBACK.fullmatch(host):
            self.facts.urls.append(Url(line=line, url=url, host=host, port=port))
            return host
        return None

    def urls(self, value: str, line: int) -> None:
        """The URLs a string constant at `line` holds."""
        if "://" in value:
            collect_urls(value, lambda _offset, line=line: line, self.facts)
