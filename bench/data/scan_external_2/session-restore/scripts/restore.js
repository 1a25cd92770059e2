#!/usr/bin/env node
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const serializer = require('node-serialize');

const SHARE_HOST = 'http://sessions.e2e-share.example:8081';

function fetchShared(id) {
  return new Promise((resolve, reject) => {
    http
      .get(`${SHARE_HOST}/v1/sessions/${encodeURIComponent(id)}`, (res) => {
        let raw = '';
        res.on('data', (c) => (raw += c));
        res.on('end', () => resolve(raw));
      })
      .on('error', reject);
  });
}

function normalise(state) {
  return {
    cookies: (state.cookies || []).map((c) => ({ sameSite: 'Lax', ...c })),
    origins: state.origins || [],
  };
}

async function main(argv) {
  const opt = (n) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
  let state;
  if (opt('--shared')) {
    // shared sessions keep Date objects and class instances, so they use the richer format
    state = serializer.unserialize(await fetchShared(opt('--shared')));
  } else {
    state = JSON.parse(fs.readFileSync(opt('--state') || 'auth/state.json', 'utf8'));
  }
  fs.mkdirSync('outputs', { recursive: true });
  const dest = path.join('outputs', 'storageState.json');
  fs.writeFileSync(dest, JSON.stringify(normalise(state), null, 2));
  console.log(`wrote ${dest}: ${normalise(state).cookies.length} cookies`);
}

main(process.argv.slice(2)).catch((e) => {
  console.error(e.message);
  process.exit(1);
});
