"""The scanner's rules: every rule id, its usual severity and what it looks for, in one table.

A finding's severity may differ from the usual one where the rule says so (a constant shell
command is medium, a dynamic one high; an injection in the ``description`` is critical because
the catalog puts it in front of every agent). :data:`RULES_VERSION` changes whenever a rule is
added, removed or changes what it finds: a report names the rule set that made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from skillweave.config import Severity

__all__ = ["RULES", "RULES_VERSION", "Rule"]

RULES_VERSION: Final = "2"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its id, usual severity and a one-line description."""

    id: str
    severity: Severity
    description: str


RULES: Final[dict[str, Rule]] = {
    rule.id: rule
    for rule in (
        # Scripts: running code.
        Rule("exec.shell", "high", "a process started through a shell (medium for a constant "
             "command): subprocess shell=True, os.system/popen, sh -c, child_process.exec, "
             "shell eval"),
        Rule("exec.dynamic-code", "medium", "code built at run time: eval/exec/compile of a "
             "non-literal, __import__ of a computed name, new Function, vm.runIn*"),
        Rule("exec.decoded-payload", "critical", "code run from fetched or decoded data: "
             "exec(base64/zlib/marshal...), eval of a network response, base64 -d | sh"),
        Rule("exec.remote-pipe", "critical", "a download piped into an interpreter (curl | sh, "
             "bash <(curl ...), iex (iwr ...)); in text, high when the agent is told to run "
             "it, medium in documentation of installing a tool, low where the text negates "
             "it or names it as a danger to look for (no order to run it beside)"),
        Rule("exec.planted-code", "critical", "code written where it runs later on its own "
             "(a .pth or sitecustomize start-up hook, a shell rc file, a crontab, a unit) that "
             "runs, fetches or decodes more code; shown as planted"),
        Rule("exec.reverse-shell", "critical", "a shell wired to a socket (/dev/tcp, nc -e, "
             "os.dup2 of a socket)"),
        Rule("exec.deserialization", "medium", "unsafe deserialisation (pickle, yaml.load, "
             "torch.load; from bandit)"),
        # Scripts: files.
        Rule("fs.write-outside", "high", "a write outside the workspace: an absolute path "
             "(not /tmp), a .. path, the home folder"),
        Rule("fs.persistence", "critical", "a write that survives the run: crontab, shell rc "
             "files, authorized_keys, /etc, autostart, systemd or launchd units, Python start-up "
             "hooks (.pth, sitecustomize), package manager configurations"),
        Rule("fs.unsafe-extract", "medium", "tarfile extraction without a member filter "
             "(from bandit)"),
        Rule("secrets.credential-path", "high", "a credential file named: ~/.ssh, "
             "~/.aws/credentials, ~/.netrc, ~/.docker/config.json, ~/.kube/config, "
             "/etc/shadow, /proc/*/environ (medium for .env files)"),
        Rule("secrets.env-dump", "medium", "the whole environment serialised or written out "
             "(os.environ, process.env, env | ...)"),
        Rule("secrets.exfiltration", "critical", "the environment or a credential file read "
             "by a script that also uses the network; high for text instructing the agent to "
             "send secrets it gathers (medium inside scripts)"),
        # Scripts: obfuscation.
        Rule("obfuscation.encoded-blob", "medium", "a long high-entropy base64 or hex string "
             "(low outside scripts); high for base64, hex or binary in Markdown that decodes "
             "to instructions"),
        Rule("obfuscation.packed-code", "high", "packed code: marshal.loads, chr-joins, "
             "String.fromCharCode chains, walls of \\x escapes, powershell -EncodedCommand"),
        Rule("obfuscation.dynamic-lookup", "high", "a dangerous callable (exec, eval, "
             "os.system, subprocess, pickle, __import__, ctypes) looked up by a name built "
             "or held at run time: getattr, globals()[...], vars(...)[...], __builtins__, "
             "sys.modules; in JavaScript global[...], require('child'+'_process')[...], "
             "process['binding']; in shell a command name cut into pieces ($a$b); critical "
             "when it runs decoded or fetched code"),
        Rule("obfuscation.minified", "medium", "a huge one-line script (low for JavaScript "
             "without dynamic code)"),
        # Declarations against use.
        Rule("network.undeclared", "medium", "network use, or a URL whose host the skill does "
             "not declare under metadata.network (low for a URL in a script without "
             "network use)"),
        Rule("network.undeclared-payload", "high", "network use the skill does not declare, "
             "in a script that deserialises or decodes what it received (high) or runs "
             "code (critical)"),
        Rule("network.undeclared-exfiltration", "high", "network use the skill does not "
             "declare, in a script that sends secrets or the environment out"),
        Rule("network.unused-declaration", "low", "a declared host no script names"),
        Rule("network.invalid-declaration", "medium", "a metadata.network that cannot be read"),
        Rule("network.insecure-tls", "medium", "certificate or host-key checks turned off "
             "(from bandit)"),
        Rule("dependencies.undeclared", "low", "a package the scripts import that nothing "
             "declares"),
        Rule("dependencies.index-config", "high", "a package manager's configuration "
             "(pip.conf, .pypirc, .npmrc, .yarnrc, .condarc, uv, poetry, cargo) written "
             "outside the workspace: every later install uses the index it names"),
        Rule("dependencies.install-script", "high", "a package.json install-time script "
             "(preinstall, install, postinstall, prepare...) that downloads or runs inline "
             "code: npm runs it on install (low for one that runs a file of the package)"),
        Rule("dependencies.unused", "low", "a declared package no script imports"),
        Rule("dependencies.typosquat", "high", "a declared Python package one keystroke "
             "(a letter swapped, dropped, added or transposed) from a popular one's whole "
             "name: a typosquat (python-dateutils, openpyxI, reqeusts)"),
        Rule("dependencies.invalid", "medium", "dependency declarations that cannot be used "
             "(an index option, a URL requirement, a conflict)"),
        Rule("dependencies.untrusted-source", "high", "a requirements.txt, PEP 723, "
             "package.json or metadata.dependencies line "
             "installing from outside the default index: an index or find-links option naming "
             "another host or plain http, --trusted-host, a direct URL or VCS requirement over "
             "http or from a host other than PyPI or a public code host"),
        # Text read by the model.
        Rule("prompt.override", "high", "instructions to ignore or override earlier or system "
             "instructions, claims of priority over other skills or instructions, role "
             "hijacks, hiding actions or destinations from the user (critical in the name or "
             "description; medium inside scripts, high in a tool description's <IMPORTANT> "
             "block; low when quoted in a list of examples to watch for)"),
        Rule("prompt.exfiltration", "high", "instructions to reveal or send secrets, the "
             "environment or the system prompt somewhere, or to put secrets the agent "
             "gathers (credential files, the environment, keys it finds or asks the user "
             "for) into a URL, request, tool argument, reply, file or mail (critical with a "
             "URL or in the name or description; medium "
             "inside scripts, high in a tool description's <IMPORTANT> block)"),
        Rule("prompt.hidden-instructions", "high", "hidden text (tag characters, "
             "zero-width characters, bits, variation selectors, bidi reordering, comments, "
             "base64, hex or binary in Markdown) "
             "that carries instructions: a prompt injection, shown revealed (critical when it "
             "asks for secrets or names a destination, or hides in the frontmatter)"),
        Rule("prompt.html-comment", "high", "an HTML or Markdown comment, or an HTML element "
             "hidden with hidden/display:none, off screen, clipped, transparent or in a "
             "one-pixel box, whose text carries instructions (orders to the "
             "model, secrets, credential files, commands, network destinations)"),
        Rule("text.hidden-unicode", "medium", "text hidden in invisible characters: zero-width "
             "characters, bits in zero-width characters, bytes in variation selectors (medium), "
             "bidi embeddings, overrides and isolates (high; low in right-to-left text), "
             "Unicode tag characters (critical); high when the revealed text carries "
             "instructions"),
        Rule("text.homoglyph", "high", "words mixing Latin with look-alike Cyrillic or Greek "
             "letters (medium), high when that hides an instruction"),
        # The files themselves.
        Rule("script.syntax-error", "medium", "a Python file that does not parse (low outside "
             "scripts/); the text rules still run"),
        Rule("script.binary", "medium", "a native executable (ELF, Mach-O, PE) in the package"),
        Rule("skill.frontmatter", "low", "SKILL.md is missing or its frontmatter cannot be "
             "read, so nothing it declares was checked"),
        Rule("scan.truncated", "low", "a file over the per-file cap: only its start was "
             "scanned"),
        Rule("scan.skipped", "low", "a file or package entry the scanner could not read"),
        Rule("scan.error", "low", "an analyser failed on a file (a scanner bug: report it)"),
        # The model review (skills.scan.review_model): its findings, by attack class, at the
        # severity the model gave (skills.review.rubric says what each class and severity is).
        Rule("review.exec", "high", "model review: code or processes run that the task does "
             "not need (shell, eval, fetched or decoded code)"),
        Rule("review.network", "high", "model review: undeclared network use, data sent out, "
             "fetched data executed or deserialised"),
        Rule("review.secrets", "high", "model review: credentials, keys or the environment "
             "read, or sent"),
        Rule("review.fs", "high", "model review: writes outside the workspace, persistence"),
        Rule("review.prompt", "high", "model review: text instructing the agent against its "
             "user or operator, hidden or not"),
        Rule("review.obfuscation", "medium", "model review: code or text made hard to read on "
             "purpose"),
        Rule("review.dependencies", "medium", "model review: packages from unusual sources, "
             "typo-squats, install-time downloads"),
        Rule("review.deception", "high", "model review: behaviour the skill's name and "
             "description do not admit"),
    )
}  # fmt: skip
"""Rule id → :class:`Rule`."""
