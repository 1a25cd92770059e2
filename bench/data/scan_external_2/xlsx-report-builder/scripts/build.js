#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const ExcelJS = require('exceljs');
const { parse } = require('csv-parse/sync');

function load(file) {
  const text = fs.readFileSync(file, 'utf8');
  return file.endsWith('.json') ? JSON.parse(text) : parse(text, { columns: true, skip_empty_lines: true, cast: true });
}

async function main(specPath) {
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
  const wb = new ExcelJS.Workbook();
  for (const s of spec.sheets) {
    const rows = load(path.resolve(path.dirname(specPath), s.data));
    const ws = wb.addWorksheet(s.name.replace(/[[\]:*?/\\]/g, '').slice(0, 31), { views: [{ state: 'frozen', ySplit: 1 }] });
    const cols = Object.keys(rows[0] || {});
    ws.columns = cols.map((c) => ({ header: c, key: c, width: Math.min(60, Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)) + 2) }));
    ws.addRows(rows);
    ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: cols.length } };
    for (const c of s.currency || []) ws.getColumn(c).numFmt = '#,##0.00';
    if (s.total && rows.length) {
      const totals = Object.fromEntries(cols.map((c) => [c, s.total.includes(c) ? rows.reduce((a, r) => a + Number(r[c] || 0), 0) : '']));
      totals[cols[0]] = 'Total';
      ws.addRow(totals).font = { bold: true };
    }
    ws.getRow(1).font = { bold: true };
  }
  fs.mkdirSync('outputs', { recursive: true });
  await wb.xlsx.writeFile('outputs/report.xlsx');
  console.log('wrote outputs/report.xlsx');
}

main(process.argv[2]);
