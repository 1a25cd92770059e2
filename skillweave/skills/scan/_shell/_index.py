"""A package manager's configuration changed outside the workspace by a command, for the
shell and JavaScript flows: :func:`config_command` (``npm config set registry ...``).

Either redirects every later install to the index it names, or turns its checks off
(``strict-ssl false``): the dependency confusion ``dependencies.index-config`` reports, with
``fs.persistence`` since the change outlives the run. A file written is
``_text.package_config``, which every language's rules read. A command that sets only the
project's own configuration (``--location=project``, ``pip config --site``...) is not this,
as the workspace's files are not. Called by ``_flow`` (commands) and ``_javascript._sinks``
(commands run through ``child_process``).
"""

from __future__ import annotations

import re
from typing import Final

_MANAGERS: Final = frozenset({"npm", "pnpm", "yarn", "pip", "pip3", "conda", "uv", "poetry"})
_SETTERS: Final = frozenset({"set", "add", "--add", "--set"})
_INDEX_KEYS: Final = re.compile(
    r"(?:@[\w.-]+:)?registry|strict-ssl|ca|cafile|always-auth|npmRegistryServer"
    r"|enableStrictSsl|unsafeHttpWhitelist|(?:global|install)\.(?:index-url|extra-index-url"
    r"|trusted-host)|channels|default_channels|channel_alias|ssl_verify|repositories\..+"
    r"|certificates\..+",
    re.IGNORECASE,
)
_LOCAL: Final = re.compile(r"--location[= ]project|--site|--local|--env|--file")


def config_command(words: list[str]) -> str | None:
    """``<manager> config set <key> ...`` that changes the index or its checks for every
    later install (`words`: the command's words, the program first): the setting shown, or
    None."""
    if len(words) < 4 or words[0].rsplit("/", 1)[-1] not in _MANAGERS:
        return None
    rest = [w for w in words[1:12] if w]
    if any(_LOCAL.match(w) for w in rest):
        return None
    plain = [w for w in rest if not w.startswith("-") or w in _SETTERS]
    if len(plain) < 3 or plain[0] != "config" or plain[1] not in _SETTERS:
        return None
    key = plain[2].split("=", 1)[0]
    if not _INDEX_KEYS.fullmatch(key):
        return None
    return " ".join(words[:6])[:160]
