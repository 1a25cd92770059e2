"""The Python module's network use, as facts: :class:`NetworkRules`.

Imports of network libraries (``_flow.NETWORK_MODULES``), calls that open connections or
fetch, and URLs in string constants become the file's network facts; ``_manifest`` weighs
them against what the skill declares (``network.undeclared``). Called by ``PythonScan``
for every import, call and string constant of the module.
"""

from __future__ import annotations

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._flow import NETWORK_CALLS, NETWORK_MODULES
from skillweave.skills.scan._text import collect_urls

__all__ = ["NetworkRules"]


class NetworkRules:
    """Notes network use in the file's facts.

    Args:
        findings: the file's facts.
    """

    def __init__(self, findings: Findings) -> None:
        self.facts = findings.facts

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

    def urls(self, value: str, line: int) -> None:
        """The URLs a string constant at `line` holds."""
        if "://" in value:
            collect_urls(value, lambda _offset, line=line: line, self.facts)
