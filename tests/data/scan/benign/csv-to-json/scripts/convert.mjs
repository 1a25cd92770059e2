import { readFile, writeFile, mkdir } from "node:fs/promises";

const [, , input] = process.argv;
const [header, ...rows] = (await readFile(input, "utf8")).trim().split("\n");
const keys = header.split(",");
const records = rows.map((row) => Object.fromEntries(row.split(",").map((v, i) => [keys[i], v])));
await mkdir("outputs", { recursive: true });
await writeFile("outputs/data.json", JSON.stringify(records, null, 2));
