#!/usr/bin/env node
"use strict";
// Parse PNG chunks: IHDR, pHYs, gAMA, iCCP, tEXt, zTXt, iTXt. Text is shown, never interpreted.
const fs = require("node:fs");
const path = require("node:path");
const zlib = require("node:zlib");

const HELP_JSON = {
  name: "png_metadata",
  description: "Read dimensions and metadata chunks (text, DPI, gamma, ICC name) of inputs/*.png.",
  input_schema: { type: "object", properties: {}, additionalProperties: false },
};

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const COLOR = { 0: "grey", 2: "rgb", 3: "palette", 4: "grey+alpha", 6: "rgba" };

function nul(buf, start) {
  const i = buf.indexOf(0, start);
  return i < 0 ? buf.length : i;
}

function readPng(file) {
  const buf = fs.readFileSync(file);
  if (!buf.subarray(0, 8).equals(SIGNATURE)) return { file, error: "not a PNG" };
  const meta = { file, text: {} };
  let off = 8;
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    off += 12 + len;
    if (type === "IHDR") {
      Object.assign(meta, { width: data.readUInt32BE(0), height: data.readUInt32BE(4), bitDepth: data[8], color: COLOR[data[9]] });
    } else if (type === "pHYs" && data[8] === 1) {
      meta.dpi = Math.round(data.readUInt32BE(0) * 0.0254);
    } else if (type === "gAMA") {
      meta.gamma = data.readUInt32BE(0) / 100000;
    } else if (type === "iCCP") {
      meta.icc = data.toString("latin1", 0, nul(data, 0));
    } else if (type === "tEXt") {
      const k = nul(data, 0);
      meta.text[data.toString("latin1", 0, k)] = data.toString("latin1", k + 1);
    } else if (type === "zTXt") {
      const k = nul(data, 0);
      meta.text[data.toString("latin1", 0, k)] = zlib.inflateSync(data.subarray(k + 2)).toString("latin1");
    } else if (type === "iTXt") {
      const k = nul(data, 0);
      const compressed = data[k + 1] === 1;
      let p = nul(data, k + 3) + 1; // language tag
      p = nul(data, p) + 1; // translated keyword
      const body = data.subarray(p);
      meta.text[data.toString("utf8", 0, k)] = (compressed ? zlib.inflateSync(body) : body).toString("utf8");
    } else if (type === "IEND") break;
  }
  return meta;
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") {
  console.log(JSON.stringify(HELP_JSON));
} else {
  const results = fs.readdirSync("inputs").filter((f) => /\.png$/i.test(f)).map((f) => readPng(path.join("inputs", f)));
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/png-metadata.json", JSON.stringify(results, null, 2));
  console.log(JSON.stringify({ images: results.length, with_text: results.filter((r) => r.text && Object.keys(r.text).length).length }));
}
