#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const { RulesCache } = require('./lib/rules-cache');

const USE = /\b(?:i18n\.)?t\(\s*['"`]([\w.:-]+)['"`]|i18nKey=["']([\w.:-]+)["']/g;

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(jsx?|tsx?|vue|svelte)$/.test(e.name)) out.push(p);
  }
  return out;
}

function flatten(obj, prefix = '', out = {}) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object') flatten(v, key, out);
    else out[key] = String(v);
  }
  return out;
}

function main(argv) {
  const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
  const src = opt('--src', 'src');
  const locDir = opt('--locales', 'locales');
  const base = opt('--base', 'en');
  const rules = new RulesCache().load();
  const used = new Set();
  for (const f of walk(src)) for (const m of fs.readFileSync(f, 'utf8').matchAll(USE)) used.add(m[1] || m[2]);
  const locales = {};
  for (const f of fs.readdirSync(locDir).filter((x) => x.endsWith('.json'))) {
    locales[path.basename(f, '.json')] = flatten(JSON.parse(fs.readFileSync(path.join(locDir, f), 'utf8')));
  }
  const report = { missing: {}, unused: [], placeholderMismatch: [] };
  const strip = (k) => k.replace(/_(zero|one|two|few|many|other)$/, '');
  for (const [loc, keys] of Object.entries(locales)) {
    const have = new Set(Object.keys(keys).map(strip));
    report.missing[loc] = [...used].filter((k) => !have.has(k));
    for (const cat of rules.categories(loc)) void cat;
  }
  const baseKeys = locales[base] || {};
  report.unused = Object.keys(baseKeys).filter((k) => !used.has(strip(k)));
  const ph = (s) => (s.match(/{{\s*\w+\s*}}/g) || []).sort().join();
  for (const [loc, keys] of Object.entries(locales)) {
    for (const [k, v] of Object.entries(keys)) if (baseKeys[k] && ph(baseKeys[k]) !== ph(v)) report.placeholderMismatch.push({ locale: loc, key: k });
  }
  console.log(JSON.stringify(report, null, 2));
}

main(process.argv.slice(2));
