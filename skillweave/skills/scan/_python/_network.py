"""The Python module's network use, as facts: :class:`NetworkRules`.

Imports of network libraries (``_flow.NETWORK_MODULES``), calls that open connections or
fetch, URLs in string constants and the URL a client call connects to (whatever its host's
name) become the file's network facts; ``_manifest`` weighs
them against what the skill declares (``network.undeclared``). Called by ``PythonScan``
for every import, call and string constant of the module.
"""

from __future__ import annotations

import ast
import re
from typing import Final
from urllib.parse import urlsplit

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import NETWORK_CALLS, NETWORK_MODULES
from skillweave.skills.scan._python._values import Values
from skillweave.skills.scan._text import URL, Url, collect_urls, url_target

__all__ = ["NetworkRules"]

_CLIENTS: Final = ("requests.", "httpx.", "aiohttp.", "urllib3.", "urllib.request.")
_LOOPBACK: Final = re.compile(r"localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?", re.I)
_HOST: Final = re.compile(r"[a-z0-9.-]{1,253}")
_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


class NetworkRules:
    """Notes network use in the file's facts.

    Args:
        findings: the file's facts.
    """

    def __init__(self, findings: Findings, values: Values | None = None) -> None:
        self.facts = findings.facts
        self.values = values

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
        if not name and isinstance(call.func, ast.Attribute):  # httpx.Client().get(...)
            receiver = call.func.value
            owner = self.values.qualname(receiver.func) if isinstance(receiver, ast.Call) else None
            name = f"{owner}.{call.func.attr}" if owner else ""
        if not (name.startswith(_CLIENTS) or name.rsplit(".", 1)[-1] in NETWORK_CALLS):
            return
        target = call.args[0] if call.args else None
        target = next((k.value for k in call.keywords if k.arg == "url"), target)
        if target is None:
            return
        text = self.values.approx(target)
        texts = [text] if text and URL.match(text) else self.values.alternatives(target)
        for text in texts[:8]:
            self._connects(text, line)

    def _connects(self, text: str, line: int) -> None:
        match = URL.match(text)
        if match is None or url_target(match.group()) is not None:
            return  # no URL, or one the string rules already record
        url = match.group().rstrip(".,;:!?'\"")
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
            port = parts.port or _PORTS.get(parts.scheme.lower(), 443)
        except ValueError:
            return
        if host and "*" not in host and _HOST.fullmatch(host) and not _LOOPBACK.fullmatch(host):
            self.facts.urls.append(Url(line=line, url=url, host=host, port=port))

    def urls(self, value: str, line: int) -> None:
        """The URLs a string constant at `line` holds."""
        if "://" in value:
            collect_urls(value, lambda _offset, line=line: line, self.facts)
