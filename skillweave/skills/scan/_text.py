"""What every analyser of the scanner shares: the collector of findings and facts, line
numbers and excerpts, and the text rules that read any language the same way (URLs,
credential paths, write targets, encoded blobs, escape walls, download pipes). Hidden text
(invisible characters, comments) is ``_hidden``'s and ``_prose``'s.

Every regular expression here is linear in its input: no two adjacent quantified parts can
match the same character (``[^|\\n]{0,400}\\|``, ``(?:[^\\w.]+\\w+){0,3}``), repetition is
bounded where a match could be retried from many starts, and inputs are capped upstream
(``scanner.MAX_FILE_BYTES``).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from skillweave.config import Severity
from skillweave.skills.scan.report import Finding, severity_rank
from skillweave.skills.scan.rules import RULES
from skillweave.terminal import terminal_safe

Language = Literal["python", "javascript", "shell", "powershell", "prose", "data", "binary"]

EXCERPT_CHARS: Final = 160
MAX_FINDINGS_PER_RULE_AND_FILE: Final = 10


@dataclass(slots=True)
class Url:
    """A URL literal in a script."""

    line: int
    url: str
    host: str
    port: int


@dataclass(slots=True)
class FileFacts:
    """What one script does that the package-level rules weigh: network use, URLs, and
    the reads and dumps that become exfiltration when both meet in one file."""

    network: list[tuple[int, str]] = field(default_factory=list)  # (line, what)
    urls: list[Url] = field(default_factory=list)
    env_dumps: list[tuple[int, str]] = field(default_factory=list)  # (line, excerpt)
    credentials: list[tuple[int, str, str]] = field(default_factory=list)  # (line, what, excerpt)


@dataclass(slots=True)
class Source:
    """One file to analyse: its path, its text (decoded leniently) and its language."""

    path: str
    text: str
    language: Language
    in_scripts: bool
    lines: Lines


class Lines:
    """Offsets to 1-based line numbers, and the text of a line."""

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, max(0, offset))

    def text_of(self, line: int) -> str:
        if not 1 <= line <= len(self._starts):
            return ""
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self._text)
        return self._text[start:end]

    def excerpt(self, line: int, *, at: int | None = None) -> str:
        """The line, stripped and cut to :data:`EXCERPT_CHARS` around column `at`."""
        return excerpt(self.text_of(line), at=at)


def excerpt(text: str, *, at: int | None = None) -> str:
    """`text` on one line, invisible characters escaped, cut around `at` when long."""
    text = text.replace("\r", " ").replace("\n", " ")
    if len(text) > EXCERPT_CHARS:
        start = 0 if at is None else max(0, min(at - EXCERPT_CHARS // 3, len(text) - EXCERPT_CHARS))
        text = ("…" if start else "") + text[start : start + EXCERPT_CHARS] + "…"
    return terminal_safe(text.strip())


class Collector:
    """Findings (capped per rule and file, deduplicated by rule and line: the most severe of
    a line's stays) and per-file facts."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.facts: dict[str, FileFacts] = {}
        self._seen: dict[tuple[str, str, int | str], int] = {}
        self._per_file: Counter[tuple[str, str]] = Counter()

    def add(
        self,
        rule: str,
        path: str,
        line: int | None,
        message: str,
        excerpt_text: str = "",
        *,
        severity: Severity | None = None,
    ) -> None:
        key = (rule, path, line if line is not None else message)  # one finding a line
        finding = Finding(
            rule=rule,
            severity=severity or RULES[rule].severity,
            path=path,
            line=line,
            message=message,
            excerpt=excerpt_text,
        )
        index = self._seen.get(key)
        if index is not None:
            if severity_rank(finding.severity) > severity_rank(self.findings[index].severity):
                self.findings[index] = finding
            return
        if self._per_file[(rule, path)] >= MAX_FINDINGS_PER_RULE_AND_FILE:
            return
        self._seen[key] = len(self.findings)
        self._per_file[(rule, path)] += 1
        self.findings.append(finding)

    def at(
        self,
        source: Source,
        rule: str,
        offset: int,
        message: str,
        *,
        severity: Severity | None = None,
    ) -> None:
        """A finding at `offset` of `source`'s text."""
        line = source.lines.line_of(offset)
        column = offset - (source.text.rfind("\n", 0, offset) + 1)
        excerpt_text = source.lines.excerpt(line, at=column)
        self.add(rule, source.path, line, message, excerpt_text, severity=severity)

    @classmethod
    def merged(cls, first: Collector, findings: tuple[Finding, ...]) -> Collector:
        """`first` with `findings` added (as they are)."""
        for finding in findings:
            first.add(finding.rule, finding.path, finding.line, finding.message,
                      finding.excerpt, severity=finding.severity)  # fmt: skip
        return first

    def facts_of(self, path: str) -> FileFacts:
        return self.facts.setdefault(path, FileFacts())


# --- URLs ------------------------------------------------------------------------------------

URL: Final = re.compile(r"\b(?:https?|wss?|ftp)://[^\s'\"<>`(){}\[\]\\|^]{1,2048}", re.IGNORECASE)
_DEFAULT_URL_PORTS: Final = {"http": 80, "ws": 80, "https": 443, "wss": 443, "ftp": 21}
# Hosts that URLs name without anything connecting to them: loopback, the reserved example
# and test domains (RFC 2606, 6761), and the namespace and schema identifiers of XML, JSON
# Schema, JSON-LD and Office formats.
_NOT_CONNECTED_HOSTS: Final = frozenset(
    {
        "localhost", "127.0.0.1", "0.0.0.0", "::1", "www.w3.org", "w3.org", "json-schema.org",
        "schema.org", "purl.org", "xmlns.com", "schemas.openxmlformats.org",
        "schemas.microsoft.com", "ns.adobe.com", "www.apache.org", "opensource.org",
    }
)  # fmt: skip
_NOT_CONNECTED_SUFFIXES: Final = (
    ".example",
    ".invalid",
    ".test",
    ".localhost",
    "example.com",
    "example.org",
    "example.net",
)


def url_target(url: str) -> tuple[str, int] | None:
    """``(host, port)`` a URL literal would connect to; None for URLs nothing connects to
    (loopback, example domains, namespace identifiers) or that are templates."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
        port = parts.port or _DEFAULT_URL_PORTS.get(parts.scheme.lower(), 443)
    except ValueError:
        return None
    if not host or "$" in url.split("/", 3)[2] or "%" in host or "*" in host:
        return None
    if host in _NOT_CONNECTED_HOSTS or host.endswith(_NOT_CONNECTED_SUFFIXES):
        return None
    if not re.fullmatch(r"[a-z0-9.-]{1,253}|\[?[0-9a-f:.]{2,45}\]?", host):
        return None
    return host, port


def collect_urls(text: str, line_of: Callable[[int], int], facts: FileFacts) -> None:
    """Record the URLs in `text`; `line_of` gives the line of an offset in `text`."""
    for match in URL.finditer(text):
        url = match.group().rstrip(".,;:!?'\"")
        target = url_target(url)
        if target is not None:
            line = line_of(match.start())
            facts.urls.append(Url(line=line, url=url, host=target[0], port=target[1]))


# --- credential paths and write targets ------------------------------------------------------

_HOME_WORDS: Final = re.compile(r"\$\{?HOME\}?|%USERPROFILE%|\$env:USERPROFILE|\$env:HOME", re.I)
_EDGE: Final = r"(?:^|[/\\~])"
_END: Final = r"(?=$|[/\\])"
_ENV_TEMPLATES: Final = r"(?:example|sample|template|dist|defaults?|tpl|in)"
"""The suffixes of a ``.env`` template (``.env.example``): variable names, no credentials."""
CREDENTIAL_PATHS: Final[tuple[tuple[re.Pattern[str], str, Severity], ...]] = tuple(
    (re.compile(pattern, re.IGNORECASE), what, severity)
    for pattern, what, severity in (
        (rf"{_EDGE}\.ssh{_END}|{_EDGE}id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?$", "SSH keys", "high"),
        (rf"{_EDGE}\.aws{_END}", "AWS credentials", "high"),
        (rf"{_EDGE}[._]netrc$", "~/.netrc", "high"),
        (rf"{_EDGE}\.docker{_END}", "Docker credentials", "high"),
        (rf"{_EDGE}\.kube{_END}", "Kubernetes credentials", "high"),
        (r"^/etc/(?:shadow|gshadow|sudoers|master\.passwd)$", "system password hashes", "high"),
        (r"^/proc/[^/]{1,12}/environ$", "a process environment", "high"),
        (rf"{_EDGE}\.(?:git-credentials|pypirc|npmrc|pgpass|vault-token){_END}", "a token file",
         "high"),
        (rf"{_EDGE}\.(?:gnupg|password-store|azure){_END}|\.config/(?:gcloud|gh)\b"
         r"|Library/Keychains|/Login Data$", "a credential store", "high"),
        (rf"{_EDGE}\.env(?!\.{_ENV_TEMPLATES}$)(?:\.[A-Za-z0-9_-]{{1,20}})?$", "a .env file",
         "medium"),
    )
)  # fmt: skip
_PERSISTENCE: Final = re.compile(
    r"(?:^|/)\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv"
    r"|zlogin|cshrc|tcshrc|kshrc|inputrc)$"
    r"|(?:^|/)\.config/fish/|(?:^|/)\.ssh/(?:authorized_keys2?|config|rc)$"
    r"|^/etc/(?:cron|crontab|anacrontab|profile|bash\.bashrc|zsh|rc\.local|systemd|init\.d|init/"
    r"|sudoers|ld\.so\.preload|environment|xdg/autostart)"
    r"|^/var/spool/cron|(?:^|/)\.config/(?:autostart|systemd)/|/Library/Launch(?:Agents|Daemons)/"
    r"|(?:^|/)\.git/hooks/|(?:^|/)(?:site|user)customize\.py$"
    r"|(?:^|/)Start Menu/Programs/Startup/|(?:^|/)[^/]{0,40}PowerShell_profile\.ps1$"
    # a .pth file runs at start-up only from a site folder (elsewhere it is, say, weights)
    r"|(?:(?:site|dist)-packages|/lib/python[0-9.]*)/[^/]*\.pth$",
    re.IGNORECASE,
)
_HOME_LASTING: Final = re.compile(
    r"(?:^|/)\.(?:vimrc|gvimrc|exrc|emacs|tmux\.conf|screenrc|xinitrc|xprofile|xsession"
    r"|xsessionrc|pam_environment|gitconfig|hgrc|wgetrc|curlrc|Rprofile|pythonrc|pythonstartup"
    r"|pythonrc\.py)$"
    r"|(?:^|/)\.(?:vim|emacs\.d|config/nvim|config/git|config/environment\.d|gradle/init\.d"
    r"|ipython/profile_[^/]{1,40}/startup|docker/cli-plugins|local/share/applications"
    r"|local/share/systemd|config/upstart|config/plasma-workspace/env|kde4?/Autostart)/"
    r"|(?:^|/)\.(?:docker/config\.json|kube/config|aws/config|config/git/config)$"
    r"|(?:^|/)\.config/(?:Code|VSCodium)/User/(?:settings|tasks)\.json$",
    re.IGNORECASE,
)
"""Configuration in the home folder that runs commands the next time a tool starts (an
editor's start-up files, git's and docker's helpers, kube's exec plugins, shells' session
files): persistence when written in the home folder, or reached by climbing there, but
ordinary files inside a project (a workspace's own ``.vim/`` or ``.gitconfig`` fixture)."""
_MAX_PARTS: Final = 64
_ALLOWED_ABSOLUTE: Final = re.compile(
    r"^/(?:tmp(?:/|$)|var/tmp/|dev/(?:null|stdout|stderr|fd/|tty$))"
)


def normal_path(path: str) -> str:
    """A path as written with ``$HOME`` and friends read as ``~``, quotes dropped."""
    return _HOME_WORDS.sub("~", path.strip().strip("'\"`"))


def credential_path(path: str) -> tuple[str, Severity] | None:
    """What credential a path-like string names, and how bad reading it is; None when none."""
    if not path or len(path) > 512 or any(c.isspace() for c in path):
        return None
    path = normal_path(path)
    for pattern, what, severity in CREDENTIAL_PATHS:
        if pattern.search(path):
            return what, severity
    return None


_PACKAGE_CONFIGS: Final = (
    (re.compile(r"(?:^|/)pip\.(?:conf|ini)$|(?:^|/)\.config/pip/|(?:^|/)\.pip/", re.I), "pip"),
    (re.compile(r"(?:^|/)\.pypirc$|(?:^|/)\.pydistutils\.cfg$", re.I), "pip"),
    (re.compile(r"(?:^|/)\.config/uv/|(?:^|/)uv\.toml$", re.I), "uv"),
    (re.compile(r"(?:^|/)\.config/pypoetry/|pypoetry/config\.toml$", re.I), "poetry"),
    (re.compile(r"(?:^|/)\.npmrc$|(?:^|/)npmrc$", re.I), "npm"),
    (re.compile(r"(?:^|/)\.yarnrc(?:\.yml)?$", re.I), "yarn"),
    (re.compile(r"(?:^|/)\.condarc$|(?:^|/)\.conda/", re.I), "conda"),
    (re.compile(r"(?:^|/)\.cargo/config(?:\.toml)?$", re.I), "cargo"),
    (re.compile(r"(?:^|/)\.gemrc$|(?:^|/)\.bunfig\.toml$", re.I), "gem/bun"),
)  # fmt: skip
"""Package managers' configuration files: writing one outside the workspace redirects
every later install (``dependencies.index-config``), for every language's rules."""


def package_config(path: str) -> str | None:
    """The package manager whose configuration `path` is (``pip``, ``npm``...); None."""
    for pattern, manager in _PACKAGE_CONFIGS:
        if pattern.search(path):
            return manager
    return None


_INDEX_SETTING: Final = re.compile(
    r"^[ \t]{0,20}[\"']?(@[\w.-]{1,60}:registry|[\w.-]{1,40})[\"']?[ \t]{0,20}[=:][ \t]{0,20}"
    r"[\"']?([a-z][a-z0-9+.-]{0,20}://[^\s\"']{1,300})",
    re.IGNORECASE | re.MULTILINE,
)
_INDEX_KEYS: Final = frozenset(
    {"index-url", "index_url", "extra-index-url", "extra_index_url", "find-links", "find_links",
     "url", "registry", "npmregistryserver", "repository", "channel_alias", "default_channels",
     "channels", "index", "registries", "source", "mirror", "mirrors"}
)  # fmt: skip
_DEFAULT_INDEXES: Final = frozenset(
    {"pypi.org", "pypi.python.org", "files.pythonhosted.org", "upload.pypi.org",
     "test.pypi.org", "registry.npmjs.org", "registry.yarnpkg.com", "conda.anaconda.org",
     "repo.anaconda.com", "crates.io", "index.crates.io", "rubygems.org"}
)  # fmt: skip


def index_setting(config: str) -> str | None:
    """The setting of a package manager's configuration text `config` that points installs
    at an index other than the language's public one (``index-url = https://...``,
    ``@acme:registry=...``, ``npmRegistryServer: ...``, uv's ``[[index]] url``); None when
    it names none."""
    for match in _INDEX_SETTING.finditer(config[:65536]):
        key = match.group(1).lower()
        if key not in _INDEX_KEYS and not key.endswith(":registry"):
            continue
        host = (urlsplit(match.group(2)).hostname or "").lower()
        if host and host not in _DEFAULT_INDEXES:
            return f"{match.group(1)} = {match.group(2)}"[:200]
    return None


def write_target(path: str) -> Literal["fs.write-outside", "fs.persistence"] | None:
    """Which rule writing to `path` breaks; None when it stays in the workspace (relative
    paths, /tmp, the package's own folder ``@pkg``) or is unknown (``*``). A path that climbs
    above the folder it starts from (``*/../../.config/pip/pip.conf``, ``@pkg/../../..``,
    ``out/../../x``) is outside; from a folder not known (``*``, ``@pkg``) only when it lands
    on a file that lasts (:func:`lasting`) or a package manager's configuration."""
    path = normal_path(path).replace("\\", "/")
    if not path:
        return None
    if path.startswith(("*", "@pkg")):
        ups, rest = climb(path)
        if not ups or not rest:
            return None
        if lasting("/" + rest):
            return "fs.persistence"
        return "fs.write-outside" if package_config(rest) else None
    if _PERSISTENCE.search(path) or (path.startswith("~") and _HOME_LASTING.search(path)):
        return "fs.persistence"
    if path.startswith("~") or re.match(r"[A-Za-z]:/", path):
        return "fs.write-outside"
    if path.startswith("/"):
        return None if _ALLOWED_ABSOLUTE.match(path) else "fs.write-outside"
    ups, rest = climb(path)
    if ups:
        return "fs.persistence" if _HOME_LASTING.search(rest) else "fs.write-outside"
    return None


def lasting(path: str) -> bool:
    """Whether `path` names a file that runs again later wherever its folder is (a shell's
    rc file, ``.ssh/authorized_keys``, an autostart or systemd unit, a git hook, a crontab,
    a Python start-up file), read on the path as written: ``*/.ssh/authorized_keys`` is one
    too, its folder not known."""
    path = normal_path(path).replace("\\", "/")
    return bool(_PERSISTENCE.search(path) or _HOME_LASTING.search(path))


def climb(path: str) -> tuple[int, str]:
    """How many folders `path` climbs above the one it starts from (``*``, ``@pkg``, ``.`` or
    its first folder), and what it names from the highest folder reached:
    ``*/../../.config/pip/pip.conf`` → ``(2, ".config/pip/pip.conf")``, ``a/../b`` →
    ``(0, "b")``. A ``*`` inside the path counts as one folder."""
    parts = path.replace("\\", "/").split("/")[:_MAX_PARTS]
    if parts[0] in ("*", "@pkg", "."):
        parts = parts[1:]
    kept: list[str] = []
    ups = 0
    for part in parts:
        if part in ("", "."):
            continue
        if part != "..":
            kept.append(part)
        elif kept:
            kept.pop()
        else:
            ups += 1
    return ups, "/".join(kept)


# --- encoded blobs, escape walls, long lines, download pipes ---------------------------------

HIDDEN_RUN: Final = re.compile(
    "[\ufe00-\ufe0f\U000e0100-\U000e01ef\U000e0000-\U000e007f]{8,}"
    "|[\u200b-\u200d\u2060-\u2064\ufeff]{16,}"
)
"""Invisible characters in a row in a string of code, more than an emoji's presentation
selector, a subdivision flag's tags or a list of zero-width characters to strip hold: text
encoded in them (a byte per variation selector, ASCII in tags, bits in zero-width ones).
The Python and JavaScript flows take such a string for decoded data."""

BLOB_CHARS: Final = 200
_BASE64_RUN: Final = re.compile(rf"[A-Za-z0-9+/_-]{{{BLOB_CHARS},}}={{0,2}}")
_HEX_RUN: Final = re.compile(rf"(?:0x)?[0-9a-fA-F]{{{BLOB_CHARS},}}")
_BASE64_ENTROPY: Final = 4.5  # bits a character; random base64 has about 5.9, prose under 4.2
_HEX_ENTROPY: Final = 3.0  # random hex has about 4
_DATA_IMAGE: Final = re.compile(r"data:image/[\w.+-]{1,20};base64,\s*$", re.IGNORECASE)
_ESCAPE_WALL: Final = re.compile(
    r"(?:\\x[0-9a-fA-F]{2}){24,}|(?:\\u00[0-9a-fA-F]{2}){24,}|(?:\\[0-7]{3}){24,}"
)
LONG_LINE: Final = 1000
"""A script line longer than this is a minified or packed one-liner."""
_JS_LONG_LINE: Final = 5000

_FETCHER: Final = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)"
_RUNNER: Final = (
    r"(?:sudo\s+(?:-\S+\s+){0,3})?(?:env\s+)?(?:/usr/(?:local/)?bin/|/bin/)?"
    r"(?:(?:ba|z|da|k|c|tc|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression)"
)
REMOTE_PIPES: Final = (
    re.compile(rf"\b{_FETCHER}\b[^|\n;&]{{0,400}}\|\s*{_RUNNER}\b", re.IGNORECASE),
    re.compile(rf"(?:\b(?:ba|z|k)?sh|\bsource|(?<![\w.])\.)\s+<\(\s*{_FETCHER}\b", re.IGNORECASE),
    re.compile(
        rf"(?:\b(?:ba|z|k)?sh\s+-c|\beval|\bpython[0-9.]*\s+-c|\b(?:node|perl|ruby)\s+-e)\s+"
        rf"[\"']?\$\(\s*{_FETCHER}\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:iex|invoke-expression)\b[^\n]{0,200}\b(?:downloadstring|iwr|invoke-webrequest"
        r"|irm|invoke-restmethod)\b",
        re.IGNORECASE,
    ),
)
DECODE_PIPE: Final = re.compile(
    r"\b(?:base64\s+(?:-d|--decode|-D)|xxd\s+-r|openssl\s+(?:enc\s+)?-d|gunzip|zcat)\b"
    rf"[^\n;&]{{0,200}}\|\s*{_RUNNER}\b",
    re.IGNORECASE,
)
_ENCODED_COMMAND: Final = re.compile(r"-(?:EncodedCommand|enc|ec|e)\s+[A-Za-z0-9+/=]{40,}", re.I)


def entropy(text: str) -> float:
    """Shannon entropy of `text`, in bits a character."""
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def scan_text_rules(source: Source, out: Collector, text: str | None = None) -> None:
    """The rules read on the raw text of a script, whatever its language: download pipes,
    decoded payloads piped to a shell, encoded blobs, escape walls, long lines."""
    text = source.text if text is None else text
    for pattern in REMOTE_PIPES:
        for match in pattern.finditer(text):
            out.at(source, "exec.remote-pipe", match.start(),
                   "a download is piped into an interpreter")  # fmt: skip
    for match in DECODE_PIPE.finditer(text):
        out.at(source, "exec.decoded-payload", match.start(),
               "decoded data is piped into an interpreter")  # fmt: skip
    if source.language == "powershell" or "powershell" in text.lower():
        for match in _ENCODED_COMMAND.finditer(text):
            out.at(source, "obfuscation.packed-code", match.start(),
                   "a PowerShell command passed base64-encoded")  # fmt: skip
    blobs(source, out, script=True)
    for match in _ESCAPE_WALL.finditer(text):
        out.at(source, "obfuscation.packed-code", match.start(),
               f"a wall of {len(match.group()) // 4}+ escaped bytes")  # fmt: skip


def blobs(source: Source, out: Collector, *, script: bool) -> None:
    """Long high-entropy base64 or hex runs: medium in a script, low elsewhere; a data URI of
    an image is low in a script and ignored elsewhere."""
    text = source.text
    for match in _BASE64_RUN.finditer(text):
        run = match.group()
        hexadecimal = _HEX_RUN.fullmatch(run) is not None
        if entropy(run[:4096]) < (_HEX_ENTROPY if hexadecimal else _BASE64_ENTROPY):
            continue
        image = _DATA_IMAGE.search(text, max(0, match.start() - 40), match.start()) is not None
        if image and not script:
            continue
        kind = "hex" if hexadecimal else "base64"
        severity: Severity = "medium" if script and not image else "low"
        out.at(source, "obfuscation.encoded-blob", match.start(),
               f"a {len(run):,}-character {kind} blob", severity=severity)  # fmt: skip


def long_lines(source: Source, out: Collector, *, dynamic: bool) -> None:
    """A script line longer than :data:`LONG_LINE`: medium, but low for JavaScript without
    dynamic code (vendored minified libraries)."""
    limit = _JS_LONG_LINE if source.language == "javascript" else LONG_LINE
    for line_number, line in enumerate(source.text.split("\n"), start=1):
        if len(line) > limit:
            severity: Severity = (
                "low" if source.language == "javascript" and not dynamic else "medium"
            )
            message = f"a {len(line):,}-character line"
            out.add("obfuscation.minified", source.path, line_number, message, excerpt(line),
                    severity=severity)  # fmt: skip
