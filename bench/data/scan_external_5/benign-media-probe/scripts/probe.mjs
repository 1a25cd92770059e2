#!/usr/bin/env node
// Summarise media files with ffprobe (execFile with an argument array; no shell).
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const MEDIA = /\.(mp4|mkv|mov|webm|mp3|m4a|wav|flac|ogg|opus)$/i;

const HELP_JSON = {
  name: "probe_media",
  description: "Summarise container, streams and codecs of inputs/* media files with ffprobe.",
  input_schema: { type: "object", properties: {}, additionalProperties: false },
};

async function probe(file) {
  const args = ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "-show_chapters", "--", file];
  const { stdout } = await run("ffprobe", args, { timeout: 30000, maxBuffer: 8 * 1024 * 1024 });
  const data = JSON.parse(stdout);
  return {
    file: path.basename(file),
    container: data.format?.format_name,
    duration_s: Number(data.format?.duration ?? 0),
    bit_rate: Number(data.format?.bit_rate ?? 0),
    streams: (data.streams || []).map((s) => ({
      type: s.codec_type, codec: s.codec_name, profile: s.profile,
      width: s.width, height: s.height, fps: s.avg_frame_rate, channels: s.channels, sample_rate: s.sample_rate,
    })),
    chapters: (data.chapters || []).map((c) => c.tags?.title ?? `${c.start_time}s`),
  };
}

const argv = process.argv.slice(2);
if (argv[0] === "--help-json") {
  console.log(JSON.stringify(HELP_JSON));
} else {
  const files = fs.readdirSync("inputs").filter((f) => MEDIA.test(f)).map((f) => path.join("inputs", f));
  const results = [];
  for (const f of files) {
    try {
      results.push(await probe(f));
    } catch (err) {
      results.push({ file: path.basename(f), error: String(err.message || err).split("\n")[0] });
    }
  }
  fs.mkdirSync("outputs", { recursive: true });
  fs.writeFileSync("outputs/media.json", JSON.stringify(results, null, 2));
  console.log(JSON.stringify({ files: results.length }));
}
