#!/usr/bin/env node
// Offline Markdown link checks: node check-links.js [DOCS_DIR]
"use strict";

const fs = require("fs");
const path = require("path");
const GithubSlugger = require("github-slugger");

const LINK = /!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const HEADING = /^#{1,6}\s+(.+?)\s*#*$/;

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith(".md") ? [path.join(dir, e.name)] : []);
}

function anchors(file) {
  const slugger = new GithubSlugger();
  return new Set(fs.readFileSync(file, "utf8").split("\n").map((l) => l.match(HEADING)).filter(Boolean).map((m) => slugger.slug(m[1])));
}

function main(argv) {
  if (argv[0] === "--help-json") {
    console.log(JSON.stringify({ name: "check_markdown_links", description: "Offline Markdown link checks",
      input_schema: { type: "object", properties: { dir: { type: "string" } } } }));
    return 0;
  }
  const root = argv[0] && argv[0] !== "--self-test" ? argv[0] : "inputs/docs";
  const findings = [];
  for (const file of walk(root)) {
    fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
      for (const m of line.matchAll(LINK)) {
        const [whole, text, target] = m;
        if (whole.startsWith("!") && !text.trim()) findings.push(`${file}:${i + 1}: no-alt: ${target}`);
        if (/^[a-z]+:/i.test(target)) continue;
        const [p, hash] = target.split("#");
        const dest = p ? path.resolve(path.dirname(file), p) : file;
        if (!fs.existsSync(dest)) findings.push(`${file}:${i + 1}: missing-file: ${target}`);
        else if (hash && dest.endsWith(".md") && !anchors(dest).has(hash)) findings.push(`${file}:${i + 1}: missing-anchor: ${target}`);
      }
    });
  }
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/links.md", findings.join("\n") + "\n");
  console.log(JSON.stringify({ findings: findings.length }));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
