"""Write targets named in the skill's own data files: :func:`check_shipped_targets`.

A script can keep its targets out of its code: ``references/manifest.json`` lists entries
such as ``{"path": "~/.config/pip/pip.conf", "append": true, ...}`` and the script opens
``os.path.expanduser(entry["path"])`` for writing. The script alone shows a write to a path
not known; the data alone shows a string. Together they are a write to that path, judged as
the Python rules judge one (``_text.write_target``, ``_text.package_config``): a home path
(``~/...``, ``$HOME/...``, ``%USERPROFILE%\\...``) in a data file (JSON, YAML, TOML, INI)
that a script of the skill (Python, JavaScript or shell) names, takes the home folder
(``expanduser``, ``Path.home()``, ``os.homedir()``, ``$HOME``...) and writes with; a path that
climbs out of the workspace (``../../.config/pip/pip.conf``) onto a file that runs later or a
package manager's configuration, named in a data file a writing script names. Paths in the
data file that stay in the workspace (``src/{{module}}/__init__.py``) are not findings.
Called by ``scanner`` with every file of the skill; text only, bounded (:data:`_MAX_FILES`,
:data:`_MAX_BYTES`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from skillweave.skills.scan._text import Collector, excerpt, package_config, write_target

__all__ = ["check_shipped_targets"]

_MAX_FILES: Final = 50
_MAX_BYTES: Final = 256 * 1024
_DATA_SUFFIXES: Final = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg")
_SCRIPT_SUFFIXES: Final = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash")
_HOME_STRING: Final = re.compile(
    r"""["'=:]\s*["']?((?:~|\$HOME|\$\{HOME\}|%USERPROFILE%)[/\\][^"'\s,\]}]{1,200}"""
    r"""|(?:\.\.[/\\]){1,20}[^"'\s,\]}]{1,200})"""
)
_WRITES: Final = re.compile(
    r"\.write(?:lines|_text|_bytes)?\(|shutil\.(?:copy|move)|os\.(?:replace|rename|symlink)"
    r"|symlink_to|(?:write|append)File(?:Sync)?\(|copyFile|\btee\b|>>"
)
_HOME_CODE: Final = re.compile(
    r"expanduser|\.home\(\)|homedir\(|\$\{?HOME\b|[\"'](?:HOME|USERPROFILE)[\"']|pw_dir"
)
"""A script that takes the home folder (Python, JavaScript or shell)."""


def check_shipped_targets(files: Mapping[str, bytes], out: Collector) -> None:
    """``fs.*`` and ``dependencies.index-config`` for home paths in data files a script
    expands and writes to."""
    writers = _writers(files)
    if not writers:
        return
    for path in sorted(files)[: _MAX_FILES * 4]:
        if not path.lower().endswith(_DATA_SUFFIXES):
            continue
        name = path.rsplit("/", 1)[-1]
        script = next((s for s, text in writers.items() if name in text), None)
        if script is None:
            continue
        home = bool(_HOME_CODE.search(writers[script]))
        text = files[path][:_MAX_BYTES].decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines()[:5000], 1):
            for match in _HOME_STRING.finditer(line):
                _judge(match.group(1), path, number, text=line, script=script, home=home,
                       out=out)  # fmt: skip


def _writers(files: Mapping[str, bytes]) -> dict[str, str]:
    """Scripts that write files: path → text."""
    found: dict[str, str] = {}
    for path in sorted(files)[: _MAX_FILES * 4]:
        if not path.lower().endswith(_SCRIPT_SUFFIXES) or len(found) >= _MAX_FILES:
            continue
        text = files[path][:_MAX_BYTES].decode("utf-8", "replace")
        if _WRITES.search(text):
            found[path] = text
    return found


def _judge(
    target: str, path: str, line: int, *, text: str, script: str, home: bool, out: Collector
) -> None:
    """`target` judged as a write: a home path when `script` takes the home folder; a climb
    out of the workspace when it lands on a file that lasts or a package configuration."""
    rule = write_target(target)
    climbs = target.startswith("..")
    if rule is None or (not climbs and not home):
        return
    if climbs and rule != "fs.persistence" and package_config(target) is None:
        return
    shown = excerpt(text.strip())
    manager = package_config(target)
    where = (
        f"{path} names {target}, which {script} {'joins' if climbs else 'expands'} and writes to"
    )
    if manager is not None:
        out.add("fs.persistence", path, line,
                f"{where}: {manager}'s configuration, read by every later install",
                shown)  # fmt: skip
        out.add("dependencies.index-config", path, line,
                f"{where}: {manager}'s package configuration outside the workspace names "
                "the index later installs use", shown)  # fmt: skip
    elif rule == "fs.persistence":
        out.add(rule, path, line, f"{where}: it runs again later", shown)
    else:
        out.add(rule, path, line, f"{where}, outside the workspace", shown)
