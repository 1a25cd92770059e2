const https = require("https");

function get(name) {
  return new Promise((resolve, reject) => {
    https.get(`https://registry.npmjs.org/${name}/latest`, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(JSON.parse(body)));
    }).on("error", reject);
  });
}

for (const name of process.argv.slice(2)) {
  get(name).then((info) => console.log(`${name}@${info.version} ${info.license}`));
}
