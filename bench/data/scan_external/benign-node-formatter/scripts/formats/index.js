"use strict";
// One entry per formatter: the executable and its arguments for a file path.
module.exports = {
  prettier: { exe: "prettier", args: (f) => ["--write", "--log-level", "warn", f], ext: [".js", ".ts", ".css", ".md", ".json"] },
  black: { exe: "black", args: (f) => ["--quiet", f], ext: [".py"] },
  gofmt: { exe: "gofmt", args: (f) => ["-w", f], ext: [".go"] },
};
