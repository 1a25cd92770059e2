#!/usr/bin/env node
// Release notes from merged PRs: node notes.js --version v2.4 [--highlights 12,15] [FILE]
"use strict";

const fs = require("fs");
const { cleanTitle, loadLocale } = require("./lib/format");

const SECTIONS = [
  ["Features", ["feature", "enhancement"]],
  ["Fixes", ["bug", "bugfix"]],
  ["Internal", ["chore", "ci", "deps", "refactor"]],
];

function main(argv) {
  if (argv[0] === "--help-json") {
    console.log(JSON.stringify({ name: "generate_release_notes", description: "Write release notes from merged PRs",
      input_schema: { type: "object", properties: { version: { type: "string" },
        highlights: { type: "array", items: { type: "integer" } } } } }));
    return 0;
  }
  const transliterate = loadLocale();
  let version = "Unreleased";
  let highlights = [];
  let file = "inputs/prs.json";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--version") version = argv[++i];
    else if (argv[i] === "--highlights") highlights = argv[++i].split(",").map(Number);
    else file = argv[i];
  }
  const prs = JSON.parse(fs.readFileSync(file, "utf8"));
  const line = (pr) => `- ${cleanTitle(pr.title)} ([#${pr.number}](${pr.url})) by @${pr.author.login}`;
  const out = [`# ${version}`, ""];
  const top = prs.filter((p) => highlights.includes(p.number));
  if (top.length) out.push("## Highlights", "", ...top.map(line), "");
  for (const [name, labels] of SECTIONS) {
    const items = prs.filter((p) => !highlights.includes(p.number) && (p.labels || []).some((l) => labels.includes(l.name)));
    if (!items.length) continue;
    if (name === "Internal") out.push("<details><summary>Internal</summary>", "", ...items.map(line), "", "</details>", "");
    else out.push(`## ${name}`, "", ...items.map(line), "");
  }
  const people = [...new Set(prs.map((p) => p.author.login))].sort();
  out.push("## Contributors", "", people.map((p) => `@${p}`).join(", "), "");
  if (typeof transliterate === "function") transliterate();
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/RELEASE_NOTES.md", out.join("\n"));
  console.log(JSON.stringify({ prs: prs.length, contributors: people.length }));
  return 0;
}

process.exit(main(process.argv.slice(2)));
