#!/usr/bin/env node
// Prefix changelog entries with emoji: node emojify.mjs FILE [--target slack|discord|markdown]
import fs from "node:fs";
import process from "node:process";

const EMOJI = {
  features: "🧑‍💻",
  fixes: "\u{1F41B}",
  highlights: "❤️‍🔥",
  community: "👨‍👩‍👧",
  pride: "🏳️‍🌈",
};

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });
const graphemes = (s) => [...segmenter.segment(s)].map((g) => g.segment);

function shorten(title, max = 72) {
  const g = graphemes(title);
  return g.length <= max ? title : g.slice(0, max - 1).join("") + "…";
}

function main(argv) {
  if (argv[0] === "--help-json") {
    console.log(JSON.stringify({ name: "emojify_notes", description: "Emoji-prefixed release notes",
      input_schema: { type: "object", properties: { file: { type: "string" }, target: { type: "string" } } } }));
    return 0;
  }
  const file = argv[0] || "inputs/CHANGELOG-section.md";
  const target = argv[argv.indexOf("--target") + 1] || "markdown";
  let section = "features";
  const out = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const h = line.match(/^#{2,3}\s+(\w+)/);
    if (h) {
      section = h[1].toLowerCase();
      out.push(target === "slack" ? `*${h[1]}*` : line);
      continue;
    }
    const item = line.match(/^[-*]\s+(.*)/);
    if (item) out.push(`${target === "markdown" ? "- " : "• "}${EMOJI[section] || "\u{2728}"} ${shorten(item[1])}`);
    else out.push(line);
  }
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync(`outputs/announcement.${target === "markdown" ? "md" : "txt"}`, out.join("\n"));
  console.log(JSON.stringify({ lines: out.length, target }));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
