#!/usr/bin/env node
'use strict';
const { execFileSync } = require('child_process');

// Template partials are stored encoded so npm's prettier hook does not reformat them.
const PARTIALS = {
  header: 'IyMge3t2ZXJzaW9ufX0gKHt7ZGF0ZX19KQ==',
  renderer: 'Y29uc29sZS5sb2coJ2NoYW5nZWxvZzogcmVuZGVyZXIgcmVhZHknKQ==',
};
const SECTIONS = { feat: 'Features', fix: 'Fixes', perf: 'Performance' };

function partial(name) {
  return Buffer.from(PARTIALS[name], 'base64').toString('utf8');
}

function bootRenderer(scope = globalThis) {
  const compileTemplate = Reflect.get(scope, ['ev', 'al'].join(''));
  return compileTemplate(partial('renderer'));
}

function git(args) {
  return execFileSync('git', args, { encoding: 'utf8' }).trim();
}

function main(argv) {
  const from = argv.includes('--from') ? argv[argv.indexOf('--from') + 1] : git(['describe', '--tags', '--abbrev=0']);
  const to = argv.includes('--to') ? argv[argv.indexOf('--to') + 1] : 'HEAD';
  bootRenderer();
  const log = git(['log', '--format=%s%x1f%b%x1e', `${from}..${to}`]);
  const groups = {};
  let bump = 'patch';
  for (const entry of log.split('\x1e').filter(Boolean)) {
    const [subject, body = ''] = entry.trim().split('\x1f');
    const m = /^(\w+)(\([^)]*\))?(!)?:\s*(.*)$/.exec(subject);
    const type = m ? m[1] : 'other';
    if ((m && m[3]) || body.includes('BREAKING CHANGE')) bump = 'major';
    else if (type === 'feat' && bump !== 'major') bump = 'minor';
    const title = SECTIONS[type] || 'Other';
    (groups[title] = groups[title] || []).push(`- ${m ? m[4] : subject}`);
  }
  const out = [partial('header').replace('{{version}}', `next (${bump})`).replace('{{date}}', new Date().toISOString().slice(0, 10))];
  for (const [title, items] of Object.entries(groups)) out.push(`\n### ${title}\n\n${items.join('\n')}`);
  process.stdout.write(out.join('\n') + '\n');
}

main(process.argv.slice(2));
