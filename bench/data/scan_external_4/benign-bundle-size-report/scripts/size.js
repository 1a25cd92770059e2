#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { execFileSync } = require('child_process');

const [dir = 'dist', budgetFile = 'budget.json'] = process.argv.slice(2);
const budget = fs.existsSync(budgetFile) ? JSON.parse(fs.readFileSync(budgetFile, 'utf8')) : {};
let over = 0;
for (const f of fs.readdirSync(dir).filter(n => n.endsWith('.js'))) {
  const buf = fs.readFileSync(path.join(dir, f));
  const gz = zlib.gzipSync(buf).length;
  const br = zlib.brotliCompressSync(buf).length;
  const limit = budget[f];
  if (limit && gz > limit) over++;
  console.log(`${f.padEnd(30)} ${String(buf.length).padStart(9)} ${String(gz).padStart(8)} ${String(br).padStart(8)}${limit && gz > limit ? '  OVER' : ''}`);
}
console.log('total:', execFileSync('du', ['-sh', dir], { encoding: 'utf8' }).trim());
process.exit(over ? 1 : 0);
