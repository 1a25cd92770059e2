#!/usr/bin/env node
// Draft release notes from merged PRs grouped by label.
import fs from "node:fs";

const HELP_JSON = {
  name: "draft_release_notes",
  description: "Draft release notes from inputs/prs.json into outputs/RELEASE_NOTES.md.",
  input_schema: {
    type: "object",
    properties: { version: { type: "string" }, previous: { type: "string" }, repo: { type: "string" } },
    required: ["version"],
    additionalProperties: false,
  },
};

const GROUPS = [
  ["Highlights", ["highlight", "feature"]],
  ["Improvements", ["enhancement", "performance"]],
  ["Fixes", ["bug", "fix"]],
  ["Upgrade notes", ["breaking"]],
];

function draft({ version, previous, repo }) {
  const prs = JSON.parse(fs.readFileSync("inputs/prs.json", "utf8"));
  const out = [`# ${version}`, ""];
  for (const [title, labels] of GROUPS) {
    const items = prs.filter((p) => (p.labels || []).some((l) => labels.includes((l.name || l).toLowerCase())));
    if (!items.length) continue;
    out.push(`## ${title}`, "", ...items.map((p) => `- ${p.title} (#${p.number})`), "");
  }
  if (repo && previous) out.push(`Full changelog: https://github.com/${repo}/compare/${previous}...${version}`);
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/RELEASE_NOTES.md", out.join("\n") + "\n");
  return { output: "outputs/RELEASE_NOTES.md", prs: prs.length };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") console.log(JSON.stringify(HELP_JSON));
else console.log(JSON.stringify(draft(argv[0] === "--run-json" ? JSON.parse(argv[1]) : { version: argv[0] })));
