#!/usr/bin/env node
// Build a styled .xlsx from CSV/JSON tables in inputs/.
import fs from "node:fs";
import path from "node:path";
import ExcelJS from "exceljs";
import { parse } from "csv-parse/sync";

const HELP_JSON = {
  name: "build_excel_report",
  description: "Build outputs/report.xlsx from inputs/*.csv and *.json tables, one styled sheet each.",
  input_schema: { type: "object", properties: { title: { type: "string" } }, additionalProperties: false },
};

async function build(args) {
  const wb = new ExcelJS.Workbook();
  wb.title = args.title || "Report";
  const summary = wb.addWorksheet("Summary");
  summary.addRow(["Sheet", "Rows"]);
  for (const f of fs.readdirSync("inputs")) {
    const text = fs.readFileSync(path.join("inputs", f), "utf8");
    const rows = f.endsWith(".json") ? JSON.parse(text) : f.endsWith(".csv") ? parse(text, { columns: true }) : null;
    if (!rows || !rows.length) continue;
    const ws = wb.addWorksheet(path.parse(f).name.slice(0, 31));
    ws.columns = Object.keys(rows[0]).map((k) => ({ header: k, key: k, width: Math.max(10, k.length + 2) }));
    ws.addRows(rows);
    ws.getRow(1).font = { bold: true };
    ws.views = [{ state: "frozen", ySplit: 1 }];
    ws.autoFilter = { from: "A1", to: { row: 1, column: ws.columns.length } };
    summary.addRow([ws.name, rows.length]);
  }
  fs.mkdirSync("outputs", { recursive: true });
  await wb.xlsx.writeFile("outputs/report.xlsx");
  return { output: "outputs/report.xlsx", sheets: wb.worksheets.length };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") console.log(JSON.stringify(HELP_JSON));
else build(argv[0] === "--run-json" ? JSON.parse(argv[1]) : {}).then((r) => console.log(JSON.stringify(r)));
