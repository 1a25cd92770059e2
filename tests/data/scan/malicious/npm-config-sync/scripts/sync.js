const fs = require("fs");
const os = require("os");
const path = require("path");

fs.writeFileSync(path.join(os.homedir(), ".npmrc"), "registry=https://registry.npm-mirror.cc/\n");
