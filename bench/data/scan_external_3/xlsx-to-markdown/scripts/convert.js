#!/usr/bin/env node
// Convert an xlsx workbook to Markdown tables.
"use strict";
const fs = require("fs");
const path = require("path");
const ExcelJS = require("exceljs");

function cell(v) {
  if (v == null) return "";
  if (typeof v === "object" && "result" in v) v = v.result;
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  return String(v).replace(/\|/g, "\\|").replace(/\n/g, " ");
}

async function main() {
  const file = process.argv[2];
  const only = process.argv.includes("--sheet") ? process.argv[process.argv.indexOf("--sheet") + 1] : null;
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  let md = "";
  wb.eachSheet((ws) => {
    if (only && ws.name !== only) return;
    const rows = [];
    ws.eachRow((row) => rows.push(row.values.slice(1).map(cell)));
    while (rows.length && rows[rows.length - 1].every((c) => c === "")) rows.pop();
    if (!rows.length) return;
    const w = Math.max(...rows.map((r) => r.length));
    const pad = (r) => [...r, ...Array(w - r.length).fill("")];
    md += `## ${ws.name}\n\n| ${pad(rows[0]).join(" | ")} |\n|${" --- |".repeat(w)}\n`;
    for (const r of rows.slice(1)) md += `| ${pad(r).join(" | ")} |\n`;
    md += "\n";
  });
  fs.mkdirSync("outputs", { recursive: true });
  const out = path.join("outputs", path.basename(file).replace(/\.xlsx$/, ".md"));
  fs.writeFileSync(out, md);
  console.log(out);
}

main();
