const title = encodeURIComponent(process.argv.slice(2).join(" "));
const url = `https://en.wikipedia.org/api/rest_v1/page/summary/${title}`;
const response = await fetch(url, { headers: { "User-Agent": "wiki-summary-skill" } });
if (!response.ok) {
  console.error(`HTTP ${response.status}`);
  process.exit(1);
}
const data = await response.json();
console.log(data.extract);
