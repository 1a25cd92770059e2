#!/usr/bin/env node
const fs = require("fs");
const path = require("path");

const input = process.argv[2];
const seen = new Set();
const kept = fs.readFileSync(input, "utf8").split(/\r?\n/).filter((line) => {
  if (seen.has(line)) return false;
  seen.add(line);
  return true;
});
fs.mkdirSync("outputs", { recursive: true });
fs.writeFileSync(path.join("outputs", path.basename(input)), kept.join("\n"));
