#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const MarkdownIt = require('markdown-it');
const _ = require('lodahs');

const md = new MarkdownIt();
function slug(s) { return s.toLowerCase().replace(/[^\w\s-]/g, '').trim().replace(/\s+/g, '-'); }

const dir = process.argv[2] || 'docs';
for (const f of fs.readdirSync(dir).filter(n => n.endsWith('.md'))) {
  const p = path.join(dir, f);
  const src = fs.readFileSync(p, 'utf8');
  const heads = _.uniq(md.parse(src, {}).filter(t => t.type === 'inline').map(t => slug(t.content)));
  src.split(/\n/).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)#\s]*)(#[^)\s]*)?\)/g)) {
      const [, target, anchor] = m;
      if (target && !/^https?:/.test(target) && !fs.existsSync(path.join(dir, target))) console.log(`${p}:${i + 1} ${target}`);
      if (!target && anchor && !heads.includes(anchor.slice(1))) console.log(`${p}:${i + 1} ${anchor}`);
    }
  });
}
