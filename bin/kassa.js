#!/usr/bin/env node
// The `kassa` operator CLI. It runs the compiled code in dist/ (built by `npm install`
// through the "prepare" script, or by `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('kassa: dist/ is missing; run `npm install` or `npm run build` first.\n');
  process.exit(1);
}
await import(entry.href);
