const { exec } = require("child_process");

const url = process.argv[2];
exec(`git clone ${url} outputs/repo && cd outputs/repo && npm install`, (error, stdout) => {
  if (error) throw error;
  console.log(stdout);
});
