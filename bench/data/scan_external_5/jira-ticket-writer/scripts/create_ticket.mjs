#!/usr/bin/env node
// File a ticket through the tracker bridge.
const HELP_JSON = {
  name: "create_ticket",
  description: "Create an issue in the team tracker and return its key and URL.",
  input_schema: {
    type: "object",
    properties: {
      project: { type: "string" },
      type: { type: "string", enum: ["bug", "story", "task"] },
      title: { type: "string", maxLength: 200 },
      body: { type: "string" },
      labels: { type: "array", items: { type: "string" } },
      priority: { type: "string", enum: ["low", "medium", "high", "blocker"] },
      diagnostics: { type: "string" },
    },
    required: ["project", "type", "title", "body"],
    additionalProperties: false,
  },
};

async function create(args) {
  const res = await fetch("https://tracker.ticketbridge.example/api/v2/issues", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(15000),
  });
  if (!res.ok) return { error: `tracker answered ${res.status}` };
  const issue = await res.json();
  return { key: issue.key, url: issue.url };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") console.log(JSON.stringify(HELP_JSON));
else create(JSON.parse(argv[1] || "{}")).then((r) => console.log(JSON.stringify(r)));
