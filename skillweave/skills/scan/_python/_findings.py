"""Where the Python rules report: :class:`Findings`, one file's findings and facts.

Every rule family of the package adds its findings and facts (network use, credentials,
environment dumps) through one of these, made by ``PythonScan`` for the file it scans. The
order of calls is the order of findings, which the collector deduplicates by rule and line
(the first wins), so ``PythonScan`` keeps the families in a fixed order.
"""

from __future__ import annotations

from skillweave.skills.scan._text import Collector, FileFacts, Source

__all__ = ["Findings"]


class Findings:
    """One Python file's findings and facts.

    Args:
        source: the file.
        out: the scan's collector.
    """

    def __init__(self, source: Source, out: Collector) -> None:
        self.source = source
        self.out = out
        self.facts: FileFacts = out.facts_of(source.path)

    def add(self, rule: str, line: int, message: str, *, severity: str | None = None) -> None:
        """A finding of `rule` at `line`, the line as its excerpt (`severity`: one of
        ``SEVERITIES``, when not the rule's usual one)."""
        self.out.add(rule, self.source.path, line, message, self.excerpt(line),
                     severity=severity)  # type: ignore[arg-type]  # fmt: skip

    def excerpt(self, line: int) -> str:
        """The text of `line`, escaped for showing."""
        return self.source.lines.excerpt(line)
