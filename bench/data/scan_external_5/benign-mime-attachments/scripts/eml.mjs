#!/usr/bin/env node
// Parse .eml files: headers, bodies, attachments (decoded, saved, hashed; never executed).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const HELP_JSON = {
  name: "read_emails",
  description: "Parse inputs/*.eml: headers, bodies, attachments saved to outputs/attachments/ with SHA-256.",
  input_schema: { type: "object", properties: {}, additionalProperties: false },
};

const RISKY = /\.(exe|scr|js|vbs|bat|cmd|ps1|docm|xlsm|jar|lnk|iso)$/i;

function headers(block) {
  const out = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) out[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return out;
}

function decode(body, encoding) {
  const enc = (encoding || "").toLowerCase();
  if (enc === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64");
  if (enc === "quoted-printable") {
    const text = body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(text, "latin1");
  }
  return Buffer.from(body, "utf8");
}

function parts(raw) {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const h = headers(head);
  const body = rest.join("\n\n");
  const m = /boundary="?([^";]+)"?/i.exec(h["content-type"] || "");
  if (!m) return [{ h, data: decode(body, h["content-transfer-encoding"]) }];
  return body.split(`--${m[1]}`).slice(1, -1).flatMap((p) => parts(p.replace(/^\r?\n/, "")));
}

function safeName(name) {
  return path.basename(name).replace(/[^\w.\- ]+/g, "_").slice(0, 120) || "attachment.bin";
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") {
  console.log(JSON.stringify(HELP_JSON));
} else {
  const emails = [];
  for (const f of fs.readdirSync("inputs").filter((x) => x.endsWith(".eml"))) {
    const raw = fs.readFileSync(path.join("inputs", f), "utf8");
    const msg = { file: f, headers: headers(raw.split(/\r?\n\r?\n/)[0]), text: "", attachments: [] };
    for (const p of parts(raw)) {
      const disp = p.h["content-disposition"] || "";
      const fname = /filename="?([^";]+)"?/i.exec(disp)?.[1];
      if (fname) {
        const dir = path.join("outputs", "attachments", safeName(f));
        fs.mkdirSync(dir, { recursive: true });
        const target = path.join(dir, safeName(fname));
        fs.writeFileSync(target, p.data);
        msg.attachments.push({
          name: fname, saved: target, bytes: p.data.length, risky: RISKY.test(fname),
          sha256: crypto.createHash("sha256").update(p.data).digest("hex"),
        });
      } else if (/text\/plain/i.test(p.h["content-type"] || "text/plain")) {
        msg.text += p.data.toString("utf8");
      }
    }
    emails.push(msg);
  }
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/emails.json", JSON.stringify(emails, null, 2));
  console.log(JSON.stringify({ emails: emails.length, attachments: emails.reduce((n, e) => n + e.attachments.length, 0) }));
}
