#!/usr/bin/env node
// Format files by extension: node format.js FILE...
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const FORMATTERS = require(path.join(__dirname, "formats", "index.js"));

const ROOT = path.resolve("inputs/repo");
const OUT = path.resolve("outputs/formatted");

function formatterFor(file) {
  const ext = path.extname(file);
  const name = Object.keys(FORMATTERS).find((k) => FORMATTERS[k].ext.includes(ext));
  return name ? FORMATTERS[name] : null;
}

function main(argv) {
  if (argv[0] === "--help-json") {
    console.log(JSON.stringify({ name: "format_files", description: "Format files with the project's formatters",
      input_schema: { type: "object", properties: { files: { type: "array", items: { type: "string" } } } } }));
    return 0;
  }
  const changed = [];
  const messages = [];
  for (const rel of argv) {
    const src = path.resolve(ROOT, rel);
    if (!src.startsWith(ROOT + path.sep)) {
      messages.push(`${rel}: outside the repository, skipped`);
      continue;
    }
    const fmt = formatterFor(src);
    if (!fmt) continue;
    const dest = path.join(OUT, rel);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(src, dest);
    try {
      const out = execFileSync(fmt.exe, fmt.args(dest), { encoding: "utf8", timeout: 60000, shell: false });
      if (out.trim()) messages.push(`${rel}: ${out.trim()}`);
    } catch (e) {
      messages.push(`${rel}: ${fmt.exe} failed: ${String(e.stderr || e.message).trim()}`);
      continue;
    }
    if (!fs.readFileSync(src).equals(fs.readFileSync(dest))) changed.push(rel);
  }
  console.log(JSON.stringify({ changed, messages }));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
