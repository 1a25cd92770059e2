#!/usr/bin/env node
// Render a csv-profiler stats.json as a Markdown data-quality report.
//
// Usage:
//   node report.mjs [FILE] [--missing-threshold R] [--title TEXT]
//   node report.mjs --help-json
//   node report.mjs --run-json '{"file": "inputs/stats.json"}'
//
// Run with the workspace as the current directory. FILE defaults to inputs/stats.json; the
// report is written to outputs/report.md. Node >= 18, built-in modules only.

import fs from "node:fs";
import path from "node:path";
import process from "node:process";

const TOOL_NAME = "render_stats_report";
const DEFAULT_INPUT = path.join("inputs", "stats.json");
const OUTPUT = path.join("outputs", "report.md");
const DEFAULT_MISSING_THRESHOLD = 0.2;

const HELP_JSON = {
  name: TOOL_NAME,
  description:
    "Turn a csv-profiler stats.json (column types, missing counts, numeric mean/min/max) " +
    "into a readable Markdown data-quality report at outputs/report.md: a summary, a table " +
    "per column, and flags for columns with a high missing ratio, constant or empty columns " +
    "and ragged rows.",
  input_schema: {
    type: "object",
    properties: {
      file: {
        type: "string",
        description: "stats.json path relative to the workspace; default inputs/stats.json",
      },
      missing_threshold: {
        type: "number",
        minimum: 0,
        maximum: 1,
        default: DEFAULT_MISSING_THRESHOLD,
        description: "Flag a column when missing / rows is above this ratio",
      },
      title: { type: "string", maxLength: 200, description: "Report title" },
    },
    required: [],
    additionalProperties: false,
  },
};

class ReportError extends Error {}

// ------------------------------------------------------------------------------ formatting

function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return String(value);
    if (Number.isInteger(value)) return String(value);
    const abs = Math.abs(value);
    if (abs !== 0 && (abs < 1e-4 || abs >= 1e15)) return value.toPrecision(6);
    return String(Number(value.toFixed(4)));
  }
  return String(value);
}

function cell(value) {
  return fmt(value).replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function pct(ratio) {
  return `${Number((ratio * 100).toFixed(1))}%`;
}

function table(headers, rows) {
  const lines = [`| ${headers.join(" | ")} |`, `| ${headers.map(() => "---").join(" | ")} |`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(" | ")} |`);
  return lines.join("\n");
}

// ------------------------------------------------------------------------------ analysis

function loadStats(file) {
  if (!fs.existsSync(file)) throw new ReportError(`file not found: ${file}`);
  let text = fs.readFileSync(file, "utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) throw new ReportError(`${file} is empty`);
  let stats;
  try {
    stats = JSON.parse(text);
  } catch (err) {
    throw new ReportError(`${file} is not valid JSON: ${err.message}`);
  }
  if (stats === null || typeof stats !== "object" || Array.isArray(stats)) {
    throw new ReportError(`${file} must hold a JSON object (csv-profiler stats.json)`);
  }
  if (!Number.isInteger(stats.rows) || stats.rows < 0) {
    throw new ReportError(`${file} has no integer "rows" field; is it a csv-profiler stats.json?`);
  }
  if (!Array.isArray(stats.columns)) {
    throw new ReportError(`${file} has no "columns" array; is it a csv-profiler stats.json?`);
  }
  stats.columns.forEach((column, index) => {
    if (column === null || typeof column !== "object" || typeof column.name !== "string") {
      throw new ReportError(`${file}: columns[${index}] has no "name"`);
    }
  });
  return stats;
}

function flagsFor(stats, threshold) {
  const flags = [];
  const rows = stats.rows;
  for (const column of stats.columns) {
    const missing = Number(column.missing ?? 0);
    const count = Number(column.count ?? 0);
    const ratio = rows > 0 ? missing / rows : 0;
    if (rows > 0 && count === 0) {
      flags.push({ column: column.name, kind: "empty", text: "every value is missing" });
      continue;
    }
    if (ratio > threshold) {
      flags.push({
        column: column.name,
        kind: "high-missing",
        text: `${pct(ratio)} missing (${missing} of ${rows} rows; threshold ${pct(threshold)})`,
      });
    }
    if (column.distinct === 1 && count > 1) {
      const only = column.top?.[0]?.value ?? column.min ?? "";
      flags.push({
        column: column.name,
        kind: "constant",
        text: `constant column: every present value is ${JSON.stringify(String(only))}`,
      });
    }
    if (column.distinct === count && count > 1 && column.type === "string" && rows > 1) {
      flags.push({
        column: column.name,
        kind: "unique",
        text: "every value is distinct (an identifier? not useful for grouping)",
      });
    }
  }
  if (Number(stats.ragged_rows ?? 0) > 0) {
    flags.push({
      column: null,
      kind: "ragged-rows",
      text: `${stats.ragged_rows} row(s) had a different number of fields than the header`,
    });
  }
  return flags;
}

function columnSection(column, rows) {
  const missing = Number(column.missing ?? 0);
  const metrics = [
    ["type", column.type ?? "unknown"],
    ["count", column.count],
    ["missing", rows > 0 ? `${missing} (${pct(missing / rows)})` : String(missing)],
    ["distinct", column.distinct],
  ];
  for (const key of ["min", "max", "mean", "median", "stdev", "min_length", "max_length"]) {
    if (key in column) metrics.push([key, column[key]]);
  }
  const parts = [`### ${column.name}`, "", table(["Metric", "Value"], metrics)];
  if (Array.isArray(column.top) && column.top.length > 0) {
    const topRows = column.top.map((t) => [t.value, t.count]);
    parts.push("", "Most frequent values:", "", table(["Value", "Count"], topRows));
  }
  return parts.join("\n");
}

function render(stats, { threshold, title }) {
  const columns = stats.columns;
  const byType = {};
  for (const c of columns) byType[c.type ?? "unknown"] = (byType[c.type ?? "unknown"] ?? 0) + 1;
  const typeList = Object.keys(byType)
    .sort()
    .map((t) => `${byType[t]} ${t}`)
    .join(", ");
  const flags = flagsFor(stats, threshold);
  const totalMissing = columns.reduce((sum, c) => sum + Number(c.missing ?? 0), 0);
  const cells = stats.rows * columns.length;

  const out = [`# ${title || `Data profile: ${stats.source ?? "dataset"}`}`, "", "## Summary", ""];
  out.push(`- Source: \`${stats.source ?? "unknown"}\``);
  out.push(`- Rows: ${stats.rows}`);
  out.push(`- Columns: ${columns.length}${typeList ? ` (${typeList})` : ""}`);
  out.push(`- Missing cells: ${totalMissing}${cells > 0 ? ` (${pct(totalMissing / cells)})` : ""}`);
  out.push(`- Flags: ${flags.length}`);
  out.push("", "## Overview", "");
  out.push(
    table(
      ["Column", "Type", "Count", "Missing", "Distinct", "Mean"],
      columns.map((c) => [c.name, c.type, c.count, c.missing, c.distinct, c.mean ?? null]),
    ),
  );
  out.push("", "## Flags", "");
  if (flags.length === 0) out.push("No data-quality flags.");
  for (const f of flags) out.push(`- **${f.kind}**${f.column === null ? "" : ` \`${f.column}\``}: ${f.text}`);
  const warnings = Array.isArray(stats.warnings) ? stats.warnings : [];
  if (warnings.length > 0) {
    out.push("", "Profiler warnings:", "");
    for (const w of warnings) out.push(`- ${w}`);
  }
  out.push("", "## Columns", "");
  out.push(columns.map((c) => columnSection(c, stats.rows)).join("\n\n"));
  return { markdown: `${out.join("\n")}\n`, flags };
}

function makeReport({ file, threshold, title }) {
  const stats = loadStats(file || DEFAULT_INPUT);
  const { markdown, flags } = render(stats, { threshold, title });
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
  fs.writeFileSync(OUTPUT, markdown, "utf8");
  return { stats, flags };
}

// ------------------------------------------------------------------------------ entry points

function runJson(raw) {
  const fail = (message) => {
    process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    return 2;
  };
  let args;
  try {
    args = JSON.parse(raw);
  } catch (err) {
    return fail(`arguments are not valid JSON: ${err.message}`);
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return fail("arguments must be a JSON object");
  }
  const unknown = Object.keys(args).filter((k) => !(k in HELP_JSON.input_schema.properties));
  if (unknown.length) return fail(`unknown argument(s): ${unknown.sort().join(", ")}`);
  if ("file" in args && typeof args.file !== "string") return fail("'file' must be a string");
  if ("title" in args && typeof args.title !== "string") return fail("'title' must be a string");
  const threshold = args.missing_threshold ?? DEFAULT_MISSING_THRESHOLD;
  if (typeof threshold !== "number" || threshold < 0 || threshold > 1) {
    return fail("'missing_threshold' must be a number between 0 and 1");
  }
  try {
    const { stats, flags } = makeReport({ file: args.file, threshold, title: args.title });
    const result = {
      output: OUTPUT.split(path.sep).join("/"),
      rows: stats.rows,
      columns: stats.columns.length,
      flags: flags.map((f) => ({ column: f.column, kind: f.kind, text: f.text })),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ReportError) return fail(err.message);
    throw err;
  }
}

function parseCli(argv) {
  const opts = { file: undefined, threshold: DEFAULT_MISSING_THRESHOLD, title: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--missing-threshold" || arg === "--title") {
      const value = argv[i + 1];
      if (value === undefined) throw new ReportError(`${arg} needs a value`);
      i += 1;
      if (arg === "--title") {
        opts.title = value;
      } else {
        opts.threshold = Number(value);
        if (!Number.isFinite(opts.threshold) || opts.threshold < 0 || opts.threshold > 1) {
          throw new ReportError("--missing-threshold must be a number between 0 and 1");
        }
      }
    } else if (arg === "-h" || arg === "--help") {
      opts.help = true;
    } else if (arg.startsWith("-")) {
      throw new ReportError(`unknown option ${arg}`);
    } else if (opts.file === undefined) {
      opts.file = arg;
    } else {
      throw new ReportError(`unexpected argument ${arg}`);
    }
  }
  return opts;
}

function main(argv) {
  if (argv[0] === "--help-json") {
    process.stdout.write(`${JSON.stringify(HELP_JSON)}\n`);
    return 0;
  }
  if (argv[0] === "--run-json") {
    if (argv.length !== 2) {
      process.stdout.write(`${JSON.stringify({ error: "--run-json takes one JSON argument" })}\n`);
      return 2;
    }
    return runJson(argv[1]);
  }
  try {
    const opts = parseCli(argv);
    if (opts.help) {
      process.stdout.write(
        "usage: node report.mjs [FILE] [--missing-threshold R] [--title TEXT]\n" +
          "Reads inputs/stats.json (csv-profiler output) and writes outputs/report.md.\n",
      );
      return 0;
    }
    const { stats, flags } = makeReport(opts);
    process.stdout.write(
      `Wrote ${OUTPUT}: ${stats.rows} rows, ${stats.columns.length} columns, ` +
        `${flags.length} flag(s)\n`,
    );
    for (const f of flags) {
      process.stdout.write(`flag: ${f.kind}${f.column === null ? "" : ` ${f.column}`}: ${f.text}\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof ReportError) {
      process.stderr.write(`report.mjs: error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

process.exitCode = main(process.argv.slice(2));
