import { runCli } from "./run-cli.js";

// exitCode rather than process.exit(): lets stdout drain when it is a pipe.
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
