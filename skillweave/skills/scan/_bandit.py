"""bandit's general Python checks, run once over all of a skill's Python files.

bandit (PyCQA, ``bandit.core.manager.BanditManager``) reads each file's AST with its plugin
set; only the tests that say something about a skill are kept (:data:`TESTS`), mapped to our
rule ids, and its severity becomes ours (HIGH → high, MEDIUM → medium, LOW → low), one step
lower when bandit's confidence is LOW. ``# nosec`` comments are ignored: a skill's author
must not be able to silence its own scan.

bandit reads files from disk, so the files are written to a private temporary folder for the
one run (a few milliseconds for a typical skill). Its import (~0.1 s, plugin discovery) is
done once, on first use, with stevedore's deprecation warning silenced; its error log lines
about files it cannot parse are silenced too (our own parse reports them).
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from skillweave.config import Severity
from skillweave.skills.imports import PARSE_LOCK
from skillweave.skills.scan._text import Collector, excerpt

TESTS: Final[dict[str, tuple[str, str]]] = {
    # test id: (our rule, why it matters for a skill)
    "B602": ("exec.shell", "subprocess with shell=True"),
    "B604": ("exec.shell", "any call with shell=True"),
    "B605": ("exec.shell", "os.system, os.popen, popen2 and friends start a shell"),
    "B609": ("exec.shell", "wildcards handed to a shell command"),
    "B301": ("exec.deserialization", "pickle runs code while it loads"),
    "B506": ("exec.deserialization", "yaml.load without a safe loader builds objects"),
    "B614": ("exec.deserialization", "torch.load unpickles"),
    "B615": ("exec.deserialization", "Hugging Face downloads without a pinned revision"),
    "B202": ("fs.unsafe-extract", "tarfile.extractall writes where members say"),
    "B323": ("network.insecure-tls", "an unverified SSL context"),
    "B501": ("network.insecure-tls", "requests with verify=False"),
    "B502": ("network.insecure-tls", "SSL with a broken protocol version"),
    "B503": ("network.insecure-tls", "SSL defaults with a broken protocol version"),
    "B504": ("network.insecure-tls", "SSL without a protocol version"),
    "B507": ("network.insecure-tls", "SSH without host key verification"),
}
"""Left out on purpose: eval/exec (B102, B307) and marshal (B302), which our AST walk reads
with their data flow (decoded or fetched code is critical); bidi characters (B613), which
the text rules find in every language; and the tests about code quality or web apps rather
than what a skill does to its host (asserts, weak hashes and random, bare excepts, SQL, XML
parsers, Flask/Django/Jinja, hard-coded passwords and /tmp, subprocess without a shell,
imports of subprocess/pickle, requests without a timeout)."""

_SEVERITIES: Final[dict[str, Severity]] = {"HIGH": "high", "MEDIUM": "medium", "LOW": "low"}
_LOWER: Final[dict[Severity, Severity]] = {
    "critical": "high", "high": "medium", "medium": "low", "low": "low"
}  # fmt: skip


@cache
def _bandit() -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stevedore: verify_requirements is deprecated
        # bandit's extension manager tries every output formatter it knows; one whose extra
        # is not installed (sarif) is logged as an ERROR, and we use none of them.
        logging.getLogger("stevedore.extension").setLevel(logging.CRITICAL)
        from bandit.core import config, manager

        logging.getLogger("bandit").setLevel(logging.CRITICAL)
        return config.BanditConfig(), manager


def bandit_loaded() -> None:
    """Import bandit now (the first scan of Python files otherwise does)."""
    _bandit()


def bandit_version() -> str:
    """bandit's version, read from its metadata (no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bandit")
    except PackageNotFoundError:  # pragma: no cover - it is a locked dependency
        return "absent"


def run_bandit(files: Mapping[str, bytes], out: Collector) -> None:
    """bandit's kept tests over `files` (relative path → Python source), findings into `out`."""
    if not files:
        return
    config, manager = _bandit()
    with tempfile.TemporaryDirectory(prefix="skillweave-scan-") as folder:
        by_disk: dict[str, str] = {}
        for index, (path, data) in enumerate(sorted(files.items())):
            disk = os.path.join(folder, f"{index}.py")  # no package path reaches the disk
            with open(disk, "wb") as handle:
                handle.write(data)
            by_disk[disk] = path
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runner = manager.BanditManager(
                config, "file", ignore_nosec=True, quiet=True, profile={"include": set(TESTS)}
            )
            runner.discover_files(sorted(by_disk))
            runner.run_tests()
            issues = runner.get_issue_list()
    for issue in issues:
        mapped = TESTS.get(issue.test_id)
        path = by_disk.get(os.path.normpath(issue.fname)) or by_disk.get(issue.fname)
        if mapped is None or path is None:
            continue
        severity = _SEVERITIES.get(str(issue.severity), "low")
        if str(issue.confidence) == "LOW":
            severity = _LOWER[severity]
        line = int(issue.lineno) if issue.lineno else None
        text = files[path].decode("utf-8", "replace").split("\n")
        shown = text[line - 1] if line and line <= len(text) else ""
        message = f"{issue.text.rstrip('.')} (bandit {issue.test_id})".replace("\n", " ")
        out.add(mapped[0], path, line, message, excerpt(shown), severity=severity)
