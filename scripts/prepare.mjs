// npm runs "prepare" on every `npm install` / `npm ci` of this checkout, also with
// --omit=dev. With the devDependencies it builds dist/ (Prisma client, tsc). Without them
// (a production install) there is no compiler: it uses the dist/ that `npm run build` made
// before the copy was shipped, and says so. docs/operations.md#running-in-production.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Build only with every devDependency installed. TypeScript and the Prisma CLI alone do not
// tell: npm installs them as optional peers of @prisma/client and viem even with --omit=dev,
// where the type definitions the build needs (@types/*) are missing.
const { devDependencies } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const compilerInstalled = Object.keys(devDependencies).every((name) =>
  existsSync(path.join(root, 'node_modules', name, 'package.json')),
);
const built =
  existsSync(path.join(root, 'dist/cli/main.js')) && existsSync(path.join(root, 'dist/generated/prisma/client.js'));

if (compilerInstalled) {
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const build = spawnSync(npm[0], [...npm.slice(1), 'run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(build.status ?? 1);
} else if (built) {
  process.stderr.write(
    'kassa: installed without devDependencies, so nothing is compiled: using the dist/ built before by `npm run build`.\n',
  );
} else {
  process.stderr.write(
    'kassa: cannot build: the devDependencies (TypeScript, Prisma) are not installed and there is no dist/. ' +
      'Build where they are (`npm ci && npm run build`) and ship dist/ with the checkout; see docs/operations.md#running-in-production.\n',
  );
  process.exit(1);
}
