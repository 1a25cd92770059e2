"""The skill scanner (issue 27): every new skill version is scanned before it may be enabled.

:func:`scan_files` reads a package's files (relative POSIX path → bytes) and returns a
:class:`ScanReport` of :class:`Finding` s; :meth:`ScanReport.decision` applies the operator's
policy (``skills.scan.policy``: block, approve or warn by severity). :func:`scan_folder` and
:func:`scan_package` read a folder or a ZIP into the same call. Pure (bytes in, report out;
bandit's run writes the Python files to a private temporary folder) and it never raises.

What it looks for (the full list with severities is :data:`RULES`):

- **scripts** (Python on its :mod:`ast`; JavaScript/TypeScript and shell on linear-time
  tokens and regular expressions): processes through a shell, dynamic code and code run from
  fetched or decoded data, download pipes, reverse shells, writes outside the workspace and
  persistence (crontab, rc files, /etc), credential paths and the environment dumped or sent,
  obfuscation (encoded blobs, packed code, escape walls, minified one-liners);
- **text the model reads** (SKILL.md body and frontmatter values, references, strings and
  comments of scripts): prompt injection (override, exfiltration, role hijack, hidden
  comments), invisible Unicode (zero-width, bidi, tag characters) and homoglyphs;
- **declarations against use**: network use and URLs against ``metadata.network``, packages
  imported against those declared.

Libraries, and why. Python is read with the standard :mod:`ast` plus **bandit** (PyCQA, the
maintained static checker for Python security; ``_bandit`` says which of its tests are kept:
shell spawning, unsafe deserialisation, TLS and host-key checks, tar extraction) rather than
rewriting its call-pattern checks; the skill-specific rules (data flow from decoders and
network reads into exec, path approximation for writes and credential files, environment
dumps) are what bandit does not do, so they are written here on the same :mod:`ast`. No
maintained Python library parses JavaScript and shell well enough to be worth a dependency
(``skills.imports`` made the same call for Node imports), so those are tokenised with
regular expressions. Declarations are read by the modules that own them:
``skills.network.declared_destinations`` for the network, ``skills.dependencies`` and
``skills.imports`` for packages; excerpts are escaped by ``skillweave.terminal``'s rule.

Hostile input: each file is scanned up to ``MAX_FILE_BYTES`` (1 MiB), ``MAX_FILES`` files
(1000); a ZIP is read in memory with both caps and ``MAX_PACKAGE_BYTES`` in all; every
regular expression is linear-time (bounded gaps between disjoint classes); the AST is walked
iteratively and parsing errors (syntax, recursion, memory) become findings; binary and
invalid UTF-8 are read leniently.
"""

from skillweave.skills.scan.report import (
    SEVERITIES,
    Decision,
    Finding,
    FindingOrigin,
    ModelReview,
    ScanReport,
    severity_rank,
)
from skillweave.skills.scan.rules import RULES, RULES_VERSION, Rule
from skillweave.skills.scan.scanner import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_PACKAGE_BYTES,
    SCANNER,
    package_files,
    scan_files,
    scan_folder,
    scan_package,
)

__all__ = [
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_PACKAGE_BYTES",
    "RULES",
    "RULES_VERSION",
    "SCANNER",
    "SEVERITIES",
    "Decision",
    "Finding",
    "FindingOrigin",
    "ModelReview",
    "Rule",
    "ScanReport",
    "package_files",
    "scan_files",
    "scan_folder",
    "scan_package",
    "severity_rank",
]
