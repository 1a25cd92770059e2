#!/usr/bin/env node
// Query the declared vendor status APIs (Statuspage-style JSON) and summarise incidents.
const HELP_JSON = {
  name: "check_vendor_status",
  description: "Summarise open incidents and degraded components of the team's vendors.",
  input_schema: {
    type: "object",
    properties: { vendors: { type: "array", items: { type: "string", enum: ["payments", "mail", "cdn"] } } },
    additionalProperties: false,
  },
};

const VENDORS = {
  payments: "https://status.payments-vendor.example/api/v2/summary.json",
  mail: "https://status.mail-vendor.example/api/v2/summary.json",
  cdn: "https://eu.cdn-vendor.example/api/v2/summary.json",
};

async function check(name) {
  try {
    const res = await fetch(VENDORS[name], { signal: AbortSignal.timeout(8000), headers: { Accept: "application/json" } });
    if (!res.ok) return { vendor: name, error: `HTTP ${res.status}` };
    const data = await res.json();
    return {
      vendor: name,
      indicator: data.status?.indicator ?? "unknown",
      degraded: (data.components || []).filter((c) => c.status !== "operational").map((c) => `${c.name}: ${c.status}`),
      incidents: (data.incidents || []).map((i) => ({ name: i.name, since: i.created_at, update: i.incident_updates?.[0]?.body ?? "" })),
    };
  } catch (err) {
    return { vendor: name, error: String(err.message || err) };
  }
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") {
  console.log(JSON.stringify(HELP_JSON));
} else {
  const args = argv[0] === "--run-json" ? JSON.parse(argv[1]) : {};
  const names = (args.vendors || Object.keys(VENDORS)).filter((v) => v in VENDORS);
  Promise.all(names.map(check)).then((r) => console.log(JSON.stringify(r)));
}
