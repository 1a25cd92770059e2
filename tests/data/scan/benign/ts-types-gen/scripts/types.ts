import { readFileSync, writeFileSync } from "node:fs";

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return `${value.length ? typeOf(value[0]) : "unknown"}[]`;
  if (value === null) return "null";
  if (typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `  ${k}: ${typeOf(v)};`)
      .join("\n");
    return `{\n${fields}\n}`;
  }
  return typeof value;
}

const sample = JSON.parse(readFileSync(process.argv[2], "utf8"));
writeFileSync("outputs/types.ts", `export type Sample = ${typeOf(sample)};\n`);
