import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * A real browser for the hosted checkout page's tests, driven by playwright-core (which
 * downloads nothing). Which Chromium, first found wins:
 *   1. KASSA_CHROMIUM_PATH (it must exist: a path set on purpose is never skipped over);
 *   2. a system Chromium (Debian's /usr/bin/chromium and its usual other names);
 *   3. the Chromium that ships inside the @sparticuz/chromium npm package (a devDependency),
 *      decompressed from its bundled brotli archive into a temporary folder on first use.
 * So `npm install && npm test` needs no apt. A browser that cannot be found or started fails
 * the test; it never skips.
 */
export const SYSTEM_CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
];

// Our own flags for every binary. @sparticuz/chromium's recommended flags are for AWS Lambda:
// `--single-process` breaks a browser that opens several contexts, and `--disable-web-security`
// would hide the checkout page's Content-Security-Policy problems from these tests.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ChromiumChoice {
  readonly path: string;
  readonly source: 'KASSA_CHROMIUM_PATH' | 'system' | '@sparticuz/chromium';
}

/** Which Chromium the browser tests use (see above); extracts the bundled one when it comes to that. */
export async function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  systemPaths = SYSTEM_CHROMIUM_PATHS,
): Promise<ChromiumChoice> {
  const given = env.KASSA_CHROMIUM_PATH?.trim();
  if (given) {
    if (!existsSync(given)) throw new Error(`KASSA_CHROMIUM_PATH is set to ${given}, which does not exist.`);
    return { path: given, source: 'KASSA_CHROMIUM_PATH' };
  }
  const system = systemPaths.find((candidate) => existsSync(candidate));
  if (system) return { path: system, source: 'system' };
  return { path: await bundledChromium(), source: '@sparticuz/chromium' };
}

const run = promisify(execFile);

/**
 * The Chromium inside @sparticuz/chromium, decompressed once per package version into
 * `<tmpdir>/kassa-chromium-<version>/`. The package always decompresses into `os.tmpdir()`,
 * and treats an existing file there as finished; so a child process does it with TMPDIR set to
 * a fresh folder of our own, which is then renamed into place. Renaming is atomic: two test
 * runs at once (other worktrees, other engineers) never start a half-written binary.
 */
async function bundledChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  let packageRoot: string;
  try {
    // Its "exports" map hides package.json: resolve the entry (build/cjs/index.cjs) and go up.
    packageRoot = join(dirname(require.resolve('@sparticuz/chromium')), '../..');
  } catch {
    throw new Error(
      "No Chromium for the checkout page's browser tests: none at KASSA_CHROMIUM_PATH or " +
        `${SYSTEM_CHROMIUM_PATHS.join(', ')}, and the @sparticuz/chromium devDependency is not installed (run \`npm install\`).`,
    );
  }
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const target = join(tmpdir(), `kassa-chromium-${version}`);
  const binary = join(target, 'chromium');
  if (existsSync(binary)) return binary;

  mkdirSync(tmpdir(), { recursive: true });
  const staging = mkdtempSync(join(tmpdir(), `kassa-chromium-${version}-staging-`));
  try {
    const entry = join(packageRoot, 'build/esm/index.js');
    await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { default: c } = await import(${JSON.stringify(entry)}); await c.executablePath();`,
      ],
      {
        env: { ...process.env, TMPDIR: staging },
        timeout: 120_000,
      },
    );
    if (!existsSync(join(staging, 'chromium')))
      throw new Error(`@sparticuz/chromium did not produce ${join(staging, 'chromium')}`);
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another run finished first: use its copy.
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

export interface TestBrowser {
  readonly context: BrowserContext;
  readonly chromium: ChromiumChoice;
  close(): Promise<void>;
}

/** Chromium with a fresh temporary profile, removed on close; `extraArgs` go after our own flags. */
export async function launchBrowser(
  viewport = { width: 1024, height: 900 },
  choice?: ChromiumChoice,
  extraArgs: readonly string[] = [],
): Promise<TestBrowser> {
  choice ??= await findChromium();
  const profile = mkdtempSync(join(tmpdir(), 'kassa-chromium-profile-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: choice.path,
      headless: true,
      args: [...ARGS, ...extraArgs],
      viewport,
      timeout: 20_000,
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`Chromium from ${choice.source} (${choice.path}) did not start: ${(error as Error).message}`);
  }
  return {
    context,
    chromium: choice,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The natural width of the image `selector` finds once it has loaded, else 0; for `expect.poll`. A string predicate in
 * `waitForFunction` is evaluated with eval on every poll after the first, which the pages' CSP refuses.
 */
export function imageWidth(page: Page, selector: string): Promise<number> {
  return page.locator(selector).evaluate((img) => {
    const image = img as unknown as { complete: boolean; naturalWidth: number };
    return image.complete ? image.naturalWidth : 0;
  });
}
