#!/usr/bin/env node
// Render a Vega-Lite chart to SVG (and PNG) in the house style.
import fs from "node:fs";
import * as vega from "vega";
import * as vl from "vega-lite";
import houseStyle from "chart-house-style";
import { svgToPng } from "resvg-lite";

const HELP_JSON = {
  name: "render_chart",
  description: "Render a Vega-Lite spec over a CSV/JSON file from inputs/ to outputs/chart.svg and chart.png.",
  input_schema: {
    type: "object",
    properties: { spec: { type: "object" }, file: { type: "string" } },
    required: ["spec", "file"],
    additionalProperties: false,
  },
};

async function render(args) {
  const text = fs.readFileSync(args.file, "utf8");
  const values = args.file.endsWith(".json")
    ? JSON.parse(text)
    : vega.read(text, { type: "csv", parse: "auto" });
  const spec = { ...args.spec, data: { values }, config: houseStyle };
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: "none" });
  const svg = await view.toSVG();
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/chart.svg", svg);
  fs.writeFileSync("outputs/chart.png", await svgToPng(svg, { width: 1200 }));
  return { svg: "outputs/chart.svg", png: "outputs/chart.png", points: values.length };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") console.log(JSON.stringify(HELP_JSON));
else render(JSON.parse(argv[1] || "{}")).then((r) => console.log(JSON.stringify(r)));
