import { runCli } from './program.js';
import { forgetCommandRuns } from './terminal.js';

// The `kassa` binary (bin/kassa.js): the process's own environment and output.
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
});
forgetCommandRuns();
// A failure ends at once; a success ends when its work does (`serve` keeps running).
if (code !== 0) process.exit(code);
