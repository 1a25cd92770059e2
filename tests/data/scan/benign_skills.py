"""The benign library of the scanner's corpus: realistic skills that must not be flagged at
medium or above (``make_corpus.py`` writes them to ``benign/``).

They are written to be a fair test, not easy ones: API clients that declare their hosts,
subprocess without a shell, environment variables passed to children, scripts that read
their own references and write to ``outputs/`` or ``/tmp``, a base64 image in a reference,
JSON Schema and SVG namespace URLs, hashes, docs that say "ignore" harmlessly, text in
other scripts (Cyrillic, Arabic, Japanese, emoji with zero-width joiners), JavaScript and
shell as well as Python.
"""

from __future__ import annotations

import base64
import struct
import zlib


def _skill(name: str, description: str, body: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body.strip()}\n"


def _png(width: int, height: int) -> bytes:
    raw = b"".join(
        b"\x00" + bytes((x * 7 + y * 13) % 256 for x in range(width * 3)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )  # fmt: skip


_LOGO = base64.b64encode(_png(24, 24)).decode()

BENIGN: dict[str, dict[str, str | bytes]] = {}


def benign(name: str, description: str, body: str, files: dict[str, str | bytes],
           extra: str = "") -> None:  # fmt: skip
    BENIGN[name] = {"SKILL.md": _skill(name, description, body, extra), **files}


# --- data processing ---------------------------------------------------------------------------

benign(
    "csv-stats",
    "Compute per-column statistics (count, mean, min, max) of CSV files.",
    """# CSV stats

Run `scripts/stats.py inputs/data.csv`. Empty cells are ignored; non-numeric columns get
counts only. Results go to `outputs/stats.json`.
""",
    {
        "scripts/stats.py": '''"""Per-column statistics of a CSV file."""

import csv
import json
import statistics
import sys
from pathlib import Path


def numeric(values):
    out = []
    for value in values:
        try:
            out.append(float(value))
        except ValueError:
            continue
    return out


def main(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    report = {}
    for column in rows[0] if rows else []:
        values = [row[column] for row in rows if row[column] != ""]
        numbers = numeric(values)
        entry = {"count": len(values)}
        if numbers:
            entry.update(mean=statistics.fmean(numbers), min=min(numbers), max=max(numbers))
        report[column] = entry
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/stats.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
'''
    },
)

benign(
    "json-flatten",
    "Flatten nested JSON documents into dotted key/value rows.",
    "# JSON flatten\n\nRun `scripts/flatten.py file.json`; arrays become `key.0`, `key.1`.",
    {
        "scripts/flatten.py": """import json
import sys


def flatten(value, prefix=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from flatten(inner, f"{prefix}{index}.")
    else:
        yield prefix.rstrip("."), value


with open(sys.argv[1], encoding="utf-8") as handle:
    for key, value in flatten(json.load(handle)):
        print(f"{key}\\t{value}")
"""
    },
)

benign(
    "excel-to-csv",
    "Convert every sheet of an .xlsx workbook to CSV files.",
    "# Excel to CSV\n\nRun `scripts/convert.py book.xlsx`. One CSV per sheet in outputs/.",
    {
        "requirements.txt": "openpyxl>=3.1\n",
        "scripts/convert.py": """import csv
import sys
from pathlib import Path

from openpyxl import load_workbook

book = load_workbook(sys.argv[1], read_only=True, data_only=True)
out = Path("outputs")
out.mkdir(exist_ok=True)
for sheet in book.worksheets:
    with open(out / f"{sheet.title}.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        for row in sheet.iter_rows(values_only=True):
            writer.writerow(["" if cell is None else cell for cell in row])
""",
    },
)

benign(
    "yaml-lint",
    "Check YAML files for syntax errors and duplicate keys.",
    "# YAML lint\n\nRun `scripts/lint.py config.yaml`. Comments are ignored.",
    {
        "requirements.txt": "pyyaml==6.0.2\n",
        "scripts/lint.py": """import sys

import yaml

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        try:
            yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            print(f"{path}: {exc}")
            sys.exit(1)
print("ok")
""",
    },
)

benign(
    "markdown-toc",
    "Generate a table of contents for a Markdown file.",
    "# Markdown TOC\n\nRun `scripts/toc.py README.md`. Headings inside code fences are ignored.",
    {
        "scripts/toc.py": """import re
import sys

fence = False
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("```"):
        fence = not fence
        continue
    match = re.match(r"(#{2,4}) (.+)", line)
    if match and not fence:
        depth = len(match.group(1)) - 2
        anchor = re.sub(r"[^a-z0-9 -]", "", match.group(2).lower()).replace(" ", "-")
        print(f"{'  ' * depth}- [{match.group(2)}](#{anchor})")
"""
    },
)

benign(
    "word-frequency",
    "Count word frequencies in text files with a shell pipeline.",
    "# Word frequency\n\nRun `scripts/freq.sh inputs/*.txt`. Case is ignored.",
    {
        "scripts/freq.sh": """#!/usr/bin/env bash
# Top 50 words of the given files; case is ignored.
set -euo pipefail
mkdir -p outputs
cat "$@" | tr '[:upper:]' '[:lower:]' | tr -cs '[:alpha:]' '\\n' | sort | uniq -c | sort -rn \\
  | head -50 > outputs/frequency.txt
echo "wrote outputs/frequency.txt" >&2
"""
    },
)

benign(
    "date-normalizer",
    "Normalise dates in CSV columns to ISO 8601.",
    "# Date normaliser\n\nRun `scripts/dates.py file.csv column`.",
    {
        "requirements.txt": "python-dateutil>=2.8\n",
        "scripts/dates.py": """import csv
import sys

from dateutil import parser

path, column = sys.argv[1], sys.argv[2]
with open(path, newline="") as source, open("outputs/dates.csv", "w", newline="") as target:
    reader = csv.DictReader(source)
    writer = csv.DictWriter(target, reader.fieldnames)
    writer.writeheader()
    for row in reader:
        try:
            row[column] = parser.parse(row[column]).date().isoformat()
        except (ValueError, OverflowError):
            pass
        writer.writerow(row)
""",
    },
)

benign(
    "dedupe-lines",
    "Remove duplicate lines from text files, keeping the first.",
    "# Dedupe lines\n\nRun `node scripts/dedupe.js file.txt`.",
    {
        "scripts/dedupe.js": """#!/usr/bin/env node
const fs = require("fs");
const path = require("path");

const input = process.argv[2];
const seen = new Set();
const kept = fs.readFileSync(input, "utf8").split(/\\r?\\n/).filter((line) => {
  if (seen.has(line)) return false;
  seen.add(line);
  return true;
});
fs.mkdirSync("outputs", { recursive: true });
fs.writeFileSync(path.join("outputs", path.basename(input)), kept.join("\\n"));
"""
    },
)

benign(
    "csv-to-json",
    "Convert CSV to a JSON array of objects.",
    "# CSV to JSON\n\nRun `node scripts/convert.mjs data.csv`.",
    {
        "scripts/convert.mjs": """import { readFile, writeFile, mkdir } from "node:fs/promises";

const [, , input] = process.argv;
const [header, ...rows] = (await readFile(input, "utf8")).trim().split("\\n");
const keys = header.split(",");
const records = rows.map((row) => Object.fromEntries(row.split(",").map((v, i) => [keys[i], v])));
await mkdir("outputs", { recursive: true });
await writeFile("outputs/data.json", JSON.stringify(records, null, 2));
"""
    },
)

benign(
    "log-level-counter",
    "Count log lines per level (DEBUG, INFO, WARN, ERROR).",
    "# Log level counter\n\nRun `scripts/levels.sh app.log`. Lines without a level are ignored.",
    {
        "scripts/levels.sh": """#!/bin/sh
for level in DEBUG INFO WARN ERROR; do
  printf '%s %s\\n' "$level" "$(grep -c "$level" "$1" 2>/dev/null || true)"
done | tee outputs/levels.txt
"""
    },
)

benign(
    "sql-formatter",
    "Format SQL queries with consistent keywords and indentation.",
    "# SQL formatter\n\nRun `scripts/format.py query.sql`.",
    {
        "requirements.txt": "sqlparse>=0.5\n",
        "scripts/format.py": """import sys

import sqlparse

text = open(sys.argv[1], encoding="utf-8").read()
print(sqlparse.format(text, reindent=True, keyword_case="upper"))
""",
    },
)

benign(
    "unit-table",
    "Print conversion tables between metric and imperial units.",
    "# Unit table\n\nRun `scripts/table.py length`.",
    {
        "scripts/table.py": """import sys

FACTORS = {
    "length": [("mm", "in", 0.0393701), ("m", "ft", 3.28084), ("km", "mi", 0.621371)],
    "mass": [("g", "oz", 0.035274), ("kg", "lb", 2.20462)],
}

for metric, imperial, factor in FACTORS[sys.argv[1]]:
    for value in (1, 10, 100):
        print(f"{value} {metric} = {value * factor:.3f} {imperial}")
"""
    },
)

benign(
    "regex-tester",
    "Test a regular expression against sample lines.",
    "# Regex tester\n\nRun `scripts/test_regex.py 'pattern' samples.txt`. Use `-i` to ignore case.",
    {
        "scripts/test_regex.py": """import argparse
import re

parser = argparse.ArgumentParser(description="Test a pattern against lines.")
parser.add_argument("pattern")
parser.add_argument("samples")
parser.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
args = parser.parse_args()
flags = re.IGNORECASE if args.ignore_case else 0
compiled = re.compile(args.pattern, flags)
for number, line in enumerate(open(args.samples, encoding="utf-8"), start=1):
    match = compiled.search(line)
    print(number, "match" if match else "-", line.rstrip())
"""
    },
)

benign(
    "text-diff",
    "Show a unified diff between two text files.",
    "# Text diff\n\nRun `scripts/diff.py old.txt new.txt`.\n"
    "Whitespace-only changes can be ignored with `-w`.",
    {
        "scripts/diff.py": """import difflib
import sys

ignore_space = "-w" in sys.argv
paths = [a for a in sys.argv[1:] if a != "-w"]
old, new = (open(p, encoding="utf-8").read().splitlines() for p in paths)
if ignore_space:
    old, new = [" ".join(l.split()) for l in old], [" ".join(l.split()) for l in new]
sys.stdout.writelines(line + "\\n" for line in difflib.unified_diff(old, new, *paths, lineterm=""))
"""
    },
)

benign(
    "checksum-verify",
    "Verify files against a SHA-256 checksum list.",
    """# Checksum verify

Run `scripts/verify.py SHA256SUMS`. The reference digest of the sample file is
`9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`.
""",
    {
        "scripts/verify.py": """import hashlib
import sys

EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

for line in open(sys.argv[1], encoding="utf-8"):
    digest, name = line.split(maxsplit=1)
    actual = hashlib.sha256(open(name.strip(), "rb").read()).hexdigest()
    status = "OK" if actual == digest else "FAILED"
    if actual == EMPTY:
        status += " (empty file)"
    print(f"{name.strip()}: {status}")
"""
    },
)

# --- API clients that declare their network --------------------------------------------------

benign(
    "github-issues",
    "List open GitHub issues of a repository, with labels.",
    "# GitHub issues\n\nRun `scripts/issues.py owner/repo`. Set `GITHUB_TOKEN` for private repos.",
    {
        "requirements.txt": "requests>=2.31\n",
        "scripts/issues.py": """import os
import sys

import requests

API = "https://api.github.com"
headers = {"Accept": "application/vnd.github+json"}
token = os.environ.get("GITHUB_TOKEN")
if token:
    headers["Authorization"] = f"Bearer {token}"
response = requests.get(f"{API}/repos/{sys.argv[1]}/issues", headers=headers, timeout=10)
response.raise_for_status()
for issue in response.json():
    labels = ", ".join(label["name"] for label in issue["labels"])
    print(f"#{issue['number']} {issue['title']} [{labels}]")
""",
    },
    extra="metadata:\n  network:\n    api.github.com: reads the repository's issues\n",
)

benign(
    "weather-forecast",
    "Three-day weather forecast for a latitude and longitude.",
    "# Weather forecast\n\nRun `scripts/forecast.py 48.85 2.35`.",
    {
        "scripts/forecast.py": """import json
import sys
import urllib.parse
import urllib.request

params = urllib.parse.urlencode({
    "latitude": sys.argv[1],
    "longitude": sys.argv[2],
    "daily": "temperature_2m_max,temperature_2m_min",
    "forecast_days": 3,
})
with urllib.request.urlopen(f"https://api.open-meteo.com/v1/forecast?{params}", timeout=10) as r:
    daily = json.load(r)["daily"]
for day, high, low in zip(daily["time"], daily["temperature_2m_max"], daily["temperature_2m_min"]):
    print(f"{day}: {low}..{high} °C")
"""
    },
    extra="metadata:\n  network: [api.open-meteo.com]\n",
)

benign(
    "exchange-rates",
    "Convert amounts between currencies with daily reference rates.",
    "# Exchange rates\n\nRun `scripts/rates.py 100 EUR USD`.",
    {
        "requirements.txt": "httpx>=0.27\n",
        "scripts/rates.py": """import sys

import httpx

amount, source, target = float(sys.argv[1]), sys.argv[2], sys.argv[3]
with httpx.Client(base_url="https://api.frankfurter.app", timeout=10) as client:
    rates = client.get("/latest", params={"from": source, "to": target}).json()["rates"]
print(f"{amount} {source} = {amount * rates[target]:.2f} {target}")
""",
    },
    extra="metadata:\n  network: api.frankfurter.app\n",
)

benign(
    "hn-top",
    "Top Hacker News stories of the moment.",
    "# HN top\n\nRun `scripts/top.py 10`.",
    {
        "scripts/top.py": """import json
import sys
from urllib.request import urlopen

BASE = "https://hacker-news.firebaseio.com/v0"
count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ids = json.load(urlopen(f"{BASE}/topstories.json", timeout=10))[:count]
for story_id in ids:
    item = json.load(urlopen(f"{BASE}/item/{story_id}.json", timeout=10))
    print(item.get("score"), item.get("title"))
"""
    },
    extra="metadata:\n  network:\n    - hacker-news.firebaseio.com\n",
)

benign(
    "wiki-summary",
    "Fetch the summary paragraph of a Wikipedia article.",
    "# Wiki summary\n\nRun `node scripts/summary.js 'Alan Turing'`.",
    {
        "scripts/summary.js": """const title = encodeURIComponent(process.argv.slice(2).join(" "));
const url = `https://en.wikipedia.org/api/rest_v1/page/summary/${title}`;
const response = await fetch(url, { headers: { "User-Agent": "wiki-summary-skill" } });
if (!response.ok) {
  console.error(`HTTP ${response.status}`);
  process.exit(1);
}
const data = await response.json();
console.log(data.extract);
"""
    },
    extra="metadata:\n  network:\n    en.wikipedia.org: reads article summaries\n",
)

benign(
    "npm-info",
    "Show the latest version and license of npm packages.",
    "# npm info\n\nRun `node scripts/info.js lodash express`.",
    {
        "scripts/info.js": """const https = require("https");

function get(name) {
  return new Promise((resolve, reject) => {
    https.get(`https://registry.npmjs.org/${name}/latest`, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(JSON.parse(body)));
    }).on("error", reject);
  });
}

for (const name of process.argv.slice(2)) {
  get(name).then((info) => console.log(`${name}@${info.version} ${info.license}`));
}
"""
    },
    extra="metadata:\n  network: [registry.npmjs.org]\n",
)

benign(
    "pypi-versions",
    "List the released versions of a PyPI project.",
    "# PyPI versions\n\nRun `scripts/versions.py requests`.",
    {
        "scripts/versions.py": """# /// script
# dependencies = ["requests>=2.31", "packaging>=24"]
# ///
import sys

import requests
from packaging.version import Version

data = requests.get(f"https://pypi.org/pypi/{sys.argv[1]}/json", timeout=10).json()
for version in sorted(data["releases"], key=Version)[-10:]:
    print(version)
"""
    },
    extra="metadata:\n  network: pypi.org\n",
)

benign(
    "slack-notify",
    "Post a short message to a Slack channel through an incoming webhook.",
    """# Slack notify

Run `scripts/notify.sh "Build finished"`. The webhook URL comes from `SLACK_WEBHOOK_URL`,
which the operator binds; the script never prints it.
""",
    {
        "scripts/notify.sh": """#!/usr/bin/env bash
set -euo pipefail
message="${1:?message required}"
payload=$(printf '{"text": "%s"}' "$message")
curl -sS -X POST -H 'Content-Type: application/json' -d "$payload" "$SLACK_WEBHOOK_URL" >/dev/null
echo "sent"
"""
    },
    extra="metadata:\n  network:\n    hooks.slack.com: posts the message\n",
)

benign(
    "geocode",
    "Turn addresses into coordinates with OpenStreetMap Nominatim.",
    "# Geocode\n\nRun `scripts/geocode.py '10 Downing Street, London'`.",
    {
        "requirements.txt": "requests\n",
        "scripts/geocode.py": """import sys

import requests

response = requests.get(
    "https://nominatim.openstreetmap.org/search",
    params={"q": " ".join(sys.argv[1:]), "format": "json", "limit": 1},
    headers={"User-Agent": "geocode-skill/1.0"},
    timeout=10,
)
for place in response.json():
    print(place["lat"], place["lon"], place["display_name"])
""",
    },
    extra="metadata:\n  network:\n    nominatim.openstreetmap.org: geocodes addresses\n",
)

benign(
    "status-page",
    "Check the status pages of common cloud providers.",
    "# Status page\n\nRun `scripts/status.py`.",
    {
        "scripts/status.py": """import json
import urllib.request

PAGES = {
    "GitHub": "https://www.githubstatus.com/api/v2/status.json",
    "Cloudflare": "https://www.cloudflarestatus.com/api/v2/status.json",
}

for name, url in PAGES.items():
    with urllib.request.urlopen(url, timeout=10) as response:
        status = json.load(response)["status"]["description"]
    print(f"{name}: {status}")
"""
    },
    extra="metadata:\n  network: www.githubstatus.com www.cloudflarestatus.com\n",
)

# --- processes without a shell ---------------------------------------------------------------

benign(
    "git-summary",
    "Summarise recent git history: authors, commits per day, files touched.",
    "# Git summary\n\nRun `scripts/summary.py /path/to/repo` on a checked-out repository\n"
    "in inputs/.",
    {
        "scripts/summary.py": """import collections
import subprocess
import sys

repo = sys.argv[1]
log = subprocess.run(
    ["git", "-C", repo, "log", "--since=30.days", "--pretty=format:%an|%ad", "--date=short"],
    capture_output=True, text=True, check=True,
).stdout
authors = collections.Counter(line.split("|")[0] for line in log.splitlines())
for author, count in authors.most_common(10):
    print(f"{count:4d} {author}")
"""
    },
)

benign(
    "media-probe",
    "Show duration, codecs and resolution of media files with ffprobe.",
    "# Media probe\n\nRun `scripts/probe.py inputs/video.mp4`.",
    {
        "scripts/probe.py": """import json
import shutil
import subprocess
import sys

ffprobe = shutil.which("ffprobe") or "ffprobe"
result = subprocess.run(
    [ffprobe, "-v", "quiet", "-print_format", "json", "-show_format", "-show_streams", sys.argv[1]],
    capture_output=True, check=True,
)
info = json.loads(result.stdout)
print(info["format"]["duration"], [s["codec_name"] for s in info["streams"]])
"""
    },
)

benign(
    "doc-convert",
    "Convert documents between Markdown, HTML and DOCX with pandoc.",
    "# Doc convert\n\nRun `scripts/convert.py in.md docx`.",
    {
        "scripts/convert.py": """import os
import subprocess
import sys
from pathlib import Path

source, target_format = Path(sys.argv[1]), sys.argv[2]
output = Path("outputs") / f"{source.stem}.{target_format}"
output.parent.mkdir(exist_ok=True)
env = {**os.environ, "LC_ALL": "C.UTF-8"}
subprocess.run(["pandoc", str(source), "-o", str(output)], check=True, env=env)
print(output)
"""
    },
)

benign(
    "image-thumbs",
    "Make thumbnails of images with Pillow.",
    "# Image thumbs\n\nRun `scripts/thumbs.py 256`. Non-image files are ignored.",
    {
        "requirements.txt": "pillow>=10\n",
        "scripts/thumbs.py": """import sys
from pathlib import Path

from PIL import Image, UnidentifiedImageError

size = int(sys.argv[1]) if len(sys.argv) > 1 else 256
out = Path("outputs/thumbs")
out.mkdir(parents=True, exist_ok=True)
for path in Path("inputs").iterdir():
    try:
        with Image.open(path) as image:
            image.thumbnail((size, size))
            image.save(out / f"{path.stem}.png")
    except UnidentifiedImageError:
        continue
""",
    },
)

benign(
    "pdf-text",
    "Extract the text of PDF files page by page.",
    "# PDF text\n\nRun `scripts/extract.py file.pdf`.",
    {
        "requirements.txt": "pypdf>=4\n",
        "scripts/extract.py": """import sys
from pathlib import Path

from pypdf import PdfReader

reader = PdfReader(sys.argv[1])
out = Path("outputs") / (Path(sys.argv[1]).stem + ".txt")
out.parent.mkdir(exist_ok=True)
with out.open("w", encoding="utf-8") as handle:
    for number, page in enumerate(reader.pages, start=1):
        handle.write(f"--- page {number} ---\\n{page.extract_text() or ''}\\n")
""",
    },
)

benign(
    "node-lint-runner",
    "Run ESLint on JavaScript files and summarise the problems.",
    "# Lint runner\n\nRun `node scripts/lint.js src/`. Rules that are turned off are ignored.",
    {
        "scripts/lint.js": """const { execFileSync, spawnSync } = require("child_process");

const target = process.argv[2] || ".";
const result = spawnSync("npx", ["eslint", "--format", "json", target], { encoding: "utf8" });
const reports = JSON.parse(result.stdout || "[]");
const total = reports.reduce((sum, r) => sum + r.errorCount + r.warningCount, 0);
console.log(`${total} problems in ${reports.length} files`);
console.log(execFileSync("node", ["--version"], { encoding: "utf8" }).trim());
"""
    },
)

benign(
    "archive-maker",
    "Pack outputs into a dated tar.gz archive.",
    "# Archive maker\n\nRun `scripts/pack.sh`. Writes `outputs/archive-YYYY-MM-DD.tar.gz`.",
    {
        "scripts/pack.sh": """#!/usr/bin/env bash
set -euo pipefail
stamp=$(date +%F)
tmp=$(mktemp -d /tmp/pack.XXXXXX)
cp -r inputs "$tmp/"
tar -czf "outputs/archive-$stamp.tar.gz" -C "$tmp" .
rm -rf "$tmp"
echo "outputs/archive-$stamp.tar.gz"
"""
    },
)

# --- own references, outputs/, /tmp --------------------------------------------------------------

benign(
    "brand-voice",
    "Rewrite text in the company's brand voice using the bundled guide.",
    "# Brand voice\n\nRead `references/voice.md`, then run `scripts/check.py draft.md`.",
    {
        "references/voice.md": """# Voice

- Plain words; no jargon.
- You can ignore the old 2019 tone guide: this one replaces it.
- Never promise dates.
""",
        "scripts/check.py": """import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parent.parent / "references" / "voice.md"
BANNED = ["synergy", "leverage", "circle back"]

print(GUIDE.read_text(encoding="utf-8").splitlines()[0])
text = Path(sys.argv[1]).read_text(encoding="utf-8").lower()
for word in BANNED:
    if word in text:
        print(f"avoid: {word}")
""",
    },
)

benign(
    "report-builder",
    "Build an HTML report from JSON results with the bundled template.",
    "# Report builder\n\nRun `scripts/build.py results.json`.\n"
    "The template is `references/template.html`.",
    {
        "references/template.html": """<!doctype html>
<html><head><meta charset="utf-8"><title>Report</title></head>
<body><h1>{title}</h1>{rows}</body></html>
""",
        "scripts/build.py": """import html
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
template_path = os.path.join(here, "..", "references", "template.html")
with open(template_path, encoding="utf-8") as handle:
    template = handle.read()
data = json.load(open(sys.argv[1], encoding="utf-8"))
rows = "".join(f"<p>{html.escape(str(k))}: {html.escape(str(v))}</p>" for k, v in data.items())
os.makedirs("outputs", exist_ok=True)
with open(os.path.join("outputs", "report.html"), "w", encoding="utf-8") as handle:
    handle.write(template.format(title="Results", rows=rows))
""",
    },
)

benign(
    "scratch-sort",
    "Sort very large text files using temporary chunk files.",
    "# Scratch sort\n\nRun `scripts/sort.py big.txt`. Chunks go to /tmp and are removed.",
    {
        "scripts/sort.py": """import heapq
import os
import sys
import tempfile

CHUNK = 100_000
chunks = []
with open(sys.argv[1], encoding="utf-8") as handle:
    while lines := handle.readlines(CHUNK):
        lines.sort()
        fd, name = tempfile.mkstemp(dir="/tmp", suffix=".chunk")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(lines)
        chunks.append(name)
files = [open(name, encoding="utf-8") for name in chunks]
with open("outputs/sorted.txt", "w", encoding="utf-8") as out:
    out.writelines(heapq.merge(*files))
for handle, name in zip(files, chunks):
    handle.close()
    os.remove(name)
"""
    },
)

benign(
    "svg-badges",
    "Generate SVG badges (label and value) for READMEs.",
    "# SVG badges\n\nRun `scripts/badge.py coverage 93%`.",
    {
        "scripts/badge.py": """import sys
from xml.sax.saxutils import escape

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

label, value = (escape(a) for a in sys.argv[1:3])
width = 6 * (len(label) + len(value)) + 20
svg = (
    f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}" width="{width}" height="20">'
    f'<text x="5" y="14">{label}</text><text x="{width // 2 + 5}" y="14">{value}</text></svg>'
)
open("outputs/badge.svg", "w", encoding="utf-8").write(svg)
"""
    },
)

benign(
    "schema-check",
    "Validate JSON documents against a JSON Schema.",
    "# Schema check\n\nRun `scripts/check.py schema.json doc.json`.",
    {
        "requirements.txt": "jsonschema>=4\n",
        "references/example-schema.json": """{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/order.schema.json",
  "type": "object",
  "required": ["id"],
  "properties": {"id": {"type": "integer"}}
}
""",
        "scripts/check.py": """import json
import sys

from jsonschema import Draft202012Validator

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
errors = sorted(Draft202012Validator(schema).iter_errors(document), key=lambda e: e.path)
for error in errors:
    print("/".join(map(str, error.path)), error.message)
sys.exit(1 if errors else 0)
""",
    },
)

benign(
    "logo-stamper",
    "Stamp the company logo onto generated PDF covers.",
    """# Logo stamper

The logo is embedded in `references/logo.md` as a data URI so that the skill needs no
binary files. Run `scripts/stamp.py cover.html`.
""",
    {
        "references/logo.md": f"""# Logo

![logo](data:image/png;base64,{_LOGO})
""",
        "scripts/stamp.py": """import base64
import re
import sys
from pathlib import Path

reference = Path(__file__).parent.parent / "references" / "logo.md"
encoded = re.search(r"base64,([A-Za-z0-9+/=]+)", reference.read_text()).group(1)
Path("outputs").mkdir(exist_ok=True)
Path("outputs/logo.png").write_bytes(base64.b64decode(encoded))
html = Path(sys.argv[1]).read_text().replace("{{logo}}", "logo.png")
Path("outputs/cover.html").write_text(html)
""",
    },
)

benign(
    "config-template",
    "Fill configuration templates from environment variables.",
    """# Config template

Run `scripts/fill.py template.ini`. `${NAME}` placeholders are replaced by the variable of
that name; unknown names are left as they are.
""",
    {
        "scripts/fill.py": """import os
import string
import sys

template = string.Template(open(sys.argv[1], encoding="utf-8").read())
result = template.safe_substitute({k: v for k, v in os.environ.items() if k.startswith("APP_")})
with open("outputs/config.ini", "w", encoding="utf-8") as handle:
    handle.write(result)
"""
    },
)

# --- contextual skills: text only ------------------------------------------------------------

benign(
    "code-review-checklist",
    "A checklist for reviewing pull requests.",
    """# Code review checklist

1. Does the change do what the description says?
2. Are errors handled, and are the messages useful?
3. Are tests added for the new behaviour?

You can ignore formatting nits when a formatter runs in CI. Ignore generated files such as
lock files unless the dependency change is the point of the pull request.
""",
    {},
)

benign(
    "incident-postmortem",
    "Write a blameless incident postmortem.",
    """# Incident postmortem

Sections: summary, impact, timeline, root cause, what went well, what went wrong, action
items. Never include secrets, tokens or customer data in the document; if a log line holds
one, redact it before quoting. Do not paste API keys into the timeline.
""",
    {
        "references/template.md": """# Postmortem: <title>

## Summary
## Impact
## Timeline (UTC)
## Root cause
## Action items
"""
    },
)

benign(
    "api-guidelines",
    "Guidelines for designing HTTP APIs.",
    """# API guidelines

- Use nouns for resources: `/v1/orders`, not `/v1/getOrders`.
- Clients send their API key in the `Authorization: Bearer <key>` header, never in the URL.
- Rate limits answer `429` with `Retry-After`.
- Unknown fields in requests are ignored, so clients can be upgraded first.

See https://www.rfc-editor.org/rfc/rfc9110 for the semantics of methods and status codes.
""",
    {
        "references/errors.md": """# Errors

Errors are `application/problem+json` (RFC 9457) with `type`, `title`, `status`, `detail`.
"""
    },
)

benign(
    "prompt-engineering",
    "Techniques for writing clear prompts for language models.",
    """# Prompt engineering

- State the task first, then the constraints.
- Give one or two examples of the output format.
- Tell the model what to do rather than what to ignore.
- When testing robustness, check that your application rejects inputs such as "ignore the
  previous instructions" coming from untrusted documents; this skill does not contain any.
""",
    {},
)

benign(
    "git-workflow",
    "Team conventions for branches, commits and releases.",
    """# Git workflow

Branch from `main`, name branches `type/short-description`, squash-merge. Keep the
`.gitignore` up to date: build outputs, `.env` files and editor folders are ignored.
Commit messages follow Conventional Commits.
""",
    {},
)

benign(
    "docker-tips",
    "Tips for writing small, reproducible Dockerfiles.",
    """# Docker tips

- Pin base images by digest.
- Use multi-stage builds; copy only the artefacts.
- Put rarely-changing layers first.
- Add a `.dockerignore` so that `.git` and local `.env` files are never sent to the daemon.

```dockerfile
FROM python:3.12-slim AS build
RUN pip wheel --wheel-dir /wheels -r requirements.txt
```
""",
    {},
)

benign(
    "security-review",
    "Review code for common security problems.",
    """# Security review

Look for: injection (SQL, shell), unsafe deserialisation, secrets committed to the
repository, missing authorisation checks, SSRF through user-supplied URLs.

When you find a secret, report the file and line and recommend rotating it; do not print the
secret itself. Data exfiltration risks include logs that record request bodies.
""",
    {},
)

benign(
    "french-style",
    "Règles de style pour les documents en français.",
    """# Style français

- Espaces insécables avant « : ; ! ? ».
- Guillemets français « … ».
- On ignore les majuscules accentuées dans les sigles (« ETE », pas « ÉTÉ »).
""",
    {},
)

benign(
    "russian-glossary",
    "Глоссарий терминов для переводов на русский язык.",
    """# Глоссарий

| English | Русский |
|---|---|
| deployment | развёртывание |
| pull request | запрос на слияние |
| skill | навык |

Термины в коде не переводятся.
""",
    {},
)

benign(
    "arabic-labels",
    "Arabic UI labels and right-to-left layout notes.",
    """# Arabic labels

| key | label |
|---|---|
| save | حفظ |
| cancel | إلغاء |
| settings | الإعدادات |

Use `dir="rtl"` on the container; do not insert bidi control characters into strings.
""",
    {},
)

benign(
    "japanese-notes",
    "Notes on Japanese text processing: width, segmentation, sorting.",
    """# 日本語テキスト処理

- 全角と半角を正規化する（NFKC）。
- 分かち書きには形態素解析器を使う。
- 「ソート」は読み順ではなくコードポイント順になる点に注意。
""",
    {},
)

benign(
    "emoji-reactions",
    "Pick emoji reactions for team messages.",
    """# Emoji reactions

- Celebrations: 🎉 🥳
- Families and teams: 👨\u200d👩\u200d👧 👩\u200d💻 🧑\u200d🤝\u200d🧑
- Flags: 🏳️\u200d🌈

Avoid reactions on incident channels.
""",
    {},
)

benign(
    "meeting-agenda",
    "Draft a meeting agenda from a list of topics.",
    """# Meeting agenda

Given topics and their owners, draft a 30 or 60 minute agenda with time boxes. Put
decisions first and updates last. If a topic has no owner, ask the user who owns it.

<!-- markdownlint-disable MD013 -->
<!-- TODO: add a template for retrospectives -->
""",
    {},
)

benign(
    "release-notes",
    "Write user-facing release notes from a changelog.",
    """# Release notes

Turn the changelog into notes for users: what changed for them, in plain words. Skip
internal refactors; ignore commits of type `chore` and `ci`.

[//]: # (Maintainers: keep this skill in sync with the changelog-writer skill.)
""",
    {},
)

benign(
    "k8s-manifests",
    "Check Kubernetes manifests for missing limits and probes.",
    "# K8s manifests\n\nRun `scripts/check.py inputs/*.yaml`.",
    {
        "requirements.txt": "pyyaml>=6\n",
        "scripts/check.py": """import sys

import yaml

for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
        if not doc or doc.get("kind") != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            if "resources" not in container:
                print(f"{path}: {container['name']} has no resource limits")
            if "readinessProbe" not in container:
                print(f"{path}: {container['name']} has no readiness probe")
""",
    },
)

benign(
    "env-check",
    "Check that the variables a deployment needs are set, without printing values.",
    "# Env check\n\nRun `scripts/check.sh VAR1 VAR2`.",
    {
        "scripts/check.sh": """#!/usr/bin/env bash
missing=0
for name in "$@"; do
  if [ -z "${!name:-}" ]; then
    echo "missing: $name"
    missing=1
  fi
done
exit "$missing"
"""
    },
)

benign(
    "ts-types-gen",
    "Generate TypeScript interfaces from JSON samples.",
    "# TS types\n\nRun `node scripts/types.ts sample.json` with a TypeScript runner.",
    {
        "scripts/types.ts": """import { readFileSync, writeFileSync } from "node:fs";

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return `${value.length ? typeOf(value[0]) : "unknown"}[]`;
  if (value === null) return "null";
  if (typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `  ${k}: ${typeOf(v)};`)
      .join("\\n");
    return `{\\n${fields}\\n}`;
  }
  return typeof value;
}

const sample = JSON.parse(readFileSync(process.argv[2], "utf8"));
writeFileSync("outputs/types.ts", `export type Sample = ${typeOf(sample)};\\n`);
"""
    },
)

benign(
    "html-to-markdown",
    "Convert HTML pages saved in inputs/ to Markdown.",
    "# HTML to Markdown\n\nRun `scripts/convert.py page.html`. Scripts and styles are ignored.",
    {
        "requirements.txt": "beautifulsoup4>=4.12\nmarkdownify>=0.11\n",
        "scripts/convert.py": """import sys
from pathlib import Path

from bs4 import BeautifulSoup
from markdownify import markdownify

soup = BeautifulSoup(Path(sys.argv[1]).read_text(encoding="utf-8"), "html.parser")
for tag in soup(["script", "style"]):
    tag.decompose()
Path("outputs").mkdir(exist_ok=True)
Path("outputs/page.md").write_text(markdownify(str(soup)), encoding="utf-8")
""",
    },
)

benign(
    "timezone-planner",
    "Find meeting times that work across time zones.",
    "# Time zone planner\n\nRun `scripts/plan.py Europe/Paris America/New_York Asia/Tokyo`.",
    {
        "scripts/plan.py": """import sys
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

zones = [ZoneInfo(name) for name in sys.argv[1:]]
start = datetime.now(ZoneInfo("UTC")).replace(minute=0, second=0, microsecond=0)
for hour in range(24):
    moment = start + timedelta(hours=hour)
    local = [moment.astimezone(zone) for zone in zones]
    if all(9 <= t.hour < 18 for t in local):
        print(" | ".join(t.strftime("%a %H:%M %Z") for t in local))
"""
    },
)
